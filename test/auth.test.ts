/**
 * Who may call what: JWTs (HS256 on the configured secret, or asymmetric from a JWKS URL) for the
 * management, internal and workflow surfaces, API keys for the Public API. A JWT must carry an
 * expiry within its maximum lifetime and must not be issued in the future; the workflow service
 * also wants the configured lead-processing claim.
 */
import { createSecretKey } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code } from "@connectrpc/connect";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { DEV_JWT_SECRET } from "../src/config.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, rejection } from "./helpers/grpc.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";

const MANAGEMENT_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ["GET", "/api/v1/lead_providers/"],
  ["POST", "/api/v1/lead_providers/create/"],
  ["GET", "/api/v1/lead_providers/1/"],
  ["PATCH", "/api/v1/lead_providers/1/"],
  ["POST", "/api/v1/lead_providers/1/generate_api_key/"],
];

describe.each(BACKENDS)("JWT and API-key rules on every management and internal route ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp(backend, { JWT_ISSUER: "https://auth.test", JWT_AUDIENCE: "lead-provider-api" });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  const body = (method: string) => (method === "GET" ? {} : { body: { name: "x" } });

  it.each(MANAGEMENT_ROUTES)(
    "%s %s: 401 with WWW-Authenticate for a missing token or an API key",
    async (method, path) => {
      for (const auth of [undefined, key]) {
        const res = await t.call(method, path, { ...body(method), ...(auth && { auth }) });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
        expect(await res.json()).toMatchObject({ status: 401, code: "invalid_token" });
      }
    },
  );

  it.each(MANAGEMENT_ROUTES)("%s %s: 403 for a valid token without the admin position", async (method, path) => {
    const res = await t.call(method, path, { ...body(method), auth: await t.token({ position: "AGENT" }) });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "forbidden" });
  });

  it("refuses bad signatures, alg none, expired tokens, and wrong issuer or audience", async () => {
    const good = await t.token();
    const [h, p] = good.split(".");
    const tampered = `${h}.${p}.${"A".repeat(43)}`;
    const none = new UnsecuredJWT({ position: "ADMIN" })
      .setSubject("mallory")
      .setIssuer("https://auth.test")
      .setAudience("lead-provider-api")
      .setExpirationTime("1h")
      .encode();
    const expired = await t.token({ exp: Math.floor(Date.now() / 1000) - 120 });
    const wrongIssuer = await t.token({ iss: "https://evil.test" });
    const wrongAudience = await t.token({ aud: "someone-else" });
    const otherSecret = await new SignJWT({ position: "ADMIN" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("mallory")
      .setIssuer("https://auth.test")
      .setAudience("lead-provider-api")
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("another-secret-another-secret-another-secret"));
    expect((await t.call("GET", "/api/v1/lead_providers/", { auth: good })).status).toBe(200);
    for (const token of [tampered, none, expired, wrongIssuer, wrongAudience, otherSecret, "not.a.jwt"]) {
      const res = await t.call("GET", "/api/v1/lead_providers/", { auth: token });
      expect(res.status, token).toBe(401);
    }
  });

  it("serves the states list to any valid JWT and 401 to an API key", async () => {
    const agent = await t.call("GET", "/api/v1/common/states/", { auth: await t.token({ position: "AGENT" }) });
    expect(agent.status).toBe(200);
    const states = (await agent.json()) as Json[];
    expect(states).toHaveLength(55);
    expect(states[0]).toEqual({ id: 1, code: "AL", name: "Alabama" });
    expect(states).toContainEqual({ id: 9, code: "DC", name: "District of Columbia" });
    const withKey = await t.call("GET", "/api/v1/common/states/", { auth: key });
    expect(withKey.status).toBe(401);
    expect((await t.call("GET", "/api/v1/common/states/")).status).toBe(401);
  });

  it("refuses a JWT on the Public API", async () => {
    const res = await t.call("GET", "/api/v1/public/leads/x/", { auth: await t.token() });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "invalid_api_key" });
  });
});

describe("asymmetric JWTs from a JWKS URL", () => {
  let jwks: Server;
  let t: TestApp;
  let privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
  beforeAll(async () => {
    const pair = await generateKeyPair("RS256");
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    t = await startTestApp({ name: "pglite" }, { JWT_JWKS_URL: url, JWT_JWKS_ALGORITHMS: "RS256" });
  });
  afterAll(async () => {
    await t.stop();
    jwks.close();
  });

  it("accepts an RS256 token signed by the JWKS key and refuses an HS256 one", async () => {
    const rs = await new SignJWT({ position: "ADMIN" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setSubject("svc")
      .setExpirationTime("5m")
      .sign(privateKey);
    expect((await t.call("GET", "/api/v1/lead_providers/", { auth: rs })).status).toBe(200);
    const hs = await t.token(); // signed with the development HS256 secret
    expect((await t.call("GET", "/api/v1/lead_providers/", { auth: hs })).status).toBe(401);
  });
});

describe("a JWT's lifetime and the lead-processing claim", () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(PG);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("refuses JWTs without exp, living too long, issued in the future, or with padded base64url", async () => {
    const secret = createSecretKey(Buffer.from(DEV_JWT_SECRET, "utf8"));
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Json) =>
      new SignJWT({ position: "ADMIN", sub: "attacker", ...claims }).setProtectedHeader({ alg: "HS256" }).sign(secret);
    const good = await sign({ iat: now, exp: now + 3600 });
    expect((await t.call("GET", P, { auth: good })).status).toBe(200);
    for (const [label, token] of [
      ["no exp", await sign({ iat: now })],
      ["100 years", await sign({ iat: now, exp: now + 100 * 365 * 86400 })],
      ["iat a year ahead", await sign({ iat: now + 365 * 86400, exp: now + 365 * 86400 + 60 })],
      ["no iat, exp in 2 days", await sign({ exp: now + 2 * 86400 })],
      ["padded signature", `${good}=`],
    ] as const) {
      const res = await t.call("GET", P, { auth: token });
      expect(res.status, label).toBe(401);
    }
  });

  it("refuses the workflow service to a valid JWT without the lead-processing claim", async () => {
    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const agent = await t.token({ position: "AGENT" });
    const refused = await rejection(workflow.listLeads({ state: 1 }, bearer(agent)));
    expect(refused.code).toBe(Code.PermissionDenied);
    const moved = await rejection(workflow.transitionLead({ leadId: 1n, toState: 2 }, bearer(agent)));
    expect(moved.code).toBe(Code.PermissionDenied);
    await expect(workflow.listLeads({ state: 1 }, bearer(admin))).resolves.toBeDefined();
  });
});

describe("JWT_MAX_LIFETIME_SECONDS", () => {
  it("accepts a 2-day token with JWT_MAX_LIFETIME_SECONDS=172800", async () => {
    const t = await startTestApp(PG, { JWT_MAX_LIFETIME_SECONDS: "172800" });
    try {
      const token = await t.token({}, { expiresIn: "47h" });
      expect((await t.call("GET", P, { auth: token })).status).toBe(200);
      expect((await t.call("GET", P, { auth: await t.token({}, { expiresIn: "49h" }) })).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("JWT_WORKFLOW_CLAIM and JWT_WORKFLOW_VALUE", () => {
  it("lets a token whose scope names the configured value use the workflow service", async () => {
    const t = await startTestApp(PG, { JWT_WORKFLOW_CLAIM: "scope", JWT_WORKFLOW_VALUE: "leads:process" });
    try {
      const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
      const processor = await t.token({ position: "SYSTEM", scope: "leads:read leads:process" });
      await expect(workflow.listLeads({ state: 1 }, bearer(processor))).resolves.toBeDefined();
      const admin = await t.token();
      expect((await rejection(workflow.listLeads({ state: 1 }, bearer(admin)))).code).toBe(Code.PermissionDenied);
    } finally {
      await t.stop();
    }
  }, 150_000);
});
