/**
 * The SQL of outcome analytics. Lead counts come from the leads themselves (by creation time in
 * the business time zone: accepted, flagged duplicates, quoted, ordered and the median hours
 * between), read through (provider_id, livemode, created_at) or (livemode, created_at); refusals
 * come from the daily counts the request log keeps (request_outcomes_daily), never from the log.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";

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
  readonly zone: string;
}

/** One period and group's lead counts; `period` and `group` are null in the totals row. */
export interface LeadCounts {
  readonly period: string | null;
  readonly group: string | null;
  readonly accepted: number;
  readonly duplicates: number;
  readonly quoted: number;
  readonly ordered: number;
  readonly hoursToQuote: number | null;
  readonly hoursToOrder: number | null;
  readonly lastLeadAt: Date | null;
}

export interface RefusalCount {
  readonly period: string | null;
  readonly group: string | null;
  readonly code: string;
  readonly requests: number;
}

const UNITS: Readonly<Record<Granularity, string>> = { day: "day", week: "week", month: "month" };

function groupColumn(groupBy: GroupBy | undefined) {
  if (groupBy === "sub_id") return sql<string>`coalesce(sub_id, '')`;
  if (groupBy === "provider") return sql<string>`provider_id::text`;
  return sql<string>`''`;
}

const numberOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function leadCounts(db: Db, s: StatsScope): Promise<LeadCounts[]> {
  const unit = UNITS[s.granularity];
  const group = groupColumn(s.groupBy);
  // The range's first and last instants in the business time zone.
  const start = sql`(${s.from}::date::timestamp at time zone ${s.zone})`;
  const end = sql`((${s.to}::date + 1)::timestamp at time zone ${s.zone})`;
  const provider = s.providerId === undefined ? sql`` : sql`and provider_id = ${s.providerId}`;
  const { rows } = await sql<{
    period: string | null;
    grp: string | null;
    accepted: string | number;
    duplicates: string | number;
    quoted: string | number;
    ordered: string | number;
    hours_to_quote: string | number | null;
    hours_to_order: string | number | null;
    last_lead_at: Date | null;
  }>`
    select to_char(date_trunc(${unit}, created_at at time zone ${s.zone}), 'YYYY-MM-DD') as period,
           ${group} as grp,
           count(*) as accepted,
           count(*) filter (where duplicate is not null) as duplicates,
           count(quoted_at) as quoted,
           count(ordered_at) as ordered,
           percentile_cont(0.5) within group (order by extract(epoch from quoted_at - created_at)) / 3600 as hours_to_quote,
           percentile_cont(0.5) within group (order by extract(epoch from ordered_at - quoted_at)) / 3600 as hours_to_order,
           max(created_at) as last_lead_at
    from leads
    where livemode = ${s.livemode} ${provider} and created_at >= ${start} and created_at < ${end}
    group by grouping sets ((1, 2), ())`.execute(db);
  return rows.map((r) => ({
    period: r.period,
    group: r.period === null ? null : r.grp,
    accepted: Number(r.accepted),
    duplicates: Number(r.duplicates),
    quoted: Number(r.quoted),
    ordered: Number(r.ordered),
    hoursToQuote: numberOrNull(r.hours_to_quote),
    hoursToOrder: numberOrNull(r.hours_to_order),
    lastLeadAt: r.last_lead_at === null ? null : new Date(r.last_lead_at),
  }));
}

export async function refusalCounts(db: Db, s: StatsScope): Promise<RefusalCount[]> {
  const unit = UNITS[s.granularity];
  const group = groupColumn(s.groupBy);
  const provider = s.providerId === undefined ? sql`` : sql`and provider_id = ${s.providerId}`;
  const { rows } = await sql<{ period: string | null; grp: string | null; code: string; requests: string | number }>`
    select to_char(date_trunc(${unit}, day), 'YYYY-MM-DD') as period, ${group} as grp, code, sum(requests) as requests
    from request_outcomes_daily
    where livemode = ${s.livemode} ${provider} and day >= ${s.from}::date and day <= ${s.to}::date and code <> ''
    group by grouping sets ((1, 2, 3), (3))`.execute(db);
  return rows.map((r) => ({
    period: r.period,
    group: r.period === null ? null : r.grp,
    code: r.code,
    requests: Number(r.requests),
  }));
}

/** Provider names by id (the admin's group_by=provider). */
export async function providerNames(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("providers").select(["id", "name"]).where("id", "in", ids).execute();
  return new Map(rows.map((r) => [Number(r.id), r.name]));
}
