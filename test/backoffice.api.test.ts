/** The Management API additions the back office reads: leads across providers, the audit log, usage. */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { clearOfDayEnd } from "./helpers/timing.ts";

const ADMIN = "/api/v1/admin/";
const PROVIDERS = "/api/v1/lead_providers/";

describe.each(BACKENDS)("back-office API ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const clock = minuteClock();
  const get = async (path: string, auth = admin) => {
    const res = await t.call("GET", path, { auth });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000" }, { now: clock });
    admin = await t.token({}, { sub: "ops@company.example" });
  });
  afterAll(() => t.stop());

  it("searches leads across providers by provider, state, dates and external_id or order number, live unless asked", async () => {
    const a = await t.provider();
    const b = await t.provider();
    const test = (await (
      await t.call("POST", `${PROVIDERS}${a.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } })
    ).json()) as Json;
    const before = new Date().toISOString();
    const la = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: a.key })
    ).json()) as Json;
    const lb = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: b.key })
    ).json()) as Json;
    const lt = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: test.api_key })
    ).json()) as Json;

    const ofA = await get(`${ADMIN}leads/?provider_id=${a.id}`);
    expect(ofA.body.results.map((l: Json) => [l.id, l.provider_id])).toEqual([[la.id, a.id]]);
    const withTest = await get(`${ADMIN}leads/?provider_id=${a.id}&include_test=true`);
    expect(withTest.body.results.map((l: Json) => l.id)).toEqual([lt.id, la.id]);
    expect((await get(`${ADMIN}leads/?q=${lb.external_id}`)).body.results.map((l: Json) => l.id)).toEqual([lb.id]);
    expect((await get(`${ADMIN}leads/?q=${la.order_number.toLowerCase()}`)).body.results[0].id).toBe(la.id);
    const recent = await get(`${ADMIN}leads/?created_after=${encodeURIComponent(before)}&state=LEAD&page_size=1`);
    expect(recent.body.results.map((l: Json) => l.id)).toEqual([lb.id]);
    expect(recent.body.next_page_token).not.toBeNull();
    const next = await get(recent.body.next);
    expect(next.body.results.map((l: Json) => l.id)).toEqual([la.id]);
    expect(
      (await get(`${ADMIN}leads/?created_before=${encodeURIComponent(before)}&provider_id=${a.id}`)).body.results,
    ).toEqual([]);

    const bad = await get(`${ADMIN}leads/?state=DONE`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: "state" });
  });

  it("finds leads by any part of the name, email, phone in any format, external id or order number, in any case", async () => {
    const p = await t.provider();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const body = leadBody({
      external_id: `CRM-${tag}-Q7`,
      first_name: "Rosalind",
      last_name: `Quenby${tag}`,
      email: `rosalind.${tag}@Example.com`,
      phone_number: `(415) 55${String(Date.now() % 100_000).padStart(5, "0")}`,
    });
    const created = await t.call("POST", "/api/v1/public/leads/", { body, auth: p.key });
    const lead = (await created.json()) as Json;
    expect(created.status, JSON.stringify(lead)).toBe(201);
    const digits = String(body.phone_number).replace(/\D/g, "");
    const found = async (q: string) => {
      const res = await get(`${ADMIN}leads/?provider_id=${p.id}&q=${encodeURIComponent(q)}`);
      expect(res.status, `${q}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.results.map((l: Json) => l.id);
    };
    for (const q of [
      `quenby${tag}`.toUpperCase(),
      `rosalind quenby${tag}`,
      `${tag}@example`,
      `crm-${tag}`,
      `${tag}-q7`,
      lead.order_number.slice(3).toLowerCase(),
      `(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`,
      `+1 ${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6)}`,
      digits.slice(-7),
    ])
      expect(await found(q), q).toEqual([lead.id]);
    expect(await found(`nobody-${tag}`)).toEqual([]);
    // A time typed as it reads (colons not percent-encoded) is accepted as well.
    const raw = await get(`${ADMIN}leads/?provider_id=${p.id}&created_after=2020-01-01T00:00:00Z`);
    expect(raw.body.results.map((l: Json) => l.id)).toEqual([lead.id]);
    // LIKE's wildcards are literal text, not patterns.
    expect(await found("%%%")).toEqual([]);
  });

  it("shows each provider's live leads this week, latest lead and webhook health in the list", async () => {
    const p = await t.provider(undefined, { webhook_url: "http://127.0.0.1:9/hooks" });
    await clearOfDayEnd(); // the leads and the list in one week
    const quiet = await t.provider();
    const lead = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: p.key })
    ).json()) as Json;
    await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: p.key });
    const listed = await get(`${PROVIDERS}?id=${p.id}&id=${quiet.id}`);
    const byId = new Map(listed.body.results.map((r: Json) => [r.id, r.activity]));
    expect(byId.get(p.id)).toMatchObject({ leads_this_week: 2, webhook_enabled: true, failed_deliveries: 0 });
    expect(Date.parse((byId.get(p.id) as Json).last_lead_at)).toBeGreaterThanOrEqual(Date.parse(lead.created_at));
    expect(byId.get(quiet.id)).toEqual({
      leads_this_week: 0,
      last_lead_at: null,
      webhook_enabled: null,
      failed_deliveries: 0,
      pending_deliveries: 0,
    });
  }, 180_000);

  it("matches part of the audit actor, in any case", async () => {
    const p = await t.provider();
    const someone = await t.token({}, { sub: "Dana.Whitlock@company.example" });
    await t.call("GET", `${PROVIDERS}${p.id}/api_key/?mode=live`, { auth: someone });
    const found = await get(`${ADMIN}audit_log/?provider_id=${p.id}&actor=whitlock`);
    expect(found.body.results.map((e: Json) => [e.actor, e.action])).toEqual([
      ["Dana.Whitlock@company.example", "api_key.viewed"],
    ]);
  });

  it("lists the audit log newest first, by provider and by actor, without secrets", async () => {
    const p = await t.provider();
    await get(`${PROVIDERS}${p.id}/`); // a key view
    const log = await get(`${ADMIN}audit_log/?provider_id=${p.id}`);
    expect(log.body.results.map((e: Json) => e.action)).toEqual([
      "api_key.viewed",
      "api_key.generated",
      "provider.created",
    ]);
    expect(log.body.results.every((e: Json) => e.target_id === String(p.id))).toBe(true);
    expect(JSON.stringify(log.body)).not.toContain(p.key);
    const other = await t.token({}, { sub: "someone.else@company.example" });
    await t.call("GET", `${PROVIDERS}${p.id}/`, { auth: other });
    const mine = await get(
      `${ADMIN}audit_log/?provider_id=${p.id}&actor=${encodeURIComponent("someone.else@company.example")}`,
    );
    expect(mine.body.results).toEqual([
      expect.objectContaining({ action: "api_key.viewed", actor: "someone.else@company.example" }),
    ]);
  });

  it("reports a provider's usage this minute and today, live and test apart, without counting the read", async () => {
    const p = await t.provider(undefined, { rate_limit_per_minute: 50, rate_limit_per_day: 900 });
    clock.nextMinute(); // the requests and the reads of their count in one minute (and so one day)
    for (let i = 0; i < 3; i++) await t.call("GET", "/api/v1/public/leads/nope/", { auth: p.key });
    const usage = await get(`${PROVIDERS}${p.id}/usage/`);
    expect(usage.status).toBe(200);
    expect(usage.body.live.minute).toMatchObject({ used: 3, limit: 50, remaining: 47 });
    expect(usage.body.live.day).toMatchObject({ used: 3, limit: 900, remaining: 897 });
    expect(usage.body.test.minute).toMatchObject({ used: 0, limit: 50 });
    expect((await get(`${PROVIDERS}${p.id}/usage/`)).body.live.minute.used).toBe(3);
    expect((await get(`${PROVIDERS}999999999/usage/`)).status).toBe(404);
  });

  it("filters the provider list by id, and refuses every back-office read to a non-admin JWT", async () => {
    const [x, y] = [await t.provider(), await t.provider()];
    const list = await get(`${PROVIDERS}?id=${x.id}&id=${y.id}`);
    expect(list.body.results.map((p: Json) => p.id)).toEqual([x.id, y.id]);
    expect(list.body.results[0]).not.toHaveProperty("api_key_value");
    const agent = await t.token({ position: "AGENT" });
    for (const path of [`${ADMIN}leads/`, `${ADMIN}audit_log/`, `${PROVIDERS}${x.id}/usage/`]) {
      expect((await get(path, agent)).status, path).toBe(403);
      expect((await get(path, x.key)).status, path).toBe(401);
    }
  });
});

describe.each(BACKENDS)("back-office leads in a creation window ($name)", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.stop());

  it("finds leads of a window long ago, and leads with sequence ids from before time-based ids", async () => {
    const admin = await t.token();
    const p = await t.provider();
    const la = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: p.key })
    ).json()) as Json;
    const day = 86_400_000;
    const yearAgo = Date.now() - 365 * day;
    // Copies of the lead as the service made them a year ago (id from that millisecond), and as it
    // made them before migration 0006 (a small sequence id), created 10 days ago.
    const copy = (id: number | bigint, suffix: string, at: Date) =>
      sql`insert into leads (id, provider_id, external_id, order_number, state, lead_status, first_name, last_name,
            email, phone_number, estimated_ship_date, overseas_type, ship_via, origin_zip, origin_city,
            origin_state_id, origin_state_code, created_at, updated_at, state_changed_at, livemode)
          select ${id}, provider_id, external_id || ${suffix}, 'LP-' || ${suffix.toUpperCase()}, state, lead_status,
            first_name, last_name, email, phone_number, estimated_ship_date, overseas_type, ship_via, origin_zip,
            origin_city, origin_state_id, origin_state_code, ${at}, ${at}, ${at}, livemode
          from leads where id = ${la.id}`.execute(t.app.database.db);
    const timeId = (BigInt(yearAgo) - 1_704_067_200_000n) << 12n;
    await copy(timeId, "90000001", new Date(yearAgo));
    await copy(7, "90000007", new Date(Date.now() - 10 * day));
    const window = async (from: number, to: number) => {
      const q = `created_after=${new Date(from).toISOString()}&created_before=${new Date(to).toISOString()}`;
      const res = await t.call("GET", `/api/v1/admin/leads/?provider_id=${p.id}&${q}`, { auth: admin });
      const body = (await res.json()) as Json;
      expect(res.status, JSON.stringify(body)).toBe(200);
      return body.results.map((l: Json) => l.external_id);
    };
    expect(await window(yearAgo - day, yearAgo + day)).toEqual([`${la.external_id}90000001`]);
    expect(await window(Date.now() - 11 * day, Date.now() - 9 * day)).toEqual([`${la.external_id}90000007`]);
    expect(await window(Date.now() - 60_000, Date.now() + 60_000)).toEqual([la.external_id]);
    expect(await window(Date.now() - 400 * day, Date.now() + day)).toEqual([
      la.external_id,
      `${la.external_id}90000001`,
      `${la.external_id}90000007`,
    ]);
  });
});
