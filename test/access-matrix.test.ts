/**
 * Who may call what, generated from the contracts: every operation of openapi.yaml and every RPC
 * of every service in proto/ is called with no credential, a provider key, a valid JWT without
 * the admin position and an admin JWT, and must answer exactly as the surface table (README,
 * docs/architecture.md) allows. The table is written out here, not read from src/edge/surfaces.ts,
 * and a path or service the table does not know fails the test: a new endpoint cannot be added
 * without its access being decided and checked.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { CommonService } from "../generated/proto/leadprovider/v1/common_service_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

type Rule = "provider_key" | "admin_jwt" | "any_jwt" | "workflow_jwt" | "portal_session" | "publishable_key" | "open";
type Credential = "none" | "provider_key" | "jwt" | "admin_jwt" | "portal_session" | "publishable_key";
const CREDENTIALS: readonly Credential[] = [
  "none",
  "provider_key",
  "jwt",
  "admin_jwt",
  "portal_session",
  "publishable_key",
];

/** The surface table: which credentials each rule lets through; the others are refused. */
const ALLOWED: Record<Rule, readonly Credential[]> = {
  provider_key: ["provider_key"],
  admin_jwt: ["admin_jwt"],
  any_jwt: ["jwt", "admin_jwt"],
  // The lead-processing claim defaults to the admin position.
  workflow_jwt: ["admin_jwt"],
  // A provider portal user's session cookie, and nothing else.
  portal_session: ["portal_session"],
  // The drop-in form's key, from an allowed origin; it opens nothing else (sent as a bearer there).
  publishable_key: ["publishable_key"],
  open: ["none", "provider_key", "jwt", "admin_jwt", "portal_session", "publishable_key"],
};

/** REST path prefixes → rule (README "Security", docs/architecture.md). */
const REST_RULES: readonly [prefix: string, rule: Rule][] = [
  ["/api/v1/public/", "provider_key"],
  ["/api/v1/lead_providers/", "admin_jwt"],
  ["/api/v1/admin/", "admin_jwt"],
  ["/api/v1/common/", "any_jwt"],
  // Signing in, out, reading or accepting an invite and resetting a password need no credential.
  ["/api/v1/portal/sign_in/", "open"],
  ["/api/v1/portal/sign_out/", "open"],
  ["/api/v1/portal/invite/", "open"],
  ["/api/v1/portal/invite/accept/", "open"],
  ["/api/v1/portal/password_reset/", "open"],
  ["/api/v1/portal/password_reset/confirm/", "open"],
  ["/api/v1/portal/", "portal_session"],
  ["/api/v1/forms/", "publishable_key"],
  ["/healthz", "open"],
  ["/readyz", "open"],
];

/** RPC services → rule. */
const RPC_RULES: Record<string, Rule> = {
  "leadprovider.v1.PublicLeadService": "provider_key",
  "leadprovider.v1.ProviderService": "admin_jwt",
  "leadprovider.v1.CommonService": "any_jwt",
  "leadprovider.v1.LeadWorkflowService": "workflow_jwt",
};
const SERVICES: readonly DescService[] = [PublicLeadService, ProviderService, CommonService, LeadWorkflowService];

/** What the contract's `security` says, so the table and openapi.yaml cannot drift apart. */
const SCHEME_RULES: Record<string, readonly Rule[]> = {
  ProviderApiKey: ["provider_key"],
  AdminJwt: ["admin_jwt", "any_jwt"],
  PortalSession: ["portal_session"],
  PublishableKey: ["publishable_key"],
  none: ["open"],
};

const ROOT = join(import.meta.dirname, "..");
const PORTAL_PASSWORD = "copper violet tundra harbor 42";
const spec = YAML.parse(readFileSync(join(ROOT, "openapi/openapi.yaml"), "utf8")) as Json;
const ref = (o: Json): Json => (o.$ref ? ref(spec.components.parameters[o.$ref.split("/").pop()]) : o);
const firstExample = (p: Json): unknown =>
  (Object.values(p.examples ?? {})[0] as Json | undefined)?.value ?? p.schema?.examples?.[0] ?? p.example;

interface RestOperation {
  readonly id: string;
  readonly method: string;
  readonly url: string;
  readonly scheme: string;
  readonly rule: Rule | undefined;
}

const REST_OPERATIONS: readonly RestOperation[] = Object.entries(spec.paths as Record<string, Json>).flatMap(
  ([path, item]) =>
    ["get", "post", "patch", "put", "delete"]
      .filter((m) => item[m])
      .map((method) => {
        const op = item[method] as Json;
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(ref);
        let url = path;
        for (const p of params.filter((x) => x.in === "path"))
          url = url.replace(`{${p.name}}`, String(firstExample(p)));
        const query = params
          .filter((p) => p.in === "query" && p.required)
          .map((p) => `${p.name}=${encodeURIComponent(String(firstExample(p)))}`);
        if (query.length > 0) url += `?${query.join("&")}`;
        const security = (op.security ?? spec.security ?? []) as Json[];
        return {
          id: op.operationId as string,
          method: method.toUpperCase(),
          url,
          scheme: security.length === 0 ? "none" : (Object.keys(security[0] ?? {})[0] ?? "none"),
          // An open row under /api/ is one path; the others are prefixes.
          rule: REST_RULES.find(([prefix, rule]) =>
            rule === "open" && prefix.startsWith("/api/") ? path === prefix : path.startsWith(prefix),
          )?.[1],
        };
      }),
);

interface RpcMethod {
  readonly service: DescService;
  readonly name: string;
  readonly streaming: boolean;
}
const RPC_METHODS: readonly RpcMethod[] = SERVICES.flatMap((service) =>
  service.methods.map((m) => ({ service, name: m.localName, streaming: m.methodKind === "server_streaming" })),
);

describe("the access matrix, generated from openapi.yaml and proto/", () => {
  let t: TestApp;
  const tokens = {} as Record<Credential, string | undefined>;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "100000" });
    tokens.none = undefined;
    tokens.provider_key = (await t.provider()).key;
    tokens.jwt = await t.token({ position: "AGENT" });
    tokens.admin_jwt = await t.token();
    // A portal user to sign in as (each REST case signs in afresh: sign_out ends the session).
    const invited = (await (
      await t.call("POST", `/api/v1/lead_providers/${(await t.provider()).id}/portal_users/`, {
        auth: tokens.admin_jwt,
        body: { email: "matrix@example.com", name: "Matrix Person" },
      })
    ).json()) as { invite_url: string };
    const token = invited.invite_url.split("#invite=")[1];
    // A publishable key whose form allows this service's own origin (a loopback: a test key).
    const formProvider = await t.provider();
    const issued = await t.call("POST", `/api/v1/lead_providers/${formProvider.id}/publishable_key/`, {
      auth: tokens.admin_jwt,
      body: { mode: "test" },
    });
    tokens.publishable_key = ((await issued.json()) as Json).publishable_key as string;
    await t.call("PUT", `/api/v1/lead_providers/${formProvider.id}/form_settings/`, {
      auth: tokens.admin_jwt,
      body: { allowed_origins: [t.url], consent_text: null, enabled: true },
    });
    await t.call("POST", "/api/v1/portal/invite/accept/", {
      body: { token, password: PORTAL_PASSWORD },
      headers: { origin: t.url },
    });
    // A second person of the same provider: a member, whom the team routes refuse.
    const member = (await (
      await t.call("POST", "/api/v1/portal/users/", {
        body: { email: "matrix.member@example.com", name: "Matrix Member" },
        headers: { origin: t.url, cookie: await portalCookie() },
      })
    ).json()) as { invite_url: string; user: { role: string } };
    expect(member.user.role).toBe("member");
    await t.call("POST", "/api/v1/portal/invite/accept/", {
      body: { token: member.invite_url.split("#invite=")[1], password: PORTAL_PASSWORD },
      headers: { origin: t.url },
    });
  });

  /** A fresh portal session's cookie. */
  async function portalCookie(): Promise<string> {
    const res = await t.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: "matrix@example.com", password: PORTAL_PASSWORD },
      headers: { origin: t.url },
    });
    expect(res.status).toBe(200);
    return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }
  afterAll(() => t.stop());

  it("knows every operation and every service, and the contract's security agrees with the table", () => {
    expect(REST_OPERATIONS.length).toBeGreaterThan(20);
    for (const op of REST_OPERATIONS) {
      expect(op.rule, `${op.method} ${op.url} is in no row of the surface table`).toBeDefined();
      expect(SCHEME_RULES[op.scheme], `${op.id}: security ${op.scheme}`).toContain(op.rule);
    }
    // Every service declared in proto/ is in the table (a new .proto service fails here).
    const declared = readdirSync(join(ROOT, "proto/leadprovider/v1"))
      .filter((f) => f.endsWith(".proto"))
      .flatMap((f) =>
        [...readFileSync(join(ROOT, "proto/leadprovider/v1", f), "utf8").matchAll(/^service (\w+) \{/gm)].map(
          (m) => `leadprovider.v1.${m[1]}`,
        ),
      );
    expect(declared.sort()).toEqual(Object.keys(RPC_RULES).sort());
    expect(SERVICES.map((s) => s.typeName).sort()).toEqual(Object.keys(RPC_RULES).sort());
  });

  it.each(REST_OPERATIONS)("REST $method $url ($id)", async (op) => {
    const rule = op.rule as Rule;
    for (const credential of CREDENTIALS) {
      const token = tokens[credential];
      // Every call carries this service's Origin: the portal refuses changes from any other.
      const cookie = credential === "portal_session" ? await portalCookie() : undefined;
      const res = await t.call(op.method, op.url, {
        ...(token !== undefined && { auth: token }),
        ...(op.method !== "GET" && { body: {} }),
        headers: {
          origin: t.url,
          ...(cookie && { cookie }),
          // Every credential also travels where the form reads its key: only a publishable key opens it.
          ...(token !== undefined && { "x-publishable-key": token }),
        },
      });
      const refused = res.status === 401 || res.status === 403;
      const allowed = ALLOWED[rule].includes(credential);
      expect(refused, `${credential}: ${res.status} ${await res.text()}`).toBe(!allowed);
      if (!allowed) {
        // A credential of the wrong kind is 401; the right kind without the position is 403.
        const wantsJwt = rule === "admin_jwt" || rule === "workflow_jwt";
        expect(res.status, credential).toBe(wantsJwt && credential === "jwt" ? 403 : 401);
      }
      expect(res.status, `${credential}: never a server error`).toBeLessThan(500);
    }
  });

  const TEAM_OPERATIONS = REST_OPERATIONS.filter((op) => op.url.startsWith("/api/v1/portal/users/"));

  it("refuses a member's session on every team route with 403 portal_admin_required, before anything else", async () => {
    expect(TEAM_OPERATIONS.map((op) => op.id).sort()).toEqual([
      "disablePortalTeammate",
      "invitePortalTeammate",
      "listPortalTeam",
      "reinvitePortalTeammate",
      "setPortalTeammateRole",
    ]);
    const signedIn = await t.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: "matrix.member@example.com", password: PORTAL_PASSWORD },
      headers: { origin: t.url },
    });
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    for (const op of TEAM_OPERATIONS) {
      const res = await t.call(op.method, op.url, {
        ...(op.method !== "GET" && { body: { email: "x@example.com", name: "X" } }),
        headers: { origin: t.url, cookie },
      });
      expect(res.status, op.id).toBe(403);
      const problem = (await res.json()) as Json;
      expect(problem.code, op.id).toBe("portal_admin_required");
      expect(res.headers.get("content-type"), op.id).toContain("application/problem+json");
    }
  });

  it.each(RPC_METHODS)("RPC $service.typeName/$name", async (m) => {
    const rule = RPC_RULES[m.service.typeName] as Rule;
    const client = connectClient(m.service, t.port, "grpc") as unknown as Record<
      string,
      (req: object, opts: object) => Promise<unknown> | AsyncIterable<unknown>
    >;
    for (const credential of CREDENTIALS) {
      const token = tokens[credential];
      const signal = AbortSignal.timeout(1500);
      const opts = { ...(token !== undefined ? bearer(token) : {}), signal };
      let code: Code | undefined;
      try {
        const call = client[m.name]?.({}, opts);
        if (m.streaming) {
          for await (const _ of call as AsyncIterable<unknown>) break;
        } else await call;
      } catch (err) {
        code = ConnectError.from(err).code;
      }
      const allowed = ALLOWED[rule].includes(credential);
      const refused = code === Code.Unauthenticated || code === Code.PermissionDenied;
      expect(refused, `${credential}: ${code === undefined ? "OK" : Code[code]}`).toBe(!allowed);
      if (!allowed) {
        const wantsJwt = rule === "admin_jwt" || rule === "workflow_jwt";
        expect(code, credential).toBe(wantsJwt && credential === "jwt" ? Code.PermissionDenied : Code.Unauthenticated);
      }
      expect([Code.Internal, Code.Unknown, Code.Unimplemented], `${credential}: not a server error`).not.toContain(
        code,
      );
    }
  });
});
