/**
 * The SQL of outcome analytics. Lead counts (by creation time in the business time zone:
 * accepted, flagged duplicates, quoted, ordered and histograms of the hours between) come from
 * the daily rollup (lead_stats_daily: whole past days, and today so far) and, after what it
 * holds, from the leads themselves through (provider_id, livemode, created_at) or (livemode,
 * created_at); refusals come from the daily counts the request log keeps
 * (request_outcomes_daily), never from the log.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import { bucketHours, Histogram } from "./hours-histogram.ts";
import {
  type MergedRow,
  ROLLUP_LOCK,
  readPeriods,
  readPeriodTotals,
  rollPeriodsAgain,
  runningTotalsSource,
} from "./stats-periods.repository.ts";

type Db = Kysely<Database>;

export type Granularity = "day" | "week" | "month";
export type GroupBy = "sub_id" | "provider";

export interface StatsScope {
  readonly livemode: boolean;
  readonly providerId?: number | undefined;
  /** Business days, inclusive (YYYY-MM-DD). */
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
  readonly groupBy?: GroupBy | undefined;
  /** With group_by=provider: only these providers (a page of them). */
  readonly providerIds?: readonly number[] | undefined;
  readonly zone: string;
}

/** One period and group's counts; `period` and `group` are null in the totals row. */
export interface LeadCounts {
  readonly period: string | null;
  readonly group: string | null;
  readonly accepted: number;
  readonly duplicates: number;
  readonly quoted: number;
  readonly ordered: number;
  /** Refused create requests by code. */
  readonly rejected: Readonly<Record<string, number>>;
  readonly hoursToQuote: number | null;
  readonly hoursToOrder: number | null;
  readonly lastLeadAt: Date | null;
}

const UNITS: Readonly<Record<Granularity, string>> = { day: "day", week: "week", month: "month" };

/** The rollup's provider id for every provider's leads together (real ids start at 1). */
const ALL_PROVIDERS = 0;

/** The day after `day` (YYYY-MM-DD). */
function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/**
 * What the rollups hold: whole business days through `rolledThrough` (lead_stats_daily) and
 * `periodsThrough` (lead_stats_periods, never later), and the next day (today, as a rule) for the
 * leads created before `partial.through`; null where they hold nothing.
 */
export interface RollupCoverage {
  readonly rolledThrough: string | null;
  readonly periodsThrough: string | null;
  readonly partial: { readonly day: string; readonly through: Date } | null;
}

export async function rollupCoverage(db: Db): Promise<RollupCoverage> {
  const { rows } = await sql<{
    rolled: string | null;
    periods: string | null;
    today: string | null;
    through: Date | null;
  }>`
    select rolled_through::text as rolled, periods_through::text as periods, today::text as today, today_through as through
    from lead_stats_rollup where id = 1`.execute(db);
  const r = rows[0];
  const rolled = r?.rolled ?? null;
  // Rows of a day the job has since rolled up whole, or not yet reached, are not today's.
  const partial =
    rolled !== null && r?.today === nextDay(rolled) && r.through !== null
      ? { day: r.today, through: new Date(r.through) }
      : null;
  const periods = r?.periods ?? null;
  return {
    rolledThrough: rolled,
    periodsThrough: periods !== null && rolled !== null && periods <= rolled ? periods : null,
    partial,
  };
}

/** The last business day the rollup holds (null before its first run). */
export async function rolledThrough(db: Db): Promise<string | null> {
  const { rows } = await sql<{ day: string | null }>`
    select rolled_through::text as day from lead_stats_rollup where id = 1`.execute(db);
  return rows[0]?.day ?? null;
}

/** The last business day lead_stats_periods holds (null before the job's first run). */
export async function periodsThrough(db: Db): Promise<string | null> {
  return (await rollupCoverage(db)).periodsThrough;
}

/** A quoted lead's hours from creation to QUOTE, and an ordered one's from QUOTE to ORDER. */
const QUOTE_HOURS = sql`extract(epoch from quoted_at - created_at)::float8 / 3600`;
const ORDER_HOURS = sql`extract(epoch from ordered_at - quoted_at)::float8 / 3600`;

/**
 * Reads in one read-only repeatable-read snapshot (the watermarks and the rows they cover),
 * without parallel workers or JIT: every read here is a bounded index scan of at most a few
 * thousand rollup rows, which a worker's start (5 to 7 ms on two cores) or a compilation would
 * multiply (a page of providers by month: 9 ms in a parallel plan, 3 ms without).
 */
function inSnapshot<T>(db: Db, read: (trx: Db) => Promise<T>): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute(async (trx) => {
      await sql`select set_config('max_parallel_workers_per_gather', '0', true), set_config('jit', 'off', true)`.execute(
        trx,
      );
      return read(trx);
    });
}

/**
 * The counts, refusals and medians of the scope, per period and group and in total. The
 * rollups' coverage and the rows are read in one snapshot (repeatable read), so a roll-up
 * committing between the reads cannot count a lead twice or not at all. Whole days the period
 * rollup holds come from it, one merged row per period and group; the days after it from
 * lead_stats_daily, the request log's daily counts and, after the rollup's watermark, the leads.
 */
export function leadCounts(db: Db, s: StatsScope): Promise<LeadCounts[]> {
  return inSnapshot(db, (trx) => leadCountsIn(trx, s));
}

/** The part of the range lead_stats_periods holds ([from, periodTo]) and where the rest starts. */
function splitRange(s: { from: string; to: string }, coverage: RollupCoverage) {
  const pt = coverage.periodsThrough;
  const periodTo = pt !== null && pt >= s.from ? (pt < s.to ? pt : s.to) : null;
  return { periodTo, restFrom: periodTo === null ? s.from : nextDay(periodTo) };
}

/** The filters of the scope's provider(s) on lead_stats_daily / the leads / request_outcomes_daily. */
function providerFilters(s: StatsScope) {
  const page = s.providerIds !== undefined ? sql`and provider_id = any(${[...s.providerIds]}::bigint[])` : sql``;
  const rolled =
    s.providerId !== undefined
      ? sql`and provider_id = ${s.providerId}`
      : s.groupBy === "provider"
        ? sql`and provider_id <> ${ALL_PROVIDERS} ${page}`
        : sql`and provider_id = ${ALL_PROVIDERS}`;
  const live = s.providerId !== undefined ? sql`and provider_id = ${s.providerId}` : page;
  return { rolled, live };
}

/** Where the leads after the rollups start, and the end of the range, as instants. */
function liveWindow(s: StatsScope, from: string, coverage: RollupCoverage) {
  const { rolledThrough: rolled, partial } = coverage;
  const today = partial !== null && partial.day >= from && partial.day <= s.to ? partial : null;
  const liveFrom = rolled !== null && rolled >= from ? nextDay(rolled) : from;
  const end = sql`((${s.to}::date + 1)::timestamp at time zone ${s.zone})`;
  const start =
    today !== null
      ? sql`greatest(${today.through}::timestamptz, ${today.day}::date::timestamp at time zone ${s.zone})`
      : sql`(${liveFrom}::date::timestamp at time zone ${s.zone})`;
  return { today, start, end };
}

async function leadCountsIn(db: Db, s: StatsScope): Promise<LeadCounts[]> {
  const coverage = await rollupCoverage(db);
  const { periodTo, restFrom } = splitRange(s, coverage);
  const rest = restFrom <= s.to;
  // A page of providers needs no totals here: they are every provider's (stats.service.ts).
  const withTotals = s.providerIds === undefined;
  const periodRows: RawRow[] = [];
  const totals: RawRow[] = [];
  if (periodTo !== null) {
    const read = { livemode: s.livemode, from: s.from, to: periodTo, providerId: s.providerId };
    periodRows.push(
      ...(await readPeriods(db, {
        ...read,
        granularity: s.granularity,
        groupBy: s.groupBy,
        providerIds: s.providerIds,
      })),
    );
    if (withTotals) totals.push(...(await readPeriodTotals(db, read)));
  }
  const restRows = rest
    ? [...(await restLeadRows(db, s, restFrom, coverage)), ...(await restRefusalRows(db, s, restFrom))]
    : [];
  return mergeCells(periodRows, restRows, totals);
}

/** A row of counts, histograms and refusals of one period and group, from any source. */
type RawRow = Omit<MergedRow, "refused" | "refusal_codes" | "refusal_counts" | "quote_median" | "order_median"> & {
  readonly refusal_codes?: string[];
  readonly refusal_counts?: number[];
  /** A whole period's median buckets, kept with its row (no histogram comes with it). */
  readonly quote_median?: number[] | null;
  readonly order_median?: number[] | null;
};

/**
 * The days from `from` on, as stats read them before the period rollup: lead_stats_daily up to
 * the day it has reached, today's leads up to its partial watermark too, the rest from the leads.
 */
async function restLeadRows(db: Db, s: StatsScope, from: string, coverage: RollupCoverage): Promise<RawRow[]> {
  const unit = UNITS[s.granularity];
  const rolled = coverage.rolledThrough;
  const hasRolled = rolled !== null && rolled >= from;
  const { today, start: liveStart, end } = liveWindow(s, from, coverage);
  const providers = providerFilters(s);
  const groupRolled =
    s.groupBy === "sub_id" ? sql`sub_id` : s.groupBy === "provider" ? sql`provider_id::text` : sql`''`;
  const groupLive =
    s.groupBy === "sub_id" ? sql`coalesce(sub_id, '')` : s.groupBy === "provider" ? sql`provider_id::text` : sql`''`;
  const rolledDays = [
    ...(hasRolled ? [sql`day <= least(${s.to}::date, ${rolled}::date)`] : []),
    ...(today !== null ? [sql`day = ${today.day}::date`] : []),
  ];
  // One row per day and group from the rollup, one per period and group of the later days' leads
  // (today, as a rule: summed here per bucket); totals and medians are merged from them below.
  const rolledPart =
    rolledDays.length > 0
      ? sql`
      select to_char(date_trunc(${unit}, day), 'YYYY-MM-DD') as period, ${groupRolled} as grp, accepted, duplicates,
             quoted, ordered, last_lead_at, to_json(quote_keys) as quote_keys, to_json(quote_counts) as quote_counts,
             to_json(order_keys) as order_keys, to_json(order_counts) as order_counts
      from lead_stats_daily
      where livemode = ${s.livemode} ${providers.rolled} and day >= ${from}::date and (${sql.join(rolledDays, sql` or `)})
      union all`
      : sql``;
  const liveHistogram = (bucket: ReturnType<typeof sql>) => sql`
      select period, grp, json_agg(k order by k) as keys, json_agg(c order by k) as counts
      from (select period, grp, ${bucket} as k, count(*)::int as c from live where ${bucket} is not null group by 1, 2, 3) b
      group by 1, 2`;
  const { rows } = await sql<RawRow>`
    with live as (
      select to_char(date_trunc(${unit}, created_at at time zone ${s.zone}), 'YYYY-MM-DD') as period, ${groupLive} as grp,
             created_at, duplicate, quoted_at, ordered_at,
             hours_bucket(${QUOTE_HOURS}) as qk, hours_bucket(${ORDER_HOURS}) as ok
      from leads
      where livemode = ${s.livemode} ${providers.live} and created_at >= ${liveStart} and created_at < ${end}
    ),
    live_counts as (
      select period, grp, count(*)::int as accepted, (count(*) filter (where duplicate is not null))::int as duplicates,
             count(quoted_at)::int as quoted, count(ordered_at)::int as ordered, max(created_at) as last_lead_at
      from live group by 1, 2
    ),
    live_quote as (${liveHistogram(sql`qk`)}),
    live_order as (${liveHistogram(sql`ok`)})
    ${rolledPart}
    select c.period, c.grp, c.accepted, c.duplicates, c.quoted, c.ordered, c.last_lead_at,
           coalesce(q.keys, '[]') as quote_keys, coalesce(q.counts, '[]') as quote_counts,
           coalesce(o.keys, '[]') as order_keys, coalesce(o.counts, '[]') as order_counts
    from live_counts c left join live_quote q using (period, grp) left join live_order o using (period, grp)`.execute(
    db,
  );
  return rows;
}

/** The refusals of the days from `from` on, per period, group and code, from the request log's daily counts. */
async function restRefusalRows(db: Db, s: StatsScope, from: string): Promise<RawRow[]> {
  const unit = UNITS[s.granularity];
  const group =
    s.groupBy === "sub_id" ? sql<string>`sub_id` : s.groupBy === "provider" ? sql<string>`provider_id::text` : sql`''`;
  const provider =
    s.providerId !== undefined
      ? sql`and provider_id = ${s.providerId}`
      : s.providerIds !== undefined
        ? sql`and provider_id = any(${[...s.providerIds]}::bigint[])`
        : sql``;
  const { rows } = await sql<{ period: string; grp: string; code: string; requests: string | number }>`
    with per_day as (
      -- Summed per day first: the period is formatted once per day and group, not once per row.
      select day, ${group} as grp, code, sum(requests) as requests
      from request_outcomes_daily
      where livemode = ${s.livemode} ${provider} and day >= ${from}::date and day <= ${s.to}::date and code <> ''
      group by 1, 2, 3
    )
    select to_char(date_trunc(${unit}, day), 'YYYY-MM-DD') as period, grp, code, sum(requests) as requests
    from per_day
    group by 1, 2, 3`.execute(db);
  return rows.map((r) => ({
    period: r.period,
    grp: r.grp,
    accepted: 0,
    duplicates: 0,
    quoted: 0,
    ordered: 0,
    last_lead_at: null,
    quote_keys: [],
    quote_counts: [],
    order_keys: [],
    order_counts: [],
    refusal_codes: [r.code],
    refusal_counts: [Number(r.requests)],
  }));
}

/**
 * The rows summed per period and group, and the totals (period and group null): the totals rows of
 * the period rollup's part with the later days' rows. A period's median is its histogram's, or
 * the one kept with its only row.
 */
function mergeCells(
  periodRows: readonly RawRow[],
  restRows: readonly RawRow[],
  totals: readonly RawRow[],
): LeadCounts[] {
  const cells = new Map<string, Cell>();
  const cellOf = (period: string | null, group: string | null) => {
    const key = period === null ? "" : `${period}\u0000${group}`;
    let cell = cells.get(key);
    if (cell === undefined) {
      cell = {
        period,
        group,
        accepted: 0,
        duplicates: 0,
        quoted: 0,
        ordered: 0,
        rejected: {},
        lastLeadAt: null,
        toQuote: new Histogram(),
        toOrder: new Histogram(),
        quoteMedian: null,
        orderMedian: null,
      };
      cells.set(key, cell);
    }
    return cell;
  };
  const add = (cell: Cell, r: RawRow) => {
    cell.accepted += Number(r.accepted);
    cell.duplicates += Number(r.duplicates);
    cell.quoted += Number(r.quoted);
    cell.ordered += Number(r.ordered);
    const last = r.last_lead_at === null ? null : new Date(r.last_lead_at);
    if (last !== null && (cell.lastLeadAt === null || last > cell.lastLeadAt)) cell.lastLeadAt = last;
    cell.toQuote.add(r.quote_keys, r.quote_counts);
    cell.toOrder.add(r.order_keys, r.order_counts);
    if (r.quote_median) cell.quoteMedian = r.quote_median;
    if (r.order_median) cell.orderMedian = r.order_median;
    const codes = r.refusal_codes ?? [];
    const counts = r.refusal_counts ?? [];
    for (let i = 0; i < codes.length; i += 1) {
      const code = codes[i] as string;
      cell.rejected[code] = (cell.rejected[code] ?? 0) + Number(counts[i]);
    }
  };
  const total = cellOf(null, null);
  for (const r of periodRows) add(cellOf(r.period, r.grp), r);
  for (const r of restRows) {
    add(cellOf(r.period, r.grp), r);
    add(total, r);
  }
  for (const r of totals) add(total, r);
  const median = (h: Histogram, kept: number[] | null) =>
    !h.isEmpty() || kept === null ? h.median() : (bucketHours(Number(kept[0])) + bucketHours(Number(kept[1]))) / 2;
  return [...cells.values()].map((c) => ({
    period: c.period,
    group: c.group,
    accepted: c.accepted,
    duplicates: c.duplicates,
    quoted: c.quoted,
    ordered: c.ordered,
    rejected: inCodeOrder(c.rejected),
    hoursToQuote: median(c.toQuote, c.quoteMedian),
    hoursToOrder: median(c.toOrder, c.orderMedian),
    lastLeadAt: c.lastLeadAt,
  }));
}

/**
 * The refusals by code, codes in order: as they are when they came in order (a whole period's
 * row, sorted by the rollup: most cells of a long answer), else sorted into a new object.
 */
function inCodeOrder(rejected: Record<string, number>): Record<string, number> {
  let previous = "";
  for (const code in rejected) {
    if (code < previous) return Object.fromEntries(Object.entries(rejected).sort(([a], [b]) => (a < b ? -1 : 1)));
    previous = code;
  }
  return rejected;
}

interface Cell {
  readonly period: string | null;
  readonly group: string | null;
  accepted: number;
  duplicates: number;
  quoted: number;
  ordered: number;
  readonly rejected: Record<string, number>;
  lastLeadAt: Date | null;
  readonly toQuote: Histogram;
  readonly toOrder: Histogram;
  /** The median buckets kept with a whole period's row. */
  quoteMedian: number[] | null;
  orderMedian: number[] | null;
}

/** The columns providers are ranked by (group_by=provider's `sort`). */
export const RANK_COLUMNS = [
  "provider_id",
  "submitted",
  "accepted",
  "rejected",
  "duplicates",
  "quoted",
  "ordered",
  "last_lead_at",
] as const;
export type RankColumn = (typeof RANK_COLUMNS)[number];

/**
 * One page of the providers with anything in the scope's range, ranked by a column's sum over it
 * (ties by provider id): two rows a provider of lead_stats_running for the days the period
 * rollup holds, whatever the range's length; the days after it from lead_stats_daily and the
 * request log's daily counts, the leads after the rollup's watermark.
 */
export function rankProviders(
  db: Db,
  s: StatsScope,
  sort: { readonly column: RankColumn; readonly descending: boolean },
  offset: number,
  limit: number,
): Promise<number[]> {
  return inSnapshot(db, async (trx) => {
    const coverage = await rollupCoverage(trx);
    const { periodTo, restFrom } = splitRange(s, coverage);
    const parts: ReturnType<typeof sql>[] = [];
    const one = s.providerId !== undefined ? sql`and provider_id = ${s.providerId}` : sql``;
    if (periodTo !== null) parts.push(runningTotalsSource(s.livemode, s.from, periodTo, s.providerId));
    if (restFrom <= s.to) {
      const rolled = coverage.rolledThrough;
      const { today, start, end } = liveWindow(s, restFrom, coverage);
      const days = [
        ...(rolled !== null && rolled >= restFrom ? [sql`day <= least(${s.to}::date, ${rolled}::date)`] : []),
        ...(today !== null ? [sql`day = ${today.day}::date`] : []),
      ];
      if (days.length > 0) {
        parts.push(sql`
          select provider_id, accepted, duplicates, quoted, ordered, 0 as refused, last_lead_at
          from lead_stats_daily
          where livemode = ${s.livemode} and provider_id <> ${ALL_PROVIDERS} ${one} and day >= ${restFrom}::date
            and (${sql.join(days, sql` or `)})`);
      }
      parts.push(sql`
        select provider_id, 1 as accepted, (duplicate is not null)::int as duplicates, (quoted_at is not null)::int as quoted,
               (ordered_at is not null)::int as ordered, 0 as refused, created_at as last_lead_at
        from leads where livemode = ${s.livemode} ${one} and created_at >= ${start} and created_at < ${end}`);
      parts.push(sql`
        select provider_id, 0, 0, 0, 0, requests, null
        from request_outcomes_daily
        where livemode = ${s.livemode} ${one} and day >= ${restFrom}::date and day <= ${s.to}::date and code <> ''`);
    }
    const value: Record<RankColumn, ReturnType<typeof sql>> = {
      provider_id: sql`provider_id`,
      submitted: sql`sum(accepted) + sum(refused)`,
      accepted: sql`sum(accepted)`,
      rejected: sql`sum(refused)`,
      duplicates: sql`sum(duplicates)`,
      quoted: sql`sum(quoted)`,
      ordered: sql`sum(ordered)`,
      last_lead_at: sql`max(last_lead_at)`,
    };
    const direction = sql.raw(sort.descending ? "desc nulls last" : "asc nulls first");
    const { rows } = await sql<{ provider_id: string | number }>`
      select provider_id from (${sql.join(parts, sql` union all `)}) x
      group by provider_id
      order by ${value[sort.column]} ${direction}, provider_id ${sql.raw(sort.descending && sort.column === "provider_id" ? "desc" : "asc")}
      limit ${limit} offset ${offset}`.execute(trx);
    return rows.map((r) => Number(r.provider_id));
  });
}

/** One period and group's returned leads; `period` and `group` are null in the totals row. */
export interface ReturnCount {
  readonly period: string | null;
  readonly group: string | null;
  readonly returned: number;
}

/**
 * The scope's leads whose return was approved (returns/, table lead_returns), counted in the
 * period the lead was accepted in, so `returned / accepted` is the share of those leads given back.
 */
export async function returnCounts(db: Db, s: StatsScope): Promise<ReturnCount[]> {
  const unit = UNITS[s.granularity];
  const group =
    s.groupBy === "sub_id"
      ? sql`coalesce(l.sub_id, '')`
      : s.groupBy === "provider"
        ? sql`l.provider_id::text`
        : sql`''`;
  const provider =
    s.providerId !== undefined
      ? sql`and r.provider_id = ${s.providerId}`
      : s.providerIds !== undefined
        ? sql`and r.provider_id = any(${[...s.providerIds]}::bigint[])`
        : sql``;
  const { rows } = await sql<{ period: string | null; grp: string | null; returned: string | number }>`
    select to_char(date_trunc(${unit}, l.created_at at time zone ${s.zone}), 'YYYY-MM-DD') as period, ${group} as grp,
           count(*) as returned
    from lead_returns r join leads l on l.id = r.lead_id
    where r.state = 'approved' and r.livemode = ${s.livemode} ${provider}
      and l.created_at >= (${s.from}::date::timestamp at time zone ${s.zone})
      and l.created_at < ((${s.to}::date + 1)::timestamp at time zone ${s.zone})
    group by grouping sets ((1, 2), ())`.execute(db);
  return rows.map((r) => ({
    period: r.period,
    group: r.period === null ? null : r.grp,
    returned: Number(r.returned),
  }));
}

/** Provider names by id (the admin's group_by=provider). */
export async function providerNames(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("providers").select(["id", "name"]).where("id", "in", ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}

/**
 * One business day's leads, per provider, mode and sub_id, as lead_stats_daily holds them; or,
 * with `allProviders`, every provider's together (provider 0).
 */
function rollupSelect(zone: string, day: string, where: ReturnType<typeof sql>, allProviders = false) {
  const provider = allProviders ? sql`${ALL_PROVIDERS}::bigint` : sql`provider_id`;
  const histogram = (bucket: ReturnType<typeof sql>) => sql`
      select provider_id, livemode, sub_id, array_agg(k order by k) as keys, array_agg(n order by k) as counts
      from (select provider_id, livemode, sub_id, ${bucket} as k, count(*)::int as n
            from day_leads where ${bucket} is not null group by 1, 2, 3, 4) per_bucket
      group by 1, 2, 3`;
  return sql`
    with day_leads as (
      select ${provider} as provider_id, livemode, coalesce(sub_id, '') as sub_id, created_at, duplicate, quoted_at, ordered_at,
             hours_bucket(${QUOTE_HOURS}) as quote_key, hours_bucket(${ORDER_HOURS}) as order_key
      from leads
      -- Both modes named, so the day is two ranges of leads_mode_created_idx (livemode, created_at);
      -- without it the scan read the whole index for one day (325 ms against 34 at 5M leads).
      where livemode in (true, false)
        and created_at >= (${day}::date::timestamp at time zone ${zone})
        and created_at < ((${day}::date + 1)::timestamp at time zone ${zone}) ${where}
    ),
    counts as (
      select provider_id, livemode, sub_id, count(*)::int as accepted,
             (count(*) filter (where duplicate is not null))::int as duplicates,
             count(quoted_at)::int as quoted, count(ordered_at)::int as ordered, max(created_at) as last_lead_at
      from day_leads group by 1, 2, 3
    ),
    to_quote as (${histogram(sql`quote_key`)}),
    to_order as (${histogram(sql`order_key`)})
    select c.provider_id, c.livemode, ${day}::date, c.sub_id, c.accepted, c.duplicates, c.quoted, c.ordered, c.last_lead_at,
           coalesce(q.keys, '{}'), coalesce(q.counts, '{}'), coalesce(o.keys, '{}'), coalesce(o.counts, '{}')
    from counts c
    left join to_quote q using (provider_id, livemode, sub_id)
    left join to_order o using (provider_id, livemode, sub_id)`;
}

const COLUMNS = sql`(provider_id, livemode, day, sub_id, accepted, duplicates, quoted, ordered, last_lead_at, quote_keys, quote_counts, order_keys, order_counts)`;

/**
 * Rolls up one whole business day and moves the watermark to it, in one transaction; false when
 * another instance holds the rollup's lock.
 */
export async function rollUpDay(db: Db, zone: string, day: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${ROLLUP_LOCK}) as ok`.execute(trx);
    if (!rows[0]?.ok) return false;
    await sql`delete from lead_stats_daily where day = ${day}::date`.execute(trx);
    await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, day, sql``)}`.execute(trx);
    await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, day, sql``, true)}`.execute(trx);
    await sql`update lead_stats_rollup set rolled_through = ${day}::date, updated_at = now() where id = 1`.execute(trx);
    return true;
  });
}

/**
 * Rolls up the leads of `day` (today) created more than `lagSeconds` ago by the database's clock
 * (the clock of created_at; at most to the day's end), replacing its rows of an earlier run, and
 * records how far; false when another instance holds the rollup's lock, or `day` no longer
 * follows the last whole day rolled up (another instance rolled it up whole meanwhile).
 */
export async function rollUpToday(db: Db, zone: string, day: string, lagSeconds: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean; through: Date | null }>`
      select pg_try_advisory_xact_lock(${ROLLUP_LOCK}) as ok,
             least(now() - make_interval(secs => ${lagSeconds}), (${day}::date + 1)::timestamp at time zone ${zone}) as through
      from lead_stats_rollup where id = 1 and rolled_through = ${day}::date - 1`.execute(trx);
    const found = rows[0];
    if (!found?.ok || found.through === null) return false;
    const through = new Date(found.through);
    const before = sql`and created_at < ${through}::timestamptz`;
    await sql`delete from lead_stats_daily where day = ${day}::date`.execute(trx);
    await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, day, before)}`.execute(trx);
    await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, day, before, true)}`.execute(trx);
    await sql`update lead_stats_rollup set today = ${day}::date, today_through = ${through}::timestamptz, updated_at = now() where id = 1`.execute(
      trx,
    );
    return true;
  });
}

/**
 * The days whose leads moved (history after `afterId`, at least `lagSeconds` old, so a move whose
 * transaction commits late is not skipped), and the history id reached.
 */
export async function movedDays(
  db: Db,
  zone: string,
  afterId: number,
  limit: number,
  lagSeconds: number,
): Promise<{ keys: { providerId: number; livemode: boolean; day: string }[]; lastId: number }> {
  const { rows } = await sql<{ id: string | number; provider_id: string | number; livemode: boolean; day: string }>`
    select h.id, l.provider_id, l.livemode, to_char(l.created_at at time zone ${zone}, 'YYYY-MM-DD') as day
    from lead_state_history h join leads l on l.id = h.lead_id
    where h.id > ${afterId} and h.changed_at < now() - make_interval(secs => ${lagSeconds})
    order by h.id limit ${limit}`.execute(db);
  const seen = new Map<string, { providerId: number; livemode: boolean; day: string }>();
  for (const r of rows) {
    seen.set(`${r.provider_id}|${r.livemode}|${r.day}`, {
      providerId: Number(r.provider_id),
      livemode: r.livemode,
      day: r.day,
    });
  }
  const last = rows.at(-1);
  return { keys: [...seen.values()], lastId: last ? Number(last.id) : afterId };
}

/** Rolls up again the given provider-days (their leads moved) and moves the history watermark. */
export async function rollUpAgain(
  db: Db,
  zone: string,
  keys: readonly { providerId: number; livemode: boolean; day: string }[],
  lastId: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${ROLLUP_LOCK}) as ok`.execute(trx);
    if (!rows[0]?.ok) return false;
    const allProviderDays = new Map<string, { livemode: boolean; day: string }>();
    for (const k of keys) {
      await sql`delete from lead_stats_daily where provider_id = ${k.providerId} and livemode = ${k.livemode} and day = ${k.day}::date`.execute(
        trx,
      );
      const where = sql`and provider_id = ${k.providerId} and livemode = ${k.livemode}`;
      await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, k.day, where)}`.execute(trx);
      allProviderDays.set(`${k.livemode}|${k.day}`, { livemode: k.livemode, day: k.day });
    }
    for (const k of allProviderDays.values()) {
      await sql`delete from lead_stats_daily where provider_id = ${ALL_PROVIDERS} and livemode = ${k.livemode} and day = ${k.day}::date`.execute(
        trx,
      );
      const where = sql`and livemode = ${k.livemode}`;
      await sql`insert into lead_stats_daily ${COLUMNS} ${rollupSelect(zone, k.day, where, true)}`.execute(trx);
    }
    await rollPeriodsAgain(trx, keys);
    await sql`update lead_stats_rollup set history_id = ${lastId}, updated_at = now() where id = 1`.execute(trx);
    return true;
  });
}

/** The rollup's watermarks, and the first business day any lead was created on. */
export async function rollupState(
  db: Db,
  zone: string,
): Promise<{ rolledThrough: string | null; historyId: number; firstDay: string | null }> {
  const { rows } = await sql<{ rolled_through: string | null; history_id: string | number; first_day: string | null }>`
    select rolled_through::text as rolled_through, history_id,
           to_char(least((select min(created_at) from leads where livemode), (select min(created_at) from leads where not livemode))
                   at time zone ${zone}, 'YYYY-MM-DD') as first_day
    from lead_stats_rollup where id = 1`.execute(db);
  const r = rows[0];
  return {
    rolledThrough: r?.rolled_through ?? null,
    historyId: Number(r?.history_id ?? 0),
    firstDay: r?.first_day ?? null,
  };
}
