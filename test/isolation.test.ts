/**
 * Live and test (sandbox) data kept apart through every field a lead is matched or counted by,
 * against a real server on PGlite and (with TEST_DATABASE_URL) Postgres: a test lead never makes
 * a live lead a duplicate, by phone or by email, nor a live lead a test one; test leads never
 * count in live statistics (the provider's, the administrators' for one provider and for all, the
 * daily rollup) nor in live caps, and live leads never in test caps.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { businessToday } from "../src/intake/business-time.ts";
import { checkPhone } from "../src/intake/contact.ts";
import { createLogger } from "../src/logger.ts";
import { createStatsRollup } from "../src/stats/stats.rollup.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

const ZONE = "America/New_York";
const LEADS = "/api/v1/public/leads/";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;

let counter = 0;
/** A valid US phone number used nowhere else in this file. */
function freshPhone(): string {
  for (;;) {
    counter += 1;
    const phone = `+1 312 ${200 + Math.floor(Math.random() * 700)} ${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    if ("e164" in checkPhone(phone)) return phone;
  }
}
const freshEmail = () => `isolation.${process.pid}.${Date.now()}.${++counter}@example.com`;
const fresh = (overrides: Json = {}) => leadBody({ phone_number: freshPhone(), email: freshEmail(), ...overrides });

describe.each(BACKENDS)("live and test data kept apart ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(backend, { BUSINESS_TIMEZONE: ZONE });
    admin = await t.token();
  });
  afterAll(() => t?.stop());

  const create = (key: string, body: unknown) => t.call("POST", LEADS, { auth: key, body });
  /** A provider with its live key and its test key. */
  async function provider(fields: Json = {}): Promise<{ id: number; live: string; test: string }> {
    const p = await t.provider(undefined, fields);
    const issued = await t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    return { id: p.id, live: p.key, test: (await j(issued)).api_key as string };
  }

  it("a test lead never makes a live lead a duplicate by phone or by email, nor a live lead a test one", async () => {
    const p = await provider();
    const other = await provider();
    const dupOf = async (key: string, body: Json) => {
      const res = await create(key, body);
      expect(res.status, await res.clone().text()).toBe(201);
      return (await j(res)).duplicate as Json | null;
    };
    // Test first, then live, by phone and by email.
    const phone = freshPhone();
    const email = freshEmail();
    expect(await dupOf(p.test, fresh({ phone_number: phone }))).toBeNull();
    expect(await dupOf(p.test, fresh({ email }))).toBeNull();
    expect(await dupOf(p.live, fresh({ phone_number: phone }))).toBeNull();
    expect(await dupOf(p.live, fresh({ email }))).toBeNull();
    expect(await dupOf(other.live, fresh({ email: email.toUpperCase() }))).toMatchObject({ matched_on: ["email"] });
    // Live first, then test (the provider's own test key).
    const phone2 = freshPhone();
    const email2 = freshEmail();
    expect(await dupOf(p.live, fresh({ phone_number: phone2 }))).toBeNull();
    expect(await dupOf(p.live, fresh({ email: email2 }))).toBeNull();
    expect(await dupOf(p.test, fresh({ phone_number: phone2 }))).toBeNull();
    expect(await dupOf(p.test, fresh({ email: email2 }))).toBeNull();
    // The check is on in both modes: the same phone and email again, in each mode, match their own.
    expect(await dupOf(p.live, fresh({ phone_number: phone }))).toMatchObject({
      matched_on: ["phone_number"],
      same_provider: true,
    });
    expect(await dupOf(p.test, fresh({ phone_number: phone2 }))).toMatchObject({ matched_on: ["phone_number"] });
    expect(await dupOf(p.test, fresh({ email: email2 }))).toMatchObject({ matched_on: ["email"] });
  });

  it("test leads never count in live statistics: the provider's, the administrators' and the rollup's", async () => {
    const db = t.app.database.db;
    const p = await provider();
    const ids: number[] = [];
    for (const key of [p.live, p.live, p.test, p.test, p.test]) {
      const res = await create(key, fresh());
      expect(res.status).toBe(201);
      ids.push((await j(res)).id);
    }
    // Yesterday, noon in New York: a day the rollup rolls up whole.
    const today = businessToday(new Date(), ZONE);
    const yesterday = new Date(Date.parse(`${today}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const noon = sql`((${yesterday}::date + time '12:00')::timestamp at time zone ${ZONE})`;
    await sql`update leads set created_at = ${noon} where id = any(${ids}::bigint[])`.execute(db);
    const range = `from=${yesterday}&to=${today}`;
    /** Every live (or test) lead of the range in this database, counted from the table itself. */
    const everyone = async (livemode: boolean) => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from leads where livemode = ${livemode}
        and created_at >= (${yesterday}::date::timestamp at time zone ${ZONE})`.execute(db);
      return rows[0]?.n;
    };
    const check = async (stage: string) => {
      const mine = await j(t.call("GET", `/api/v1/public/stats/?${range}`, { auth: p.live }));
      expect(mine.totals.accepted, `${stage}: the live key's stats`).toBe(2);
      expect(mine.periods.find((r: Json) => r.period === yesterday).accepted, stage).toBe(2);
      const sandbox = await j(t.call("GET", `/api/v1/public/stats/?${range}`, { auth: p.test }));
      expect(sandbox.totals.accepted, `${stage}: the test key's stats`).toBe(3);
      const one = await j(t.call("GET", `/api/v1/admin/stats/?${range}&provider_id=${p.id}`, { auth: admin }));
      expect(one.totals.accepted, `${stage}: admin, one provider`).toBe(2);
      const oneTest = await j(
        t.call("GET", `/api/v1/admin/stats/?${range}&provider_id=${p.id}&livemode=false`, { auth: admin }),
      );
      expect(oneTest.totals.accepted, `${stage}: admin, one provider's test leads`).toBe(3);
      const all = await j(t.call("GET", `/api/v1/admin/stats/?${range}`, { auth: admin }));
      expect(all.totals.accepted, `${stage}: admin, every provider`).toBe(await everyone(true));
      const byProvider = await j(t.call("GET", `/api/v1/admin/stats/?${range}&group_by=provider`, { auth: admin }));
      const row = byProvider.periods.find((r: Json) => r.group === String(p.id));
      expect(row.accepted, `${stage}: admin, grouped by provider`).toBe(2);
    };

    // From the leads, as before the rollup's first run.
    await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(db);
    await sql`delete from lead_stats_daily`.execute(db);
    await check("from the leads");

    // From the rollup: yesterday rolled up whole, per provider and for every provider together.
    await createStatsRollup({ db, zone: ZONE, logger: createLogger("silent"), lagSeconds: 0 }).runOnce();
    const { rows } = await sql<{ livemode: boolean; accepted: number }>`
      select livemode, accepted from lead_stats_daily where provider_id = ${p.id} and day = ${yesterday}::date
      order by livemode`.execute(db);
    expect(rows).toEqual([
      { livemode: false, accepted: 3 },
      { livemode: true, accepted: 2 },
    ]);
    const { rows: together } = await sql<{ livemode: boolean; accepted: number }>`
      select livemode, sum(accepted)::int as accepted from lead_stats_daily where provider_id = 0
        and day = ${yesterday}::date group by livemode order by livemode`.execute(db);
    const { rows: counted } = await sql<{ livemode: boolean; n: number }>`
      select livemode, count(*)::int as n from leads where created_at >= (${yesterday}::date::timestamp at time zone ${ZONE})
        and created_at < (${today}::date::timestamp at time zone ${ZONE}) group by livemode order by livemode`.execute(
      db,
    );
    expect(together).toEqual(counted.map((c) => ({ livemode: c.livemode, accepted: c.n })));
    await check("from the rollup");
  });

  it.each(["day", "week", "month"])(
    "test leads never count in a live %s cap, nor live leads in the test one",
    async (window) => {
      const p = await provider();
      const rules = await t.call("PUT", `/api/v1/lead_providers/${p.id}/intake_rules/`, {
        auth: admin,
        body: { caps: { [window]: 2 } },
      });
      expect(rules.status).toBe(200);
      const status = async (key: string) => (await create(key, fresh())).status;
      expect(await status(p.live)).toBe(201);
      // One live lead in the window: the test cap of 2 still takes two test leads...
      expect(await status(p.test)).toBe(201);
      expect(await status(p.test)).toBe(201);
      // ...and two test leads leave the live cap one more.
      expect(await status(p.live)).toBe(201);
      // Each mode's own cap is full now.
      const live = await create(p.live, fresh());
      expect(live.status).toBe(429);
      expect(await j(live)).toMatchObject({ code: "cap_reached", window });
      expect(await status(p.test)).toBe(429);
      for (const key of [p.live, p.test]) {
        const published = await j(t.call("GET", "/api/v1/public/intake_rules/", { auth: key }));
        expect(published.cap_usage[window]).toMatchObject({ limit: 2, used: 2, remaining: 0 });
      }
    },
  );
});
