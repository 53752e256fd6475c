/**
 * The SQL of lead_stats_periods (migration 0022): each whole business day, ISO week and month
 * per provider (0: all together), mode and sub-source ('' for none; null: all sub-sources
 * together), with the lead counts and hours histograms of lead_stats_daily and the refusals of
 * request_outcomes_daily side by side. The stats rollup fills it once lead_stats_daily holds a
 * day whole (`periods_through`), and fills again what a move changed; stats read a range's whole
 * periods from it, one row a period and group, and only the days after it the way they read
 * before (stats.repository.ts). A whole period's row is read without its histograms (its median
 * buckets kept with it); the few day and week rows at a range's ends, and a range's totals, come
 * with theirs, merged in TypeScript. The rollup merges in SQL (`merged`). lead_stats_running
 * holds each provider's sums through each day, for ranking providers over any range.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { DateTime } from "luxon";
import type { Database } from "../db/schema.ts";

type Db = Kysely<Database>;

export type PeriodUnit = "day" | "week" | "month";

/** Every column a merged row carries, after its keys. */
const VALUES = [
  "accepted",
  "duplicates",
  "quoted",
  "ordered",
  "refused",
  "last_lead_at",
  "quote_keys",
  "quote_counts",
  "order_keys",
  "order_counts",
  "refusal_codes",
  "refusal_counts",
] as const;
const VALUE_LIST = sql.raw(VALUES.join(", "));

/**
 * The rows of `source` (its `keys` columns and VALUES) merged per key: counts summed, the last
 * lead's time the latest, histograms and refusals added bucket by bucket and code by code. A null
 * key is a key like any other (the all-sub-sources level). One pass of two aggregations and no
 * join: every row's counts and every element of its arrays become rows of one set, summed per
 * key and element, then gathered per key (a join of the parts, planned on a rollup's estimates,
 * could become a nested loop over hundreds of keys).
 */
export function merged(source: RawBuilder<unknown>, keys: readonly string[]): RawBuilder<unknown> {
  const k = sql.raw(keys.join(", "));
  const none = sql`0, 0, 0, 0, 0, null::timestamptz`;
  return sql`
    with src as (${source}),
    parts as (
      select ${k}, 0 as kind, null::smallint as b, null::text as code,
             accepted, duplicates, quoted, ordered, refused, last_lead_at, 0 as n
      from src
      union all
      select ${k}, 1, u.b, null, ${none}, u.n from src, unnest(src.quote_keys, src.quote_counts) as u(b, n)
      union all
      select ${k}, 2, u.b, null, ${none}, u.n from src, unnest(src.order_keys, src.order_counts) as u(b, n)
      union all
      select ${k}, 3, null, u.code, ${none}, u.n from src, unnest(src.refusal_codes, src.refusal_counts) as u(code, n)
    ),
    per_element as (
      select ${k}, kind, b, code, sum(accepted) as accepted, sum(duplicates) as duplicates, sum(quoted) as quoted,
             sum(ordered) as ordered, sum(refused) as refused, max(last_lead_at) as last_lead_at, sum(n)::int as n
      from parts group by ${k}, kind, b, code
    )
    select ${k}, sum(accepted)::int as accepted, sum(duplicates)::int as duplicates, sum(quoted)::int as quoted,
           sum(ordered)::int as ordered, sum(refused)::int as refused, max(last_lead_at) as last_lead_at,
           coalesce(array_agg(b order by b) filter (where kind = 1), '{}') as quote_keys,
           coalesce(array_agg(n order by b) filter (where kind = 1), '{}') as quote_counts,
           coalesce(array_agg(b order by b) filter (where kind = 2), '{}') as order_keys,
           coalesce(array_agg(n order by b) filter (where kind = 2), '{}') as order_counts,
           coalesce(array_agg(code order by code) filter (where kind = 3), '{}') as refusal_codes,
           coalesce(array_agg(n order by code) filter (where kind = 3), '{}') as refusal_counts
    from per_element group by ${k}`;
}

const INSERT = sql`insert into lead_stats_periods (unit, provider_id, livemode, period, sub_id, ${VALUE_LIST}, quote_median, order_median)`;
/** The two middle ranks' buckets of a merged row's histograms (migration 0022's hours_median_keys). */
const MEDIANS = sql`hours_median_keys(quote_keys, quote_counts), hours_median_keys(order_keys, order_counts)`;

/** Narrows a roll to some providers of one mode (their moves), with every provider's row (0) of that mode. */
export interface ProvidersOfMode {
  readonly livemode: boolean;
  readonly providerIds: readonly number[];
}

/**
 * Rolls `day` into lead_stats_periods as unit `day`: lead_stats_daily's rows of the day and the
 * day's refusals, per sub-source and all together; for every provider, or for `only`'s.
 */
export async function rollPeriodDay(db: Db, day: string, only?: ProvidersOfMode): Promise<void> {
  const leadsWhere = only
    ? sql`and d.livemode = ${only.livemode} and (d.provider_id = any(${[...only.providerIds]}::bigint[]) or d.provider_id = 0)`
    : sql``;
  const refusalsWhere = only
    ? sql`and livemode = ${only.livemode} and provider_id = any(${[...only.providerIds]}::bigint[])`
    : sql``;
  const allWhere = only ? sql`and livemode = ${only.livemode}` : sql``;
  const deleteWhere = only
    ? sql`and livemode = ${only.livemode} and (provider_id = any(${[...only.providerIds]}::bigint[]) or provider_id = 0)`
    : sql``;
  await sql`delete from lead_stats_periods where unit = 'day' and period = ${day}::date ${deleteWhere}`.execute(db);
  const source = sql`
    select d.provider_id, d.livemode, s.sub_id, d.accepted, d.duplicates, d.quoted, d.ordered, 0 as refused,
           d.last_lead_at, d.quote_keys, d.quote_counts, d.order_keys, d.order_counts,
           '{}'::text[] as refusal_codes, '{}'::int[] as refusal_counts
    from lead_stats_daily d cross join lateral (values (d.sub_id), (null::text)) as s(sub_id)
    where d.day = ${day}::date ${leadsWhere}
    union all
    select r.provider_id, r.livemode, s.sub_id, 0, 0, 0, 0, r.requests, null,
           '{}'::smallint[], '{}'::int[], '{}'::smallint[], '{}'::int[], array[r.code], array[r.requests]
    from (select provider_id, livemode, sub_id, code, requests
          from request_outcomes_daily where day = ${day}::date and code <> '' ${refusalsWhere}
          union all
          select 0, livemode, sub_id, code, sum(requests)::int
          from request_outcomes_daily where day = ${day}::date and code <> '' ${allWhere}
          group by livemode, sub_id, code) r
    cross join lateral (values (r.sub_id), (null::text)) as s(sub_id)`;
  await sql`${INSERT}
    select 'day', provider_id, livemode, ${day}::date, sub_id, ${VALUE_LIST}, ${MEDIANS}
    from (${merged(source, ["provider_id", "livemode", "sub_id"])}) m`.execute(db);
}

/**
 * Providers per statement of a week's or month's roll of every provider, as a share: each
 * statement merges the day rows of one provider in this many (provider_id modulo), so none
 * takes long enough to meet the database time-out (a month of 2,000 providers at 5M leads is
 * 100,000 day rows).
 */
const PERIOD_CHUNKS = 16;

/** Rolls the week or month starting on `start` up from its day rows; for every provider, or `only`'s. */
export async function rollPeriod(db: Db, unit: "week" | "month", start: string, only?: ProvidersOfMode) {
  const where = only
    ? sql`and livemode = ${only.livemode} and (provider_id = any(${[...only.providerIds]}::bigint[]) or provider_id = 0)`
    : sql``;
  await sql`delete from lead_stats_periods where unit = ${unit} and period = ${start}::date ${where}`.execute(db);
  const chunks = only
    ? [sql``]
    : [...Array(PERIOD_CHUNKS).keys()].map((i) => sql`and provider_id % ${PERIOD_CHUNKS} = ${i}`);
  for (const chunk of chunks) {
    const source = sql`
      select provider_id, livemode, sub_id, ${VALUE_LIST}
      from lead_stats_periods
      where unit = 'day' and period >= ${start}::date and period < ${nextPeriod(unit, start)}::date ${where} ${chunk}`;
    await sql`${INSERT}
      select ${unit}, provider_id, livemode, ${start}::date, sub_id, ${VALUE_LIST}, ${MEDIANS}
      from (${merged(source, ["provider_id", "livemode", "sub_id"])}) m`.execute(db);
  }
}

const dt = (day: string) => DateTime.fromISO(day, { zone: "UTC" });

/** The first day of the week (Monday) or month `day` is in; `day` itself for a day. */
export function periodStart(unit: PeriodUnit, day: string): string {
  if (unit === "day") return day;
  return dt(day)
    .startOf(unit === "week" ? "week" : "month")
    .toISODate() as string;
}

/** The first day of the period after the one starting on `start`. */
export function nextPeriod(unit: PeriodUnit, start: string): string {
  return dt(start)
    .plus({ [unit]: 1 })
    .toISODate() as string;
}

/** The last day of the week or month `day` is in. */
export function periodEnd(unit: PeriodUnit, day: string): string {
  return dt(nextPeriod(unit, periodStart(unit, day)))
    .minus({ days: 1 })
    .toISODate() as string;
}

/**
 * How a range of days [from, to] (the whole of it in lead_stats_periods) is read at `unit`: the
 * whole periods inside it as rows of that unit, the days before the first and after the last
 * (a range need not start or end on a period's edge) as day rows. For days, all of it day rows.
 */
export function segments(
  unit: PeriodUnit,
  from: string,
  to: string,
): { readonly unit: PeriodUnit; readonly from: string; readonly to: string }[] {
  if (unit === "day") return [{ unit: "day", from, to }];
  const first = periodStart(unit, from) === from ? from : nextPeriod(unit, periodStart(unit, from));
  const lastEnd = periodEnd(unit, to) === to ? to : shift(periodStart(unit, to), -1);
  if (first > lastEnd) return [{ unit: "day", from, to }];
  const out: { unit: PeriodUnit; from: string; to: string }[] = [];
  if (from < first) out.push({ unit: "day", from, to: shift(first, -1) });
  out.push({ unit, from: first, to: periodStart(unit, lastEnd) });
  if (lastEnd < to) out.push({ unit: "day", from: shift(lastEnd, 1), to });
  return out;
}

/**
 * The days [from, through], as a list: a parameter the planner estimates at a few rows, where
 * generate_series over dates counts as a thousand (a day's roll then planned as millions of rows,
 * and compiled by JIT for most of a second).
 */
function daysOf(from: string, through: string): string[] {
  const out: string[] = [];
  for (let d = from; d <= through; d = shift(d, 1)) out.push(d);
  return out;
}

function shift(day: string, days: number): string {
  return dt(day).plus({ days }).toISODate() as string;
}

/** Which rows a read takes: whose provider, which level of sub-sources, grouped how. */
export interface PeriodRead {
  readonly livemode: boolean;
  readonly granularity: PeriodUnit;
  /** Days, inclusive, all within what lead_stats_periods holds. */
  readonly from: string;
  readonly to: string;
  /** One provider's rows; every provider's together (0) when undefined, unless grouped by provider. */
  readonly providerId?: number | undefined;
  readonly groupBy?: "sub_id" | "provider" | undefined;
  /** With groupBy provider: only these providers' rows. */
  readonly providerIds?: readonly number[] | undefined;
}

/** The row filter of a read: its mode, provider(s) and level of sub-sources. */
function readWhere(r: PeriodRead): RawBuilder<unknown> {
  const level = r.groupBy === "sub_id" ? sql`sub_id is not null` : sql`sub_id is null`;
  let provider: RawBuilder<unknown>;
  if (r.groupBy === "provider") {
    provider =
      r.providerIds !== undefined
        ? sql`provider_id = any(${[...r.providerIds]}::bigint[])`
        : r.providerId !== undefined
          ? sql`provider_id = ${r.providerId}`
          : sql`provider_id <> 0`;
  } else provider = sql`provider_id = ${r.providerId ?? 0}`;
  return sql`livemode = ${r.livemode} and ${provider} and ${level}`;
}

export interface MergedRow {
  readonly period: string;
  readonly grp: string;
  readonly accepted: number;
  readonly duplicates: number;
  readonly quoted: number;
  readonly ordered: number;
  readonly refused: number;
  /** A time, or (a whole period's row) its epoch milliseconds. */
  readonly last_lead_at: Date | number | null;
  /** A day or week row's histogram, merged by the caller; null in a whole period's row. */
  readonly quote_keys: number[] | null;
  readonly quote_counts: number[] | null;
  readonly order_keys: number[] | null;
  readonly order_counts: number[] | null;
  readonly refusal_codes: string[];
  readonly refusal_counts: number[];
  /** The buckets of the median's two middle ranks ([lo, hi]); null when nothing moved. */
  readonly quote_median: number[] | null;
  readonly order_median: number[] | null;
}

/**
 * A row's histogram and refusal arrays as JSON: `pg` parses JSON natively, where it parses a
 * Postgres array character by character in JavaScript (a week's histogram holds hundreds of
 * buckets at millions of leads).
 */
const ARRAYS_AS_JSON = sql`to_json(quote_keys) as quote_keys, to_json(quote_counts) as quote_counts,
  to_json(order_keys) as order_keys, to_json(order_counts) as order_counts, to_json(refusal_codes) as refusal_codes,
  to_json(refusal_counts) as refusal_counts`;

/**
 * The range's rows per period (of the granularity) and group: a whole period's own rows as they
 * are (their medians kept with them: no histogram leaves the database), and the rows of the
 * days (and whole weeks) at either end with their histograms, to be merged per period and group.
 */
export async function readPeriods(db: Db, r: PeriodRead): Promise<MergedRow[]> {
  const grp = r.groupBy === "sub_id" ? sql`sub_id` : r.groupBy === "provider" ? sql`provider_id::text` : sql`''::text`;
  const where = readWhere(r);
  // A whole period's row comes without histograms (its median buckets kept with it) and its last
  // lead as epoch milliseconds: a long answer's rows are parsed by the thousand.
  const empty = sql`null::json as quote_keys, null::json as quote_counts, null::json as order_keys, null::json as order_counts`;
  const parts: RawBuilder<unknown>[] = [];
  for (const seg of segments(r.granularity, r.from, r.to)) {
    if (seg.unit === r.granularity) {
      parts.push(sql`
        select to_char(period::timestamp, 'YYYY-MM-DD') as period, ${grp} as grp, accepted, duplicates, quoted, ordered,
               refused, (extract(epoch from last_lead_at) * 1000)::float8 as last_lead_at, ${empty},
               to_json(refusal_codes) as refusal_codes, to_json(refusal_counts) as refusal_counts,
               to_json(quote_median) as quote_median, to_json(order_median) as order_median
        from lead_stats_periods
        where unit = ${seg.unit} and ${where} and period >= ${seg.from}::date and period <= ${seg.to}::date`);
    } else {
      // The days at either end come as they are, with their histograms, merged per period and
      // group by the caller (stats.repository.ts mergeCells): a few rows a group (a partial month
      // is its whole weeks and the days left), merged in TypeScript in microseconds, where merging
      // their buckets in SQL cost a row per bucket (20 ms for a page of providers by month).
      const pieces = r.granularity === "month" ? segments("week", seg.from, seg.to) : [seg];
      for (const p of pieces) {
        parts.push(sql`
          select to_char(date_trunc(${r.granularity}, period::timestamp), 'YYYY-MM-DD') as period, ${grp} as grp,
                 accepted, duplicates, quoted, ordered, refused, (extract(epoch from last_lead_at) * 1000)::float8 as last_lead_at,
                 ${ARRAYS_AS_JSON}, null::json as quote_median, null::json as order_median
          from lead_stats_periods
          where unit = ${p.unit} and ${where} and period >= ${p.from}::date and period <= ${p.to}::date`);
      }
    }
  }
  const { rows } = await sql<MergedRow>`${sql.join(parts, sql` union all `)}`.execute(db);
  return rows;
}

/**
 * The rows the range's totals (within what lead_stats_periods holds) are merged from, for one
 * provider or all (0), with their histograms: its months, the weeks inside what is left and the
 * days for the rest (a year is about 20 rows; the caller merges them).
 */
export async function readPeriodTotals(
  db: Db,
  r: Omit<PeriodRead, "granularity" | "groupBy" | "providerIds">,
): Promise<MergedRow[]> {
  const where = readWhere({ ...r, granularity: "day" });
  const parts: RawBuilder<unknown>[] = [];
  for (const m of segments("month", r.from, r.to)) {
    for (const p of m.unit === "month" ? [m] : segments("week", m.from, m.to)) {
      parts.push(sql`
        select '' as period, '' as grp, accepted, duplicates, quoted, ordered, refused,
               (extract(epoch from last_lead_at) * 1000)::float8 as last_lead_at, ${ARRAYS_AS_JSON},
               null::json as quote_median, null::json as order_median
        from lead_stats_periods
        where unit = ${p.unit} and ${where} and period >= ${p.from}::date and period <= ${p.to}::date`);
    }
  }
  const { rows } = await sql<MergedRow>`${sql.join(parts, sql` union all `)}`.execute(db);
  return rows;
}

/**
 * Every provider's sums over [from, to] (within what lead_stats_running holds): two rows a
 * provider, its running totals on `to` less those on the day before `from`. A provider with
 * nothing in the range is left out; the last lead is `to`'s unless the day before has the same.
 */
export function runningTotalsSource(
  livemode: boolean,
  from: string,
  to: string,
  providerId?: number,
): RawBuilder<unknown> {
  const one = providerId === undefined ? sql`` : sql`and b.provider_id = ${providerId}`;
  const diff = (column: string) => sql.raw(`b.${column} - coalesce(a.${column}, 0)`);
  return sql`
    select b.provider_id, ${diff("accepted")} as accepted, ${diff("duplicates")} as duplicates,
           ${diff("quoted")} as quoted, ${diff("ordered")} as ordered, ${diff("refused")} as refused,
           case when b.last_lead_at is distinct from a.last_lead_at then b.last_lead_at end as last_lead_at
    from lead_stats_running b
    left join lead_stats_running a
      on a.day = ${from}::date - 1 and a.livemode = b.livemode and a.provider_id = b.provider_id
    where b.day = ${to}::date and b.livemode = ${livemode} ${one}
      and (b.accepted, b.duplicates, b.quoted, b.ordered, b.refused, b.last_lead_at) is distinct from
          (coalesce(a.accepted, 0), coalesce(a.duplicates, 0), coalesce(a.quoted, 0), coalesce(a.ordered, 0),
           coalesce(a.refused, 0), a.last_lead_at)`;
}

/**
 * Writes lead_stats_running's rows of the days [from, through] (through at most what
 * lead_stats_periods holds): for every provider with a row the day before `from` or a day row in
 * the range, or for `only`'s, the day before's sums plus each day's row, day by day. A provider
 * has a row from its first counted day on.
 */
export async function rollRunning(db: Db, from: string, through: string, only?: ProvidersOfMode): Promise<void> {
  const mode = only
    ? sql`and livemode = ${only.livemode} and provider_id = any(${[...only.providerIds]}::bigint[])`
    : sql``;
  await sql`delete from lead_stats_running where day >= ${from}::date and day <= ${through}::date ${mode}`.execute(db);
  const columns = ["accepted", "duplicates", "quoted", "ordered", "refused"];
  const sums = columns.map((c) => sql.raw(`coalesce(b.${c}, 0) + coalesce(sum(d.${c}) over w, 0) as ${c}`));
  await sql`
    with base as (
      select livemode, provider_id, accepted, duplicates, quoted, ordered, refused, last_lead_at
      from lead_stats_running where day = ${from}::date - 1 ${mode}
    ),
    daily as (
      select livemode, provider_id, period as day, accepted, duplicates, quoted, ordered, refused, last_lead_at
      from lead_stats_periods
      where unit = 'day' and sub_id is null and provider_id <> 0 and period >= ${from}::date and period <= ${through}::date ${mode}
    ),
    grid as (
      select k.livemode, k.provider_id, g.day
      from (select livemode, provider_id from base union select livemode, provider_id from daily) k
      cross join unnest(${daysOf(from, through)}::date[]) as g(day)
    ),
    summed as (
      select g.day, g.livemode, g.provider_id, ${sql.join(sums)},
             greatest(b.last_lead_at, max(d.last_lead_at) over w) as last_lead_at,
             b.provider_id is not null or count(d.provider_id) over w > 0 as counted
      from grid g
      left join base b on b.livemode = g.livemode and b.provider_id = g.provider_id
      left join daily d on d.livemode = g.livemode and d.provider_id = g.provider_id and d.day = g.day
      window w as (partition by g.livemode, g.provider_id order by g.day)
    )
    insert into lead_stats_running (day, livemode, provider_id, ${sql.raw(columns.join(", "))}, last_lead_at)
    select day, livemode, provider_id, ${sql.raw(columns.join(", "))}, last_lead_at from summed where counted`.execute(
    db,
  );
}

/** The advisory lock key of the rollup job (one instance at a time). */
export const ROLLUP_LOCK = 0x57a75;

/** The last day whose periods lead_stats_periods holds, and the first day anything was counted on. */
export async function periodsState(db: Db): Promise<{ periodsThrough: string | null; firstDay: string | null }> {
  const { rows } = await sql<{ through: string | null; first: string | null }>`
    select periods_through::text as through,
           least((select min(day) from lead_stats_daily), (select min(day) from request_outcomes_daily))::text as first
    from lead_stats_rollup where id = 1`.execute(db);
  return { periodsThrough: rows[0]?.through ?? null, firstDay: rows[0]?.first ?? null };
}

/**
 * Rolls `day` into lead_stats_periods, with the week and the month it ends, and moves
 * `periods_through` to it, in one transaction; false when another instance holds the rollup's
 * lock or has moved the watermark meanwhile.
 */
export async function rollPeriodsOf(db: Db, day: string, after: string | null): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean; through: string | null }>`
      select pg_try_advisory_xact_lock(${ROLLUP_LOCK}) as ok, periods_through::text as through
      from lead_stats_rollup where id = 1`.execute(trx);
    if (!rows[0]?.ok || (rows[0].through ?? null) !== after) return false;
    await rollPeriodDay(trx, day);
    await rollRunning(trx, day, day);
    for (const unit of ["week", "month"] as const) {
      if (periodEnd(unit, day) === day) await rollPeriod(trx, unit, periodStart(unit, day));
    }
    await sql`update lead_stats_rollup set periods_through = ${day}::date, updated_at = now() where id = 1`.execute(
      trx,
    );
    return true;
  });
}

/** Moved providers rolled again per statement (every provider's row, 0, with each share). */
const MOVED_PER_STATEMENT = 100;

/**
 * Rolls again, within the caller's transaction, what moves changed in lead_stats_daily: the
 * moved providers' (and every provider's) day rows of each day lead_stats_periods holds, and the
 * weeks and months of those days it holds whole.
 */
export async function rollPeriodsAgain(
  db: Db,
  keys: readonly { readonly providerId: number; readonly livemode: boolean; readonly day: string }[],
): Promise<void> {
  const { rows } = await sql<{ through: string | null }>`
    select periods_through::text as through from lead_stats_rollup where id = 1`.execute(db);
  const through = rows[0]?.through ?? null;
  if (through === null) return;
  const days = new Map<string, { livemode: boolean; day: string; providers: Set<number> }>();
  const periods = new Map<
    string,
    { unit: "week" | "month"; livemode: boolean; start: string; providers: Set<number> }
  >();
  for (const k of keys) {
    if (k.day > through) continue;
    const d = days.get(`${k.livemode}|${k.day}`) ?? { livemode: k.livemode, day: k.day, providers: new Set() };
    d.providers.add(k.providerId);
    days.set(`${k.livemode}|${k.day}`, d);
    for (const unit of ["week", "month"] as const) {
      if (periodEnd(unit, k.day) > through) continue;
      const start = periodStart(unit, k.day);
      const key = `${unit}|${k.livemode}|${start}`;
      const p = periods.get(key) ?? { unit, livemode: k.livemode, start, providers: new Set() };
      p.providers.add(k.providerId);
      periods.set(key, p);
    }
  }
  // A statement per MOVED_PER_STATEMENT providers, each within the database time-out.
  const slices = (ids: Set<number>) => {
    const all = [...ids];
    const out: number[][] = [];
    for (let i = 0; i < all.length; i += MOVED_PER_STATEMENT) out.push(all.slice(i, i + MOVED_PER_STATEMENT));
    return out;
  };
  for (const d of days.values()) {
    for (const providerIds of slices(d.providers))
      await rollPeriodDay(db, d.day, { livemode: d.livemode, providerIds });
  }
  for (const p of periods.values()) {
    for (const providerIds of slices(p.providers)) {
      await rollPeriod(db, p.unit, p.start, { livemode: p.livemode, providerIds });
    }
  }
  // The running totals of the moved providers, from the first day moved on (per mode).
  for (const livemode of [true, false]) {
    const moved = [...days.values()].filter((d) => d.livemode === livemode);
    if (moved.length === 0) continue;
    const from = moved.reduce((first, d) => (d.day < first ? d.day : first), through);
    const providers = new Set(moved.flatMap((d) => [...d.providers]));
    for (const providerIds of slices(providers)) await rollRunning(db, from, through, { livemode, providerIds });
  }
}

/**
 * Empties lead_stats_periods (and the running totals) when lead_stats_daily starts over (its watermark null: a new
 * database, or an operator's rebuild), so no period outlives the days it was rolled from.
 */
export async function resetPeriods(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ ok: boolean }>`
      select pg_try_advisory_xact_lock(${ROLLUP_LOCK}) as ok
      from lead_stats_rollup where id = 1 and rolled_through is null and periods_through is not null`.execute(trx);
    if (!rows[0]?.ok) return;
    await sql`delete from lead_stats_periods`.execute(trx);
    await sql`delete from lead_stats_running`.execute(trx);
    await sql`update lead_stats_rollup set periods_through = null where id = 1`.execute(trx);
  });
}

/** Refreshes the planner's statistics of lead_stats_periods and lead_stats_running (after a catch-up). */
export async function analyzePeriods(db: Db): Promise<void> {
  await sql`analyze lead_stats_periods, lead_stats_running`.execute(db);
}
