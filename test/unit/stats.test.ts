/**
 * Outcome analytics, rule by rule: the median hours' histograms (src/stats/hours-histogram.ts),
 * the rollup's choice of days (src/stats/rollup-plan.ts), and the stats a provider and an
 * administrator read (src/stats/stats.service.ts) on a real in-memory PGlite holding leads and
 * the request log's daily outcome counts. `make mutation` runs it.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { DomainError } from "../../src/errors.ts";
import { bucketHours, Histogram } from "../../src/stats/hours-histogram.ts";
import {
  daysToRollUp,
  lastWholeDay,
  MAX_DAYS_PER_RUN,
  movedDaysToRollAgain,
  rollsTodayUp,
  shiftDay,
} from "../../src/stats/rollup-plan.ts";
import { createStatsService, MAX_DAYS, type StatsService } from "../../src/stats/stats.service.ts";
import { nextPeriod, periodEnd, periodStart, segments } from "../../src/stats/stats-periods.repository.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

const NY = "America/New_York";
/** The bucket of `key` stands for 2·0.01·1.02^key / 2.02 hours; 0.005 for bucket 0 and below (written out). */
const stands = (key: number) => (key <= 0 ? 0.005 : (0.02 * 1.02 ** key) / 2.02);

describe("the hours histograms", () => {
  it("gives each bucket the hours midway (relatively) between its ends", () => {
    expect(bucketHours(0)).toBe(0.005);
    expect(bucketHours(-4)).toBe(0.005);
    for (const k of [1, 2, 35, 100, 500]) expect(bucketHours(k)).toBeCloseTo(stands(k), 12);
    // Bucket k holds (0.01·1.02^(k−1), 0.01·1.02^k]: its hours are as far from either end,
    // relative to that end, (1.02 − 1)/(1.02 + 1) < 1 %.
    const k = 200;
    const [low, high] = [0.01 * 1.02 ** (k - 1), 0.01 * 1.02 ** k];
    const mid = bucketHours(k);
    expect((high - mid) / high).toBeCloseTo((mid - low) / low, 12);
    expect((high - mid) / high).toBeCloseTo(0.02 / 2.02, 12);
  });

  it("has no median when empty", () => {
    expect(new Histogram().median()).toBeNull();
    const h = new Histogram();
    h.add([], []);
    expect(h.median()).toBeNull();
  });

  it("reads the median as percentile_cont does: the middle value, or the mean of the two middle ones", () => {
    const one = new Histogram();
    one.add([5], [1]);
    expect(one.median()).toBe(stands(5));
    const even = new Histogram();
    even.add([3, 1], [1, 1]);
    expect(even.median()).toBeCloseTo((stands(1) + stands(3)) / 2, 12);
    // 1 1 2 9 9 (keys given out of order, in two parts).
    const odd = new Histogram();
    odd.add([9, 1], [2, 2]);
    odd.add([2], [1]);
    expect(odd.median()).toBe(stands(2));
    // 1 2 3 3: ranks 1 and 2 (0-based) are 2 and 3.
    const ranks = new Histogram();
    ranks.add([1, 2, 3], [1, 1, 2]);
    expect(ranks.median()).toBeCloseTo((stands(2) + stands(3)) / 2, 12);
    // 1 1 2 3: ranks 1 and 2 are 1 and 2.
    const low = new Histogram();
    low.add([1, 2, 3], [2, 1, 1]);
    expect(low.median()).toBeCloseTo((stands(1) + stands(2)) / 2, 12);
  });

  it("adds counts of the same bucket, and reads keys and counts the driver gives as text", () => {
    const h = new Histogram();
    h.add(["4", "7"] as unknown as number[], ["3", "1"] as unknown as number[]);
    h.add([7], [3]);
    // 4 4 4 7 7 7 7
    expect(h.median()).toBe(stands(7));
  });
});

describe("the rollup's days", () => {
  it("shifts calendar days across months and years", () => {
    expect(shiftDay("2026-11-30", 1)).toBe("2026-12-01");
    expect(shiftDay("2027-01-01", -1)).toBe("2026-12-31");
    expect(shiftDay("2026-03-08", 1)).toBe("2026-03-09"); // a daylight-saving day in New York
    expect(shiftDay("2026-11-25", 0)).toBe("2026-11-25");
  });

  it("counts a business day whole once the lag has passed its end", () => {
    // 00:00:20 on 25 November in New York.
    const justAfter = new Date("2026-11-25T05:00:20Z");
    expect(lastWholeDay(justAfter, NY, 30)).toBe("2026-11-23");
    expect(lastWholeDay(justAfter, NY, 10)).toBe("2026-11-24");
    expect(lastWholeDay(justAfter, NY, 0)).toBe("2026-11-24");
    expect(lastWholeDay(justAfter, "UTC", 0)).toBe("2026-11-24");
    expect(lastWholeDay(new Date("2026-11-25T04:59:59Z"), NY, 0)).toBe("2026-11-23");
  });

  it("rolls up from the day after the watermark through the last whole day", () => {
    const at = { rolledThrough: "2026-11-20", firstDay: "2026-01-01" };
    expect(daysToRollUp(at, "2026-11-23")).toEqual(["2026-11-21", "2026-11-22", "2026-11-23"]);
    expect(daysToRollUp(at, "2026-11-21")).toEqual(["2026-11-21"]);
    expect(daysToRollUp(at, "2026-11-20")).toEqual([]);
    expect(daysToRollUp(at, "2026-11-19")).toEqual([]);
  });

  it("starts a first run at the first lead's day, a month at a time", () => {
    expect(MAX_DAYS_PER_RUN).toBe(31);
    const first = daysToRollUp({ rolledThrough: null, firstDay: "2026-11-01" }, "2026-12-15");
    expect(first).toHaveLength(31);
    expect(first[0]).toBe("2026-11-01");
    expect(first.at(-1)).toBe("2026-12-01");
    expect(daysToRollUp({ rolledThrough: null, firstDay: "2026-11-01" }, "2026-11-03")).toEqual([
      "2026-11-01",
      "2026-11-02",
      "2026-11-03",
    ]);
    expect(daysToRollUp({ rolledThrough: null, firstDay: "2026-11-01" }, "2026-11-05", 2)).toEqual([
      "2026-11-01",
      "2026-11-02",
    ]);
    // No lead yet, or none before the last whole day: that day only.
    expect(daysToRollUp({ rolledThrough: null, firstDay: null }, "2026-11-03")).toEqual(["2026-11-03"]);
    expect(daysToRollUp({ rolledThrough: null, firstDay: "2026-11-03" }, "2026-11-03")).toEqual(["2026-11-03"]);
    expect(daysToRollUp({ rolledThrough: null, firstDay: "2026-11-04" }, "2026-11-03")).toEqual(["2026-11-03"]);
    // A run catching up after a month away also stops at 31.
    expect(daysToRollUp({ rolledThrough: "2026-10-01", firstDay: null }, "2026-12-15")).toHaveLength(31);
  });

  it("rolls up again only the moved days it holds whole, and today once every whole day is", () => {
    const moved = [
      { day: "2026-11-20", providerId: 1 },
      { day: "2026-11-23", providerId: 2 },
      { day: "2026-11-24", providerId: 1 },
    ];
    expect(movedDaysToRollAgain(moved, "2026-11-23")).toEqual(moved.slice(0, 2));
    expect(movedDaysToRollAgain(moved, "2026-11-19")).toEqual([]);
    expect(rollsTodayUp("2026-11-23", "2026-11-23")).toBe(true);
    expect(rollsTodayUp("2026-11-22", "2026-11-23")).toBe(false);
    expect(rollsTodayUp(null, "2026-11-23")).toBe(false);
  });
});

describe("the period rollup's periods", () => {
  it("starts ISO weeks on Monday and months on the 1st, and ends them the day before the next", () => {
    expect(periodStart("week", "2026-11-29")).toBe("2026-11-23"); // a Sunday
    expect(periodStart("week", "2026-11-30")).toBe("2026-11-30"); // a Monday
    expect(periodStart("week", "2027-01-01")).toBe("2026-12-28"); // across a year
    expect(periodStart("month", "2024-02-29")).toBe("2024-02-01");
    expect(periodStart("day", "2026-11-29")).toBe("2026-11-29");
    expect(periodEnd("week", "2026-11-25")).toBe("2026-11-29");
    expect(periodEnd("month", "2024-02-10")).toBe("2024-02-29");
    expect(periodEnd("month", "2026-12-31")).toBe("2026-12-31");
    expect(nextPeriod("month", "2026-12-01")).toBe("2027-01-01");
    expect(nextPeriod("week", "2026-12-28")).toBe("2027-01-04");
  });

  it("reads a range as its whole periods and, at either end, the days outside them", () => {
    expect(segments("month", "2025-11-29", "2026-11-28")).toEqual([
      { unit: "day", from: "2025-11-29", to: "2025-11-30" },
      { unit: "month", from: "2025-12-01", to: "2026-10-01" },
      { unit: "day", from: "2026-11-01", to: "2026-11-28" },
    ]);
    // On the edges exactly: whole periods only.
    expect(segments("month", "2026-01-01", "2026-03-31")).toEqual([
      { unit: "month", from: "2026-01-01", to: "2026-03-01" },
    ]);
    expect(segments("week", "2026-11-04", "2026-11-29")).toEqual([
      { unit: "day", from: "2026-11-04", to: "2026-11-08" },
      { unit: "week", from: "2026-11-09", to: "2026-11-23" },
    ]);
    // No whole period inside: days.
    expect(segments("week", "2026-11-24", "2026-11-28")).toEqual([
      { unit: "day", from: "2026-11-24", to: "2026-11-28" },
    ]);
    expect(segments("month", "2026-11-02", "2026-11-30")).toEqual([
      { unit: "day", from: "2026-11-02", to: "2026-11-30" },
    ]);
    expect(segments("day", "2026-01-01", "2026-12-31")).toEqual([
      { unit: "day", from: "2026-01-01", to: "2026-12-31" },
    ]);
  });
});

describe("stats (on PGlite)", () => {
  let handle: DatabaseHandle;
  let stats: StatsService;
  // Wednesday 25 November 2026, noon in New York.
  const now = new Date("2026-11-25T17:00:00Z");
  const live = { providerId: 1, livemode: true };
  const bucket = async (hours: number) =>
    Number(
      (await sql<{ k: number }>`select hours_bucket(${hours}::float8) as k`.execute(handle.db)).rows[0]?.k ??
        Number.NaN,
    );
  const round2 = (n: number) => Math.round(n * 100) / 100;

  /** A lead created at `at`, quoted and ordered so many hours later (null: never). */
  async function lead(p: {
    provider?: number;
    livemode?: boolean;
    at: string;
    subId?: string | null;
    quote?: number | null;
    order?: number | null;
    duplicate?: boolean;
  }): Promise<void> {
    const at = new Date(p.at);
    const quoted = p.quote == null ? null : new Date(at.getTime() + p.quote * 3_600_000);
    const ordered = quoted === null || p.order == null ? null : new Date(quoted.getTime() + p.order * 3_600_000);
    await sql`insert into leads (provider_id, livemode, external_id, state, lead_status, first_name, last_name, email,
        phone_number, estimated_ship_date, overseas_type, ship_via, origin_zip, origin_city, origin_state_id,
        origin_state_code, sub_id, duplicate, created_at, updated_at, state_changed_at, quoted_at, ordered_at)
      values (${p.provider ?? 1}::bigint, ${p.livemode ?? true}::boolean, ${`ext-${Math.random()}`}, 'LEAD', 'LEAD', 'A', 'B',
        'a@example.com', '+12125550100', '2026-12-20', 'DOMESTIC', 'OPEN', '10001', 'New York', 33, 'NY',
        ${p.subId ?? null}::text, ${p.duplicate ? '{"matched_on": ["email"]}' : null}::jsonb, ${at}, ${at}, ${at},
        ${quoted}, ${ordered})`.execute(handle.db);
  }
  const refused = (provider: number, livemode: boolean, day: string, subId: string, code: string, requests: number) =>
    sql`insert into request_outcomes_daily (provider_id, livemode, day, sub_id, code, requests)
      values (${provider}::bigint, ${livemode}::boolean, ${day}::date, ${subId}, ${code}, ${requests})`.execute(
      handle.db,
    );

  beforeAll(async () => {
    handle = await openUnitDatabase();
    await sql`insert into providers (name, rate_limit_per_minute, rate_limit_per_day, created_at, updated_at)
      values ('Alpha', 60, 2000, now(), now()), ('Beta', 60, 2000, now(), now())`.execute(handle.db);
    // Monday 23 November there: two leads with sub-sources, one quoted and ordered, one a duplicate.
    await lead({ at: "2026-11-23T15:00:00Z", subId: "a", quote: 2, order: 3 });
    await lead({ at: "2026-11-23T16:00:00Z", subId: "b", quote: 4, duplicate: true });
    // 23:30 on Monday there (Tuesday in UTC), without a sub-source.
    await lead({ at: "2026-11-24T04:30:00Z" });
    // Wednesday 25 November: quoted after an hour.
    await lead({ at: "2026-11-25T14:00:00Z", subId: "a", quote: 1 });
    await lead({ at: "2026-11-02T15:00:00Z", subId: "a" });
    // Not the live provider 1's: a test lead, and provider 2's.
    await lead({ at: "2026-11-24T15:00:00Z", livemode: false, quote: 1 });
    await lead({ provider: 2, at: "2026-11-24T15:00:00Z" });
    await refused(1, true, "2026-11-23", "a", "validation_error", 2);
    await refused(1, true, "2026-11-23", "", "cap_reached", 1);
    await refused(1, true, "2026-11-24", "b", "validation_error", 1);
    await refused(1, true, "2026-11-23", "a", "", 7); // accepted requests: counted from the leads instead
    await refused(1, false, "2026-11-24", "", "validation_error", 5);
    await refused(2, true, "2026-11-24", "", "outside_criteria", 3);
    await refused(99, true, "2026-11-24", "", "duplicate_lead", 1); // a provider without a name
    stats = createStatsService({ db: handle.db, zone: NY, now: () => now });
  }, 180_000); // PGlite's start and migrations, on a busy machine
  afterAll(async () => {
    await handle?.close();
  });

  it("answers each business day of the range with what became of its leads, and the totals", async () => {
    const s = await stats.forProvider(live, { from: "2026-11-23", to: "2026-11-25" });
    expect(s).toMatchObject({
      from: "2026-11-23",
      to: "2026-11-25",
      granularity: "day",
      groupBy: null,
      livemode: true,
      timezone: NY,
    });
    expect(s.rows.map((r) => r.period)).toEqual(["2026-11-23", "2026-11-24", "2026-11-25"]);
    const [monday, tuesday, wednesday] = s.rows;
    expect(monday).toEqual({
      period: "2026-11-23",
      group: null,
      submitted: 6,
      accepted: 3,
      rejected: { cap_reached: 1, validation_error: 2 },
      duplicates: 1,
      billable: 2,
      acceptanceRate: 0.5,
      quoted: 2,
      ordered: 1,
      quoteRate: 0.6667,
      orderRate: 0.3333,
      returned: 0,
      returnRate: 0,
      medianHoursToQuote: round2((stands(await bucket(2)) + stands(await bucket(4))) / 2),
      medianHoursToOrder: round2(stands(await bucket(3))),
      lastLeadAt: new Date("2026-11-24T04:30:00Z"),
    });
    expect(Object.keys(monday?.rejected ?? {})).toEqual(["cap_reached", "validation_error"]);
    expect(tuesday).toEqual({
      period: "2026-11-24",
      group: null,
      submitted: 1,
      accepted: 0,
      rejected: { validation_error: 1 },
      duplicates: 0,
      billable: 0,
      acceptanceRate: 0,
      quoted: 0,
      ordered: 0,
      quoteRate: null,
      orderRate: null,
      returned: 0,
      returnRate: null,
      medianHoursToQuote: null,
      medianHoursToOrder: null,
      lastLeadAt: null,
    });
    // Quoted, never ordered: no median time to order (not 0 hours).
    expect(wednesday).toMatchObject({
      submitted: 1,
      accepted: 1,
      quoted: 1,
      ordered: 0,
      quoteRate: 1,
      orderRate: 0,
      medianHoursToQuote: round2(stands(await bucket(1))),
      medianHoursToOrder: null,
    });
    expect(s.totals).toEqual({
      submitted: 8,
      accepted: 4,
      rejected: { cap_reached: 1, validation_error: 3 },
      duplicates: 1,
      billable: 3,
      acceptanceRate: 0.5,
      quoted: 3,
      ordered: 1,
      quoteRate: 0.75,
      orderRate: 0.25,
      returned: 0,
      returnRate: 0,
      medianHoursToQuote: round2(stands(await bucket(2))),
      medianHoursToOrder: round2(stands(await bucket(3))),
      lastLeadAt: new Date("2026-11-25T14:00:00Z"),
    });
  });

  it("reads the last 30 business days by default, and the key's mode only", async () => {
    const s = await stats.forProvider(live, {});
    expect(s).toMatchObject({ from: "2026-10-27", to: "2026-11-25", granularity: "day" });
    expect(s.rows).toHaveLength(30);
    expect(s.totals.accepted).toBe(5);
    const until = await stats.forProvider(live, { to: "2026-11-10" });
    expect(until).toMatchObject({ from: "2026-10-12", to: "2026-11-10" });
    expect(until.totals.accepted).toBe(1);
    const test = await stats.forProvider({ providerId: 1, livemode: false }, { from: "2026-11-23", to: "2026-11-25" });
    expect(test.livemode).toBe(false);
    expect(test.totals).toMatchObject({ submitted: 6, accepted: 1, quoted: 1, rejected: { validation_error: 5 } });
  });

  it("ends the default range on the business day it is in the zone, to the millisecond, not in UTC", async () => {
    const at = (iso: string) => createStatsService({ db: handle.db, zone: NY, now: () => new Date(iso) });
    // 23:59:59.999 on Wednesday 25 November in New York is 04:59:59.999 on Thursday in UTC.
    expect(await at("2026-11-26T04:59:59.999Z").forProvider(live, {})).toMatchObject({
      from: "2026-10-27",
      to: "2026-11-25",
    });
    expect(await at("2026-11-26T05:00:00.000Z").forProvider(live, {})).toMatchObject({
      from: "2026-10-28",
      to: "2026-11-26",
    });
    // 20:00 on Tuesday 24 November there (01:00 on Wednesday in UTC): Tuesday's, with Monday's 23:30 lead.
    const tuesday = await at("2026-11-25T01:00:00Z").forAdmin({ providerId: "1" });
    expect(tuesday).toMatchObject({ to: "2026-11-24", timezone: NY });
    expect(tuesday.rows.at(-2)).toMatchObject({ period: "2026-11-23", accepted: 3 });
  });

  it("starts weeks on Monday and months on the 1st, listing every period of the range", async () => {
    // From a Wednesday: its week is listed from its Monday, its leads counted from the Wednesday.
    const weeks = await stats.forProvider(live, { from: "2026-11-04", to: "2026-11-25", granularity: "week" });
    expect(weeks.rows.map((r) => [r.period, r.accepted])).toEqual([
      ["2026-11-02", 0],
      ["2026-11-09", 0],
      ["2026-11-16", 0],
      ["2026-11-23", 4],
    ]);
    const fromMonday = await stats.forProvider(live, { from: "2026-11-02", to: "2026-11-22", granularity: "week" });
    expect(fromMonday.rows.map((r) => [r.period, r.accepted])).toEqual([
      ["2026-11-02", 1],
      ["2026-11-09", 0],
      ["2026-11-16", 0],
    ]);
    const months = await stats.forProvider(live, { from: "2026-10-15", to: "2026-11-25", granularity: "month" });
    expect(months.rows.map((r) => [r.period, r.accepted])).toEqual([
      ["2026-10-01", 0],
      ["2026-11-01", 5],
    ]);
    const oneDay = await stats.forProvider(live, { from: "2026-11-25", to: "2026-11-25" });
    expect(oneDay.rows.map((r) => r.period)).toEqual(["2026-11-25"]);
  });

  it("splits by sub-source only where there is something, in period and group order", async () => {
    const s = await stats.forProvider(live, { from: "2026-11-23", to: "2026-11-25", groupBy: "sub_id" });
    expect(s.groupBy).toBe("sub_id");
    expect(s.rows.map((r) => [r.period, r.group, r.accepted, r.submitted])).toEqual([
      ["2026-11-23", "", 1, 2],
      ["2026-11-23", "a", 1, 3],
      ["2026-11-23", "b", 1, 1],
      ["2026-11-24", "b", 0, 1],
      ["2026-11-25", "a", 1, 1],
    ]);
    expect(s.rows.every((r) => r.providerName === undefined)).toBe(true);
    expect(s.totals).toMatchObject({ accepted: 4, submitted: 8 });
  });

  it("gives administrators any provider, every provider, or every provider apart with its name", async () => {
    const one = await stats.forAdmin({ providerId: "1", from: "2026-11-23", to: "2026-11-25" });
    expect(one.totals).toMatchObject({ accepted: 4, submitted: 8 });
    const all = await stats.forAdmin({ from: "2026-11-24", to: "2026-11-24" });
    expect(all.livemode).toBe(true);
    expect(all.totals).toMatchObject({
      accepted: 1,
      rejected: { duplicate_lead: 1, outside_criteria: 3, validation_error: 1 },
      submitted: 6,
    });
    const tests = await stats.forAdmin({ from: "2026-11-24", to: "2026-11-24", livemode: false });
    expect(tests.totals).toMatchObject({ accepted: 1, submitted: 6 });
    const bySource = await stats.forAdmin({ providerId: "1", from: "2026-11-23", to: "2026-11-23", groupBy: "sub_id" });
    expect(bySource.rows.map((r) => [r.group, r.accepted, r.submitted])).toEqual([
      ["", 1, 2],
      ["a", 1, 3],
      ["b", 1, 1],
    ]);
    const apart = await stats.forAdmin({ from: "2026-11-23", to: "2026-11-24", groupBy: "provider" });
    expect(apart.rows.map((r) => [r.period, r.group, r.providerName, r.accepted, r.submitted])).toEqual([
      ["2026-11-23", "1", "Alpha", 3, 6],
      ["2026-11-24", "1", "Alpha", 0, 1],
      ["2026-11-24", "2", "Beta", 1, 4],
      ["2026-11-24", "99", "", 0, 1],
    ]);
  });

  it("names every bad parameter", async () => {
    const violations = async (run: () => Promise<unknown>) => {
      const err = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DomainError);
      return (err as DomainError).violations.map((v) => [v.field, v.code]);
    };
    expect(
      await violations(() => stats.forProvider(live, { from: "2026-02-30", to: "tomorrow", granularity: "year" })),
    ).toEqual([
      ["granularity", "invalid_enum"],
      ["to", "invalid_date"],
      ["from", "invalid_date"],
    ]);
    expect(await violations(() => stats.forProvider(live, { from: "2026-11-25", to: "2026-11-24" }))).toEqual([
      ["from", "out_of_range"],
    ]);
    const reversed = (await stats
      .forProvider(live, { from: "2026-11-25", to: "2026-11-24" })
      .catch((e: unknown) => e)) as DomainError;
    expect(reversed.violations[0]?.message).toBe("from must not be after to");
    expect(await violations(() => stats.forProvider(live, { groupBy: "provider" }))).toEqual([
      ["group_by", "invalid_enum"],
    ]);
    expect(await violations(() => stats.forAdmin({ providerId: "1e0" }))).toEqual([["provider_id", "invalid_id"]]);
    // The longest series: a year and a day of days, five years of weeks or months.
    expect(MAX_DAYS).toEqual({ day: 400, week: 1830, month: 1830 });
    const span = (days: number) => ({ from: shiftDay("2026-11-25", -(days - 1)), to: "2026-11-25" });
    expect((await stats.forProvider(live, span(400))).rows).toHaveLength(400);
    expect(await violations(() => stats.forProvider(live, span(401)))).toEqual([["from", "out_of_range"]]);
    expect((await stats.forProvider(live, { ...span(1830), granularity: "week" })).rows.length).toBeGreaterThan(260);
    expect(await violations(() => stats.forProvider(live, { ...span(1831), granularity: "month" }))).toEqual([
      ["from", "out_of_range"],
    ]);
    const err = (await stats.forProvider(live, span(401)).catch((e: unknown) => e)) as DomainError;
    expect(err.violations[0]?.message).toBe("a day series covers at most 400 days");
    const bad = (await stats.forProvider(live, { from: "x" }).catch((e: unknown) => e)) as DomainError;
    expect(bad.violations[0]?.message).toBe("from must be a real date in YYYY-MM-DD form");
  });
});
