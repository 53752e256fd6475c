/**
 * What reads the stats rollup (lead_stats_daily) instead of every lead. The stats'
 * median hours come from per-day histograms (migration 0013): within 1 % of the exact one
 * (percentile_cont over the leads), the same from the rollup as from the leads, days merged
 * correctly (odd and even counts). The provider list's leads this week: the week's past days from
 * the rollup, the rest from the leads, the same count either way.
 */
import fc from "fast-check";
import { sql } from "kysely";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { businessToday } from "../src/intake/business-time.ts";
import { createLogger } from "../src/logger.ts";
import { bucketHours } from "../src/stats/hours-histogram.ts";
import { rollUpToday } from "../src/stats/stats.repository.ts";
import { createStatsRollup } from "../src/stats/stats.rollup.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { clearOfDayEnd } from "./helpers/timing.ts";

const ZONE = "America/New_York";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;

/** Yesterday's leads: hours to QUOTE (an even count), and hours from QUOTE to ORDER for some. */
const YESTERDAY_QUOTE = [0.2, 0.75, 1.5, 3, 4.2, 7, 12, 26, 48, 100];
const YESTERDAY_ORDER = [0.5, 2, 9, 30, 70];
/** One of today's leads, quoted after this long (making the range's count odd). */
const TODAY_QUOTE = 5.5;

/** percentile_cont(0.5): the mean of the two middle values. */
function exactMedian(values: readonly number[]): number {
  const s = [...values].sort((x, y) => x - y);
  return ((s[Math.floor((s.length - 1) / 2)] as number) + (s[Math.floor(s.length / 2)] as number)) / 2;
}

/** Within 1 %, and the API's 0.01 h rounding. */
function expectNear(actual: number | null, exact: number) {
  expect(actual).not.toBeNull();
  expect(Math.abs((actual as number) - exact)).toBeLessThanOrEqual(exact * 0.01 + 0.005);
}

describe.each(BACKENDS)("median hours from histograms ($name)", (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(backend, { BUSINESS_TIMEZONE: ZONE });
    // The test runs the rollup itself, step by step: the app's own loop (5 s after start, then
    // every minute) would roll today up between two of its steps on a slow machine.
    await t.app.statsRollup.stop();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("puts every duration in a bucket whose hours are within 1 % of it (18 s below 36 s)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(fc.double({ min: 0, max: 0.02, noNaN: true }), fc.double({ min: 0, max: 20_000, noNaN: true })),
          {
            minLength: 1,
            maxLength: 200,
          },
        ),
        async (hours) => {
          const { rows } = await sql<{ h: number; k: number }>`
            select h, hours_bucket(h) as k from unnest(${hours}::float8[]) as h`.execute(t.app.database.db);
          for (const { h, k } of rows) {
            const stands = bucketHours(Number(k));
            if (h <= 0.01) expect(Math.abs(stands - h)).toBeLessThanOrEqual(0.005 + 1e-12);
            else expect(Math.abs(stands - h) / h).toBeLessThan(0.01);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it("answers medians within 1 % of the exact ones, the same from the rollup as from the leads", async () => {
    const p = await t.provider();
    const admin = await t.token();
    await clearOfDayEnd(); // today's leads and the reads of today on one day
    const today = businessToday(new Date(), ZONE);
    const yesterday = new Date(Date.parse(`${today}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const ids: number[] = [];
    for (let i = 0; i < YESTERDAY_QUOTE.length + 2; i += 1) {
      const r = await t.call("POST", "/api/v1/public/leads/", {
        auth: p.key,
        body: leadBody({ email: `median.${Date.now()}.${i}@example.com` }),
      });
      expect(r.status).toBe(201);
      ids.push((await j(r)).id);
    }
    const db = t.app.database.db;
    // Yesterday noon (business time) for all but the last two; quoted and ordered after the hours above.
    const noon = sql`((${yesterday}::date + time '12:00')::timestamp at time zone ${ZONE})`;
    for (const [i, h] of YESTERDAY_QUOTE.entries()) {
      const toOrder = YESTERDAY_ORDER[i];
      await sql`
        update leads set created_at = ${noon}, quoted_at = ${noon} + make_interval(secs => ${h * 3600}::float8),
               ordered_at = case when ${toOrder ?? null}::float8 is null then null
                                 else ${noon} + make_interval(secs => ${(h + (toOrder ?? 0)) * 3600}::float8) end
        where id = ${ids[i]}`.execute(db);
    }
    // One of today's leads quoted after TODAY_QUOTE hours; the other never quoted.
    await sql`update leads set quoted_at = created_at + make_interval(secs => ${TODAY_QUOTE * 3600}::float8) where id = ${ids.at(-1)}`.execute(
      db,
    );

    const path = `/api/v1/public/stats/?from=${yesterday}&to=${today}`;
    const all = `/api/v1/admin/stats/?from=${yesterday}&to=${today}&provider_id=${p.id}`;
    const expectMedians = (stats: Json) => {
      const day = stats.periods.find((r: Json) => r.period === yesterday);
      expectNear(day.median_hours_to_quote, exactMedian(YESTERDAY_QUOTE));
      expectNear(day.median_hours_to_order, exactMedian(YESTERDAY_ORDER));
      const now = stats.periods.find((r: Json) => r.period === today);
      expectNear(now.median_hours_to_quote, TODAY_QUOTE);
      expect(now.median_hours_to_order).toBeNull();
      expectNear(stats.totals.median_hours_to_quote, exactMedian([...YESTERDAY_QUOTE, TODAY_QUOTE]));
      expectNear(stats.totals.median_hours_to_order, exactMedian(YESTERDAY_ORDER));
    };

    // From the leads: as on a database the rollup has not reached.
    await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(db);
    await sql`delete from lead_stats_daily`.execute(db);
    const live = await j(t.call("GET", path, { auth: p.key }));
    expectMedians(live);
    expectMedians(await j(t.call("GET", all, { auth: admin })));

    // From the rollup (yesterday) and the leads (today): the same answer.
    const rollup = createStatsRollup({ db, zone: ZONE, logger: createLogger("silent"), lagSeconds: 0 });
    await rollup.runOnce();
    // Yesterday whole, and today so far (its two leads, one quoted).
    const { rows } = await sql<{ day: string; accepted: number; quoted: number }>`
      select day::text as day, accepted, quoted from lead_stats_daily where provider_id = ${p.id} order by day`.execute(
      db,
    );
    expect(rows).toEqual([
      { day: yesterday, accepted: YESTERDAY_QUOTE.length, quoted: YESTERDAY_QUOTE.length },
      { day: today, accepted: 2, quoted: 1 },
    ]);
    expect(await j(t.call("GET", path, { auth: p.key }))).toEqual(live);
    expectMedians(await j(t.call("GET", all, { auth: admin })));

    // A lead created after that run is read from the leads; today's rolled-up lead quoted since
    // is counted at the next run, which rolls today up again.
    const later = await t.call("POST", "/api/v1/public/leads/", {
      auth: p.key,
      body: leadBody({ email: `median.later.${Date.now()}@example.com` }),
    });
    expect(later.status).toBe(201);
    const todayOf = async () =>
      (await j(t.call("GET", path, { auth: p.key }))).periods.find((r: Json) => r.period === today);
    expect(await todayOf()).toMatchObject({ accepted: 3, quoted: 1 });
    // The provider list's leads this week: today's two from the rollup's rows, the later one live.
    const weekStart = DateTime.now().setZone(ZONE).startOf("week").toISODate() as string;
    const listed = await j(t.call("GET", `/api/v1/lead_providers/?id=${p.id}`, { auth: admin }));
    expect(listed.results[0].activity.leads_this_week).toBe((yesterday >= weekStart ? YESTERDAY_QUOTE.length : 0) + 3);
    await sql`update leads set quoted_at = now() where id = ${ids.at(-2)}`.execute(db);
    expect(await todayOf()).toMatchObject({ accepted: 3, quoted: 1 }); // read from today's rows until then
    await rollup.runOnce();
    expect(await todayOf()).toMatchObject({ accepted: 3, quoted: 2 });
    // Another instance rolled today up whole meanwhile (midnight): a late partial run must not
    // replace those rows.
    await sql`update lead_stats_rollup set rolled_through = ${today}::date`.execute(db);
    expect(await rollUpToday(db, ZONE, today, 0)).toBe(false);
    const { rows: kept } = await sql<{ accepted: number }>`
      select accepted from lead_stats_daily where provider_id = ${p.id} and day = ${today}::date`.execute(db);
    expect(kept).toEqual([{ accepted: 3 }]);
  }, 180_000);
});

describe.each(BACKENDS)("this week's leads in the provider list ($name)", (backend) => {
  let t: TestApp;
  // The app's clock reads a Thursday, 12:00 business time (the next one from now), so the week
  // has past days to roll up whatever day the test runs.
  const real = DateTime.now().setZone(ZONE);
  const thursday = real.plus({ days: (4 - real.weekday + 7) % 7 || 7 }).set({ hour: 12, minute: 0, second: 0 });
  const offsetMs = thursday.toMillis() - real.toMillis();
  const now = () => new Date(Date.now() + offsetMs);

  beforeAll(async () => {
    t = await startTestApp(backend, { BUSINESS_TIMEZONE: ZONE }, { now });
    // The test runs the rollup itself: the app's own loop, holding the one-at-a-time lock at that
    // moment, would make the test's run a no-op.
    await t.app.statsRollup.stop();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("counts the week's past days from the rollup and today from the leads, the same either way", async () => {
    const p = await t.provider();
    const admin = await t.token();
    const issued = await t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    const testKey = (await j(issued)).api_key as string;
    const monday = thursday.startOf("week");
    // Monday 00:00, Tuesday, Wednesday 23:59 and today count; last Sunday 23:59 and a test lead do not.
    const at = [
      monday,
      monday.plus({ days: 1, hours: 10 }),
      monday.plus({ days: 3 }).minus({ minutes: 1 }),
      thursday.minus({ hours: 3 }),
      monday.minus({ minutes: 1 }),
    ];
    const ids: number[] = [];
    for (const [i] of [...at, "test"].entries()) {
      const r = await t.call("POST", "/api/v1/public/leads/", {
        auth: i < at.length ? p.key : testKey,
        body: leadBody({ email: `week.${Date.now()}.${i}@example.com` }),
      });
      expect(r.status).toBe(201);
      ids.push((await j(r)).id);
    }
    const db = t.app.database.db;
    for (const [i, when] of at.entries()) {
      await sql`update leads set created_at = ${when.toJSDate()} where id = ${ids[i]}`.execute(db);
    }
    await sql`update leads set created_at = ${monday.plus({ hours: 9 }).toJSDate()} where id = ${ids.at(-1)}`.execute(
      db,
    );
    const thisWeek = async () => {
      const listed = await j(t.call("GET", `/api/v1/lead_providers/?id=${p.id}`, { auth: admin }));
      return listed.results[0].activity.leads_this_week;
    };

    await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(db);
    await sql`delete from lead_stats_daily`.execute(db);
    expect(await thisWeek()).toBe(4);

    await createStatsRollup({ db, zone: ZONE, logger: createLogger("silent"), now }).runOnce();
    const { rows } = await sql<{ days: string[] }>`
      select array_agg(day::text order by day) as days from lead_stats_daily
      where provider_id = ${p.id} and livemode and day >= ${monday.toISODate()}::date`.execute(db);
    // Monday to Wednesday whole; Thursday so far by the database's clock, which is behind the app's
    // here, so none of it yet.
    expect(rows[0]?.days).toEqual([0, 1, 2].map((d) => monday.plus({ days: d }).toISODate()));
    expect(await thisWeek()).toBe(4);
    // A lead created after that run counts at once.
    await sql`update leads set created_at = ${thursday.plus({ minutes: 5 }).toJSDate()} where id = ${ids.at(-1)}`.execute(
      db,
    );
    await sql`update leads set livemode = true where id = ${ids.at(-1)}`.execute(db);
    expect(await thisWeek()).toBe(5);
  });
});

describe.each(BACKENDS)(
  "stats periods are business days and weeks, where New York and UTC disagree ($name)",
  (backend) => {
    let t: TestApp;
    // The app's clock: Wednesday 2026-12-02 10:00 in New York.
    const now = () => new Date("2026-12-02T15:00:00Z");
    beforeAll(async () => {
      t = await startTestApp(backend, { BUSINESS_TIMEZONE: ZONE }, { now });
      // The test runs the rollup itself (the app's loop holding the lock would make it a no-op).
      await t.app.statsRollup.stop();
    });
    afterAll(async () => {
      await t?.stop();
    });

    it("counts a lead in its day and week in New York, from the leads and from the rollup alike", async () => {
      const p = await t.provider();
      const admin = await t.token();
      const db = t.app.database.db;
      const at = [
        "2026-11-30T04:30:00Z", // Sunday 29 November 23:30 there (Monday in UTC): week of 23 November there
        "2026-12-01T02:30:00Z", // Monday 30 November 21:30 there (Tuesday in UTC)
      ];
      for (const [i, when] of at.entries()) {
        const r = await t.call("POST", "/api/v1/public/leads/", {
          auth: p.key,
          body: leadBody({ email: `zone.${Date.now()}.${i}@example.com`, estimated_ship_date: "2026-12-20" }),
        });
        expect(r.status).toBe(201);
        await sql`update leads set created_at = ${new Date(when)} where id = ${(await j(r)).id}`.execute(db);
      }
      const days = async (path: string, auth: string) => {
        const stats = await j(t.call("GET", path, { auth }));
        return Object.fromEntries(stats.periods.map((r: Json) => [r.period, r.accepted]));
      };
      const range = "from=2026-11-29&to=2026-12-02";
      const expectBusinessPeriods = async (stage: string) => {
        const daily = { "2026-11-29": 1, "2026-11-30": 1, "2026-12-01": 0, "2026-12-02": 0 };
        expect(await days(`/api/v1/public/stats/?${range}`, p.key), stage).toEqual(daily);
        expect(await days(`/api/v1/admin/stats/?${range}&provider_id=${p.id}`, admin), stage).toEqual(daily);
        const weekly = { "2026-11-23": 1, "2026-11-30": 1 };
        expect(await days(`/api/v1/public/stats/?${range}&granularity=week`, p.key), stage).toEqual(weekly);
      };

      await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(db);
      await sql`delete from lead_stats_daily`.execute(db);
      await expectBusinessPeriods("from the leads");

      // The rollup's days by the app's clock: through Tuesday 1 December, the day before its today.
      await createStatsRollup({ db, zone: ZONE, logger: createLogger("silent"), now, lagSeconds: 0 }).runOnce();
      const { rows } = await sql<{ day: string; accepted: number }>`
      select day::text as day, accepted from lead_stats_daily where provider_id = ${p.id} and livemode
      order by day`.execute(db);
      expect(rows).toEqual([
        { day: "2026-11-29", accepted: 1 },
        { day: "2026-11-30", accepted: 1 },
      ]);
      await expectBusinessPeriods("from the rollup");
    });
  },
);

describe.each(BACKENDS)("stats from the period rollup, over any range ($name)", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend, { BUSINESS_TIMEZONE: ZONE });
    // The test runs the rollup itself (the app's loop holding the lock would make it a no-op).
    await t.app.statsRollup.stop();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("answers exactly as from the daily rollup and the leads, at every granularity, and pages providers", async () => {
    const admin = await t.token();
    const db = t.app.database.db;
    await clearOfDayEnd();
    const today = businessToday(new Date(), ZONE);
    const day = (back: number) => DateTime.fromISO(today).minus({ days: back }).toISODate() as string;
    // Three providers of unequal size, leads over 400 days with and without sub-sources, quoted
    // and ordered after various hours; refusals by code in the request log's daily counts.
    const providers = [await t.provider(), await t.provider(), await t.provider()];
    const sizes = [14, 8, 3];
    for (const [n, p] of providers.entries()) {
      for (let i = 0; i < (sizes[n] as number); i += 1) {
        const r = await t.call("POST", "/api/v1/public/leads/", {
          auth: p.key,
          body: leadBody({
            email: `periods.${Date.now()}.${n}.${i}@example.com`,
            ...(i % 3 !== 0 && { sub_id: `site-${i % 2}` }),
          }),
        });
        expect(r.status).toBe(201);
        const id = (await j(r)).id;
        const back = (i * 37 + n * 11) % 400; // spread over 400 days, today included
        const created = sql`((${day(back)}::date + time '09:00')::timestamp at time zone ${ZONE})`;
        await sql`
          update leads set created_at = ${created},
            quoted_at = case when ${i % 2 === 0} and ${back > 0} then ${created} + make_interval(hours => ${1 + i}) end,
            ordered_at = case when ${i % 4 === 0} and ${back > 0} then ${created} + make_interval(hours => ${30 + i * 2}) end
          where id = ${id}`.execute(db);
      }
      for (const [k, back] of [3, 45, 200, 390].entries()) {
        await sql`
          insert into request_outcomes_daily (provider_id, livemode, day, sub_id, code, requests)
          values (${p.id}, true, ${day(back)}::date, ${k % 2 === 0 ? "" : "site-1"}, ${k % 2 === 0 ? "invalid_zip" : "invalid_phone_number"}, ${n + k + 1})
          on conflict (provider_id, livemode, day, sub_id, code) do update set requests = excluded.requests`.execute(
          db,
        );
      }
    }
    const [big] = providers as [{ id: number; key: string }];
    const yearAgo = day(364);
    const queries = [
      `/api/v1/admin/stats/?from=${yearAgo}&to=${today}&granularity=month`,
      `/api/v1/admin/stats/?from=${day(182)}&to=${today}&granularity=week`,
      `/api/v1/admin/stats/?from=${yearAgo}&to=${today}`,
      `/api/v1/admin/stats/?from=${day(399)}&to=${today}&granularity=month&group_by=sub_id`,
      `/api/v1/admin/stats/?from=${yearAgo}&to=${today}&granularity=week&group_by=provider`,
      `/api/v1/admin/stats/?from=${yearAgo}&to=${today}&group_by=provider&page_size=200&sort=-accepted`,
      `/api/v1/admin/stats/?from=${day(40)}&to=${day(2)}&granularity=week&provider_id=${big.id}&group_by=sub_id`,
      // Ranked over ranges that start and end inside the history, by the other columns: a
      // provider with leads only before or after a range is not in it.
      `/api/v1/admin/stats/?from=${day(10)}&to=${day(5)}&group_by=provider&sort=-last_lead_at`,
      // The smallest provider leads here, the biggest before it; two have refusals and no lead.
      `/api/v1/admin/stats/?from=${day(60)}&to=${day(20)}&group_by=provider&sort=accepted`,
      `/api/v1/admin/stats/?from=${day(46)}&to=${day(44)}&group_by=provider&sort=last_lead_at`,
      `/api/v1/admin/stats/?from=${day(120)}&to=${day(60)}&group_by=provider&sort=-last_lead_at`,
      `/api/v1/admin/stats/?from=${day(250)}&to=${day(2)}&granularity=month&group_by=provider&sort=rejected`,
      `/api/v1/admin/stats/?from=${day(399)}&to=${day(1)}&granularity=week&group_by=provider&sort=-quoted`,
    ];
    const publicQueries = [
      `/api/v1/public/stats/?from=${yearAgo}&to=${today}&granularity=month`,
      `/api/v1/public/stats/?from=${day(399)}&to=${today}&group_by=sub_id`,
    ];
    const answers = async () => {
      const out: Json[] = [];
      for (const q of queries) out.push(await j(t.call("GET", q, { auth: admin })));
      for (const q of publicQueries) out.push(await j(t.call("GET", q, { auth: big.key })));
      return out;
    };
    const rollup = createStatsRollup({ db, zone: ZONE, logger: createLogger("silent"), lagSeconds: 0 });
    const marks = async () =>
      (
        await sql<{ rolled: string | null; periods: string | null }>`
          select rolled_through::text as rolled, periods_through::text as periods from lead_stats_rollup`.execute(db)
      ).rows[0];
    // The job's runs until it has caught up (31 days a run, 92 into the periods).
    const catchUp = async () => {
      for (let i = 0; i < 40; i += 1) {
        const before = JSON.stringify(await marks());
        await rollup.runOnce();
        if (JSON.stringify(await marks()) === before) break;
      }
      // PGlite runs in this process: a long catch-up holds the event loop past the server's
      // keep-alive, whose socket closes must be seen before the next request reuses one.
      await new Promise((resolve) => setTimeout(resolve, 100));
    };
    const fromLeads = async () => {
      // As on a database no rollup has reached: every number from the leads and the daily counts.
      await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(db);
      await sql`delete from lead_stats_daily`.execute(db);
      const a = await answers();
      await catchUp(); // starts over: the period rollup is emptied and rolled again
      return a;
    };

    const expected = await fromLeads();
    // The period rollup holds every whole day, week and month through yesterday.
    expect(await marks()).toEqual({ rolled: day(1), periods: day(1) });
    const { rows: units } = await sql<{ unit: string }>`
      select distinct unit from lead_stats_periods order by unit`.execute(db);
    expect(units.map((u) => u.unit)).toEqual(["day", "month", "week"]);
    const got = await answers();
    for (const [i, a] of got.entries()) expect(a, [...queries, ...publicQueries][i]).toEqual(expected[i]);
    // Something to compare: refusals, medians, every provider.
    const month = expected[0] as Json;
    expect(month.totals.accepted).toBe(
      sizes.reduce((n, s) => n + s, 0) - (await countOlderThan(db, providers, yearAgo)),
    );
    expect(month.totals.rejected.invalid_zip).toBeGreaterThan(0);
    expect(month.totals.median_hours_to_quote).not.toBeNull();

    // A past lead moves: its day, week and month are rolled again, and answer as the leads do.
    const { rows: moved } = await sql<{ id: string }>`
      select id from leads where provider_id = ${big.id} and quoted_at is null and created_at < now() - interval '20 days'
      order by id limit 1`.execute(db);
    const movedId = moved[0]?.id as string;
    await sql`update leads set quoted_at = created_at + interval '5 hours', state = 'QUOTE' where id = ${movedId}`.execute(
      db,
    );
    await sql`
      insert into lead_state_history (lead_id, from_state, to_state, lead_status, changed_at, actor)
      values (${movedId}, 'LEAD', 'QUOTE', 'QUOTE', now() - interval '1 second', 'test')`.execute(db);
    await rollup.runOnce();
    // The running totals the ranking reads moved with it: on every day, each provider's are its
    // day rows summed through that day.
    expect(await runningMismatches(db)).toEqual({ rows: expect.any(Number), wrong: 0 });
    expect((await runningMismatches(db))?.rows).toBeGreaterThan(3 * 300);
    const afterMove = await answers();
    expect((afterMove[0] as Json).totals.quoted).toBe(month.totals.quoted + 1);
    const recomputed = await fromLeads();
    for (const [i, a] of afterMove.entries()) expect(a, [...queries, ...publicQueries][i]).toEqual(recomputed[i]);

    // group_by=provider pages: ranked by the column asked for, every provider once, totals of all.
    const base = `/api/v1/admin/stats/?from=${yearAgo}&to=${today}&granularity=month&group_by=provider&sort=-accepted&page_size=2`;
    const first = await j(t.call("GET", base, { auth: admin }));
    const firstIds = [...new Set(first.periods.map((r: Json) => r.group))];
    expect(firstIds).toEqual([String(providers[0]?.id), String(providers[1]?.id)]);
    expect(first.totals).toEqual((recomputed[0] as Json).totals);
    expect(first.next_page_token).toEqual(expect.any(String));
    const secondRes = await t.call("GET", first.next, { auth: admin });
    const second = (await secondRes.json()) as Json;
    expect([...new Set(second.periods.map((r: Json) => r.group))]).toEqual([String(providers[2]?.id)]);
    expect(second.next_page_token).toBeNull();
    const csv = await t.call("GET", base, { auth: admin, headers: { accept: "text/csv" } });
    expect(csv.headers.get("link")).toContain("page_token=");
    const ascending = await j(t.call("GET", base.replace("-accepted", "accepted"), { auth: admin }));
    expect(ascending.periods[0].group).toBe(String(providers[2]?.id));

    // Bad input names the field.
    const field = async (path: string) => {
      const r = await t.call("GET", path, { auth: admin });
      expect(r.status, path).toBe(400);
      return ((await r.json()) as Json).errors.map((e: Json) => e.field);
    };
    expect(await field(`${base}&page_token=${first.next_page_token.replace(/^\d+/, "7")}x`)).toContain("page_token");
    expect(await field(base.replace("page_size=2", "page_size=0"))).toContain("page_size");
    expect(await field(base.replace("sort=-accepted", "sort=-name"))).toContain("sort");
    // A token of another query (another sort) is not this one's.
    expect(await field(`${base.replace("-accepted", "-ordered")}&page_token=${first.next_page_token}`)).toContain(
      "page_token",
    );
    expect(await field(`/api/v1/admin/stats/?group_by=sub_id&page_size=5`)).toContain("page_size");
  }, 300_000);
});

/** lead_stats_running's rows, and those not equal to their provider's day rows summed through their day. */
async function runningMismatches(db: TestApp["app"]["database"]["db"]) {
  const { rows } = await sql<{ rows: number; wrong: number }>`
    select count(*)::int as rows, (count(*) filter (where (r.accepted, r.duplicates, r.quoted, r.ordered, r.refused, r.last_lead_at)
             is distinct from (s.accepted, s.duplicates, s.quoted, s.ordered, s.refused, s.last_lead_at)))::int as wrong
    from lead_stats_running r
    cross join lateral (
      select coalesce(sum(accepted), 0) as accepted, coalesce(sum(duplicates), 0) as duplicates,
             coalesce(sum(quoted), 0) as quoted, coalesce(sum(ordered), 0) as ordered,
             coalesce(sum(refused), 0) as refused, max(last_lead_at) as last_lead_at
      from lead_stats_periods p
      where p.unit = 'day' and p.sub_id is null and p.provider_id = r.provider_id and p.livemode = r.livemode
        and p.period <= r.day) s`.execute(db);
  return rows[0];
}

/** The providers' leads created before `day` (business time). */
async function countOlderThan(db: TestApp["app"]["database"]["db"], providers: { id: number }[], day: string) {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from leads
    where provider_id = any(${providers.map((p) => p.id)}::bigint[])
      and created_at < (${day}::date::timestamp at time zone ${ZONE})`.execute(db);
  return rows[0]?.n ?? 0;
}
