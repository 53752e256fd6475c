import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

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
