import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyMode, ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

const P = "/api/v1/lead_providers/";

describe.each(BACKENDS)("Management API and provider keys ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let offsetMs = 0;
  const clock = () => new Date(Date.now() + offsetMs);
  const json = async (res: Response) => (await res.json()) as Json;
  const unique = () => `Carrier ${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    t = await startTestApp(backend, {}, { now: clock });
    admin = await t.token({}, { sub: "alice@ops" });
  });
  afterAll(() => t.stop());

  it("creates a provider with the documented defaults and refuses a name that differs only in case", async () => {
    const name = unique();
    const res = await t.call("POST", `${P}create/`, {
      auth: admin,
      body: { name, contact_email: "ops@carrier.example" },
    });
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({
      name,
      contact_email: "ops@carrier.example",
      is_active: true,
      rate_limit_per_minute: 60,
      rate_limit_per_day: 2000,
      webhook_url: null,
      api_key: null,
    });
    const again = await t.call("POST", `${P}create/`, { auth: admin, body: { name: name.toUpperCase() } });
    expect(again.status).toBe(400);
    expect(await json(again)).toMatchObject({ code: "duplicate_provider_name", errors: [{ field: "name" }] });
  });

  it("validates provider fields and rejects unknown ones", async () => {
    const res = await t.call("POST", `${P}create/`, {
      auth: admin,
      body: { name: "", rate_limit_per_minute: 0, webhook_url: "ftp://x", colour: "red" },
    });
    expect(res.status).toBe(400);
    expect((await json(res)).errors.map((e: Json) => e.field).sort()).toEqual(
      ["colour", "name", "rate_limit_per_minute", "webhook_url"].sort(),
    );
  });

  it("lists providers page by page with search and is_active filters", async () => {
    const tag = `Pager${Date.now()}`;
    for (let i = 0; i < 5; i++) {
      await t.call("POST", `${P}create/`, { auth: admin, body: { name: `${tag} ${i}`, is_active: i % 2 === 0 } });
    }
    const first = await json(await t.call("GET", `${P}?search=${tag.toLowerCase()}&page_size=2`, { auth: admin }));
    expect(first.count).toBe(5);
    expect(first.results.map((p: Json) => p.name)).toEqual([`${tag} 0`, `${tag} 1`]);
    expect(first.previous).toBeNull();
    expect(first.next).toMatch(/^\/api\/v1\/lead_providers\/\?/); // relative: never built from Host
    const next = new URL(first.next, t.url);
    expect(next.searchParams.get("page")).toBe("2");
    const second = await json(await t.call("GET", `${next.pathname}${next.search}`, { auth: admin }));
    expect(second.results.map((p: Json) => p.name)).toEqual([`${tag} 2`, `${tag} 3`]);
    expect(second.previous).not.toBeNull();
    const active = await json(await t.call("GET", `${P}?search=${tag}&is_active=true`, { auth: admin }));
    expect(active.results.map((p: Json) => p.name)).toEqual([`${tag} 0`, `${tag} 2`, `${tag} 4`]);
    const tooBig = await t.call("GET", `${P}?page_size=101`, { auth: admin });
    expect(tooBig.status).toBe(400);
    expect((await json(tooBig)).errors[0].field).toBe("page_size");
  });

  it("changes only the fields a PATCH sends; null clears; unknown id is 404", async () => {
    const { id } = await t.provider(unique(), { notes: "keep me", contact_email: "a@b.example" });
    const res = await t.call("PATCH", `${P}${id}/`, { auth: admin, body: { rate_limit_per_minute: 120, notes: null } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      rate_limit_per_minute: 120,
      rate_limit_per_day: 2000,
      notes: null,
      contact_email: "a@b.example",
    });
    expect((await t.call("PATCH", `${P}999999/`, { auth: admin, body: { notes: "x" } })).status).toBe(404);
    expect((await t.call("GET", `${P}999999/`, { auth: admin })).status).toBe(404);
    expect((await t.call("PATCH", `${P}${id}/`, { auth: admin, body: {} })).status).toBe(400);
  });

  it("issues a key that works at once, shows it again to an admin, and masks it in the list", async () => {
    const { id, key } = await t.provider(unique());
    expect(key).toMatch(/^lp_live_[0-9A-Za-z]{49}$/);
    expect((await t.call("POST", "/api/v1/public/leads/", { auth: key, body: leadBody() })).status).toBe(201);
    const detail = await json(await t.call("GET", `${P}${id}/`, { auth: admin }));
    expect(detail.api_key_value).toBe(key);
    expect(detail.api_key.masked).toBe(`${key.slice(0, 12)}…${key.slice(-4)}`);
    const list = await json(await t.call("GET", `${P}?search=${encodeURIComponent(detail.name)}`, { auth: admin }));
    expect(JSON.stringify(list)).not.toContain(key);
    expect(list.results[0].api_key.masked).toBe(detail.api_key.masked);
  });

  it("reveals exactly the key mode asked for, audited per mode (REST and gRPC)", async () => {
    const p = await t.provider();
    const issued = await t.call("POST", `${P}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    const testKey = ((await issued.json()) as Json).api_key as string;

    const res = await t.call("GET", `${P}${p.id}/api_key/?mode=live`, { auth: admin });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ mode: "live", api_key: p.key });
    expect(text).not.toContain(testKey);

    const rpc = await connectClient(ProviderService, t.port, "grpc").revealApiKey(
      { id: BigInt(p.id), mode: ApiKeyMode.TEST },
      bearer(admin),
    );
    expect(rpc).toMatchObject({ mode: ApiKeyMode.TEST, apiKey: testKey });

    const audit = (await (
      await t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: admin })
    ).json()) as Json;
    const modes = (audit.results as Json[]).filter((e) => e.action === "api_key.viewed").map((e) => e.details.modes);
    expect(modes).toEqual(expect.arrayContaining([["live"], ["test"]]));

    expect((await t.call("GET", `${P}${p.id}/api_key/`, { auth: admin })).status).toBe(400);
    expect((await t.call("GET", `${P}${p.id}/api_key/?mode=both`, { auth: admin })).status).toBe(400);
    expect((await t.call("GET", `${P}999999999/api_key/?mode=live`, { auth: admin })).status).toBe(404);
    expect((await t.call("GET", `${P}${p.id}/api_key/?mode=live`, { auth: p.key })).status).toBe(401);
    // GET provider keeps its published contract: both keys.
    const full = (await (await t.call("GET", `${P}${p.id}/`, { auth: admin })).json()) as Json;
    expect([full.api_key_value, full.test_api_key_value]).toEqual([p.key, testKey]);
  });

  it("stops the old key at rotation, or after the grace period asked for", async () => {
    const { id, key: first } = await t.provider(unique());
    const rotate = (body?: Json) =>
      t.call("POST", `${P}${id}/generate_api_key/`, { auth: admin, ...(body && { body }) });
    const second = (await json(await rotate())).api_key as string;
    const get = (key: string) => t.call("GET", "/api/v1/public/leads/none/", { auth: key });
    expect((await get(first)).status).toBe(401);
    expect((await get(second)).status).toBe(404);

    const rolled = await json(await rotate({ previous_key_grace_seconds: 60 }));
    expect(rolled.previous_key_expires_at).not.toBeNull();
    expect((await get(second)).status).toBe(404); // still inside its grace period
    expect((await get(rolled.api_key)).status).toBe(404);
    offsetMs = 61_000;
    try {
      expect((await get(second)).status).toBe(401);
      expect((await get(rolled.api_key)).status).toBe(404);
    } finally {
      offsetMs = 0;
    }
  });

  it("refuses an expired key with expired_api_key, and every key of a deactivated provider", async () => {
    const { id } = await t.provider(unique());
    const expiring = await json(
      await t.call("POST", `${P}${id}/generate_api_key/`, {
        auth: admin,
        body: { expires_at: new Date(Date.now() + 30_000).toISOString() },
      }),
    );
    const get = () => t.call("GET", "/api/v1/public/leads/none/", { auth: expiring.api_key });
    expect((await get()).status).toBe(404);
    offsetMs = 31_000;
    try {
      const res = await get();
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(await json(res)).toMatchObject({ code: "expired_api_key" });
    } finally {
      offsetMs = 0;
    }
    const other = await t.provider(unique());
    expect((await t.call("GET", "/api/v1/public/leads/none/", { auth: other.key })).status).toBe(404);
    await t.call("PATCH", `${P}${other.id}/`, { auth: admin, body: { is_active: false } });
    const refused = await t.call("GET", "/api/v1/public/leads/none/", { auth: other.key });
    expect(refused.status).toBe(401);
    expect(await json(refused)).toMatchObject({ code: "invalid_api_key" });
  });

  it("records last_used_at once a minute per key, not on every request", async () => {
    const { id, key } = await t.provider(unique());
    const lastUsed = async () =>
      (await json(await t.call("GET", `${P}${id}/`, { auth: admin }))).api_key.last_used_at as string | null;
    expect(await lastUsed()).toBeNull();
    await t.call("GET", "/api/v1/public/leads/none/", { auth: key });
    let first: string | null = null;
    for (let i = 0; i < 50 && first === null; i++) {
      await new Promise((r) => setTimeout(r, 20));
      first = await lastUsed();
    }
    expect(first).not.toBeNull();
    for (let i = 0; i < 5; i++) await t.call("GET", "/api/v1/public/leads/none/", { auth: key });
    await new Promise((r) => setTimeout(r, 100));
    expect(await lastUsed()).toBe(first);
    // A minute later (the service's injected clock), the next use is recorded again, once.
    offsetMs = 61_000;
    try {
      await t.call("GET", "/api/v1/public/leads/none/", { auth: key });
      let second: string | null = first;
      for (let i = 0; i < 50 && second === first; i++) {
        await new Promise((r) => setTimeout(r, 20));
        second = await lastUsed();
      }
      expect(new Date(second ?? 0).getTime()).toBeGreaterThanOrEqual(new Date(first ?? 0).getTime() + 60_000);
      for (let i = 0; i < 3; i++) await t.call("GET", "/api/v1/public/leads/none/", { auth: key });
      await new Promise((r) => setTimeout(r, 100));
      expect(await lastUsed()).toBe(second);
    } finally {
      offsetMs = 0;
    }
  });

  it("refuses an expires_at in the past", async () => {
    const { id } = await t.provider(unique());
    const res = await t.call("POST", `${P}${id}/generate_api_key/`, {
      auth: admin,
      body: { expires_at: "2020-01-01T00:00:00Z" },
    });
    expect(res.status).toBe(400);
    expect((await json(res)).errors[0].field).toBe("expires_at");
  });

  it("keeps no plaintext key anywhere in the database", async () => {
    const { key } = await t.provider(unique());
    const db = t.app.database.db;
    for (const table of ["providers", "api_keys", "audit_log", "leads"] as const) {
      const rows = await db.selectFrom(table).selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain(key);
      expect(JSON.stringify(rows)).not.toContain(key.slice(8, 40));
    }
  });

  it("audits management writes and key views with the admin's subject", async () => {
    const { id } = await t.provider(unique());
    await t.call("GET", `${P}${id}/`, { auth: admin });
    await t.call("PATCH", `${P}${id}/`, { auth: admin, body: { notes: "audited" } });
    const entries = await t.app.database.db
      .selectFrom("audit_log")
      .select(["actor", "action"])
      .where("target_id", "=", String(id))
      .orderBy("id")
      .execute();
    expect(entries.map((e) => e.action)).toEqual([
      "provider.created",
      "api_key.generated",
      "api_key.viewed",
      "provider.updated",
    ]);
    expect(new Set(entries.map((e) => e.actor))).toEqual(new Set(["test-admin", "alice@ops"]));
  });

  it("serves the same management operations over gRPC, admin only", async () => {
    const client = connectClient(ProviderService, t.port, "grpc");
    const name = unique();
    const { provider } = await client.createProvider({ name, rateLimitPerDay: 5000 }, bearer(admin));
    expect(provider).toMatchObject({ name, rateLimitPerMinute: 60, rateLimitPerDay: 5000, isActive: true });
    const issued = await client.generateApiKey({ id: provider?.id ?? 0n }, bearer(admin));
    const got = await client.getProvider({ id: provider?.id ?? 0n }, bearer(admin));
    expect(got.apiKeyValue).toBe(issued.apiKey);
    const updated = await client.updateProvider({ id: provider?.id ?? 0n, notes: "via grpc" }, bearer(admin));
    expect(updated.provider).toMatchObject({ notes: "via grpc", rateLimitPerDay: 5000 });
    const page = await client.listProviders({ search: name }, bearer(admin));
    expect(page.count).toBe(1n);
    const agent = await t.token({ position: "AGENT" });
    const denied = await client.listProviders({}, bearer(agent)).catch((e: unknown) => e as ConnectError);
    expect((denied as ConnectError).code).toBe(Code.PermissionDenied);
    const withKey = await client.listProviders({}, bearer(issued.apiKey)).catch((e: unknown) => e as ConnectError);
    expect((withKey as ConnectError).code).toBe(Code.Unauthenticated);
    const missing = await client.getProvider({ id: 999999n }, bearer(admin)).catch((e: unknown) => e as ConnectError);
    expect((missing as ConnectError).code).toBe(Code.NotFound);
  });
});
