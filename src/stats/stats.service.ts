/**
 * Outcome analytics: per business-day, week or month, what a provider submitted and what became
 * of it (accepted, refused by code, flagged duplicates, quoted, ordered, how fast). Providers see
 * their own of their key's mode; administrators any provider's, or all, grouped by provider.
 */

import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { DateTime } from "luxon";
import type { Database } from "../db/schema.ts";
import { throwIfViolations } from "../errors.ts";
import { Fields, isCalendarDate, type RawId } from "../fields.ts";
import { businessToday } from "../intake/business-time.ts";
import type { LeadOwner } from "../leads/lead.ts";
import {
  type Granularity,
  type GroupBy,
  type LeadCounts,
  leadCounts,
  providerNames,
  RANK_COLUMNS,
  type RankColumn,
  type ReturnCount,
  rankProviders,
  returnCounts,
  type StatsScope,
} from "./stats.repository.ts";

export const GRANULARITIES = ["day", "week", "month"] as const;
/** The longest range, in days, of a daily series (a year and a day) and of a weekly or monthly one. */
export const MAX_DAYS = { day: 400, week: 1830, month: 1830 } as const;

export interface StatsQuery {
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly granularity?: string | undefined;
  readonly groupBy?: string | undefined;
}

export interface AdminStatsQuery extends StatsQuery {
  readonly providerId?: RawId | undefined;
  readonly livemode?: boolean | undefined;
  /** group_by=provider: providers per page, the column they are ranked by ("-" first: descending), the page. */
  readonly pageSize?: number | undefined;
  readonly sort?: string | undefined;
  readonly pageToken?: string | undefined;
}

/** Providers per page of group_by=provider, by default and at most. */
export const PROVIDER_PAGE_SIZE = { default: 20, max: 200 } as const;
/** The ranking of group_by=provider by default: most submitted first. */
export const DEFAULT_SORT = "-submitted";
/** Every value `sort` takes: a column, ascending, or with "-" descending. */
export const SORTS = RANK_COLUMNS.flatMap((c) => [c, `-${c}`]);

/** What happened to the leads of one period and group (or of the whole range: the totals). */
export interface Outcomes {
  readonly submitted: number;
  readonly accepted: number;
  readonly rejected: Readonly<Record<string, number>>;
  readonly duplicates: number;
  /** Accepted leads the broker pays for: accepted less flagged duplicates (lead.ts isBillable). */
  readonly billable: number;
  /** accepted / submitted; null when nothing was submitted. */
  readonly acceptanceRate: number | null;
  readonly quoted: number;
  readonly ordered: number;
  /** Of accepted; null when none was accepted. */
  readonly quoteRate: number | null;
  readonly orderRate: number | null;
  /** Of accepted: leads whose return was approved (counted in the period they were accepted in). */
  readonly returned: number;
  /** returned / accepted; null when none was accepted. */
  readonly returnRate: number | null;
  /** Median hours from creation to QUOTE, and from QUOTE to ORDER; null when none moved. */
  readonly medianHoursToQuote: number | null;
  readonly medianHoursToOrder: number | null;
  /** When the last of these leads was accepted; null when none was. */
  readonly lastLeadAt: Date | null;
}

export interface StatsRow extends Outcomes {
  /** The period's first day (YYYY-MM-DD; a week starts on Monday). */
  readonly period: string;
  /** The sub_id ("" for leads sent without one) or provider id; null when not grouped. */
  readonly group: string | null;
  /** With group_by=provider: the provider's name. */
  readonly providerName?: string | undefined;
}

export interface Stats {
  readonly from: string;
  readonly to: string;
  readonly granularity: Granularity;
  readonly groupBy: GroupBy | null;
  readonly livemode: boolean;
  readonly timezone: string;
  readonly rows: readonly StatsRow[];
  readonly totals: Outcomes;
  /** group_by=provider: the next page's token ("" on the last page). */
  readonly nextPageToken: string;
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

const NONE: Readonly<Record<string, number>> = Object.freeze({});

/**
 * The outcomes of a period and group (or of the totals: all three undefined), as one object
 * literal: every row of a long answer has the same shape (a row made by copying fields onto
 * another object cost several times more, by the thousand).
 */
function outcomes<P extends string | undefined, G extends string | null | undefined>(
  period: P,
  group: G,
  providerName: string | undefined,
  leads: LeadCounts | undefined,
  returns: ReturnCount | undefined,
) {
  // Each cell's refusals are its own object (stats.repository.ts mergeCells), never changed after.
  const rejected = leads?.rejected ?? NONE;
  const accepted = leads?.accepted ?? 0;
  const duplicates = leads?.duplicates ?? 0;
  const quoted = leads?.quoted ?? 0;
  const ordered = leads?.ordered ?? 0;
  const returned = returns?.returned ?? 0;
  let refused = 0;
  for (const code in rejected) refused += rejected[code] as number;
  const rate = (n: number) => (accepted === 0 ? null : round(n / accepted, 4));
  const hours = (h: number | null | undefined) => (h === null || h === undefined ? null : round(h, 2));
  const submitted = accepted + refused;
  return {
    period,
    group,
    providerName,
    submitted,
    accepted,
    rejected,
    duplicates,
    billable: accepted - duplicates,
    acceptanceRate: submitted === 0 ? null : round(accepted / submitted, 4),
    quoted,
    ordered,
    quoteRate: rate(quoted),
    orderRate: rate(ordered),
    returned,
    returnRate: rate(returned),
    medianHoursToQuote: hours(leads?.hoursToQuote),
    medianHoursToOrder: hours(leads?.hoursToOrder),
    lastLeadAt: leads?.lastLeadAt ?? null,
  };
}

/** Every period's first day from `from` to `to` (a dense series when nothing is grouped). */
function periodsOf(from: string, to: string, granularity: Granularity): string[] {
  // Calendar days in UTC, stepped with Date: a year of days is 365 steps, each a few allocations.
  const out: string[] = [];
  const d = new Date(`${from}T00:00:00Z`);
  if (granularity === "week") d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  if (granularity === "month") d.setUTCDate(1);
  for (let day = d.toISOString().slice(0, 10); day <= to; day = d.toISOString().slice(0, 10)) {
    out.push(day);
    if (granularity === "month") d.setUTCMonth(d.getUTCMonth() + 1);
    else d.setUTCDate(d.getUTCDate() + (granularity === "week" ? 7 : 1));
  }
  return out;
}

export type StatsService = ReturnType<typeof createStatsService>;

export function createStatsService(deps: {
  readonly db: Kysely<Database>;
  readonly zone: string;
  readonly now?: () => Date;
}) {
  const { db, zone } = deps;
  const now = deps.now ?? (() => new Date());

  function readScope(f: Fields, q: StatsQuery, groups: readonly GroupBy[]) {
    const granularity = (f.oneOf({ granularity: q.granularity ?? "day" }, "granularity", GRANULARITIES, false) ??
      "day") as Granularity;
    const today = businessToday(now(), zone);
    const date = (key: "from" | "to", value: string | undefined, fallback: string) => {
      if (value === undefined) return fallback;
      if (isCalendarDate(value)) return value;
      f.add(key, "invalid_date", `${key} must be a real date in YYYY-MM-DD form`);
      return fallback;
    };
    const to = date("to", q.to, today);
    const from = date("from", q.from, DateTime.fromISO(to).minus({ days: 29 }).toISODate() as string);
    const days = Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) + 1;
    if (days < 1) f.add("from", "out_of_range", "from must not be after to");
    else if (days > MAX_DAYS[granularity]) {
      f.add("from", "out_of_range", `a ${granularity} series covers at most ${MAX_DAYS[granularity]} days`);
    }
    const groupBy = f.oneOf({ group_by: q.groupBy }, "group_by", groups, false) as GroupBy | undefined;
    return { from, to, granularity, groupBy };
  }

  /** The rows of the scope (of some providers: `providerIds`) and the totals of the whole scope. */
  async function stats(
    scope: StatsScope,
    nextPageToken = "",
    wholeScope?: Promise<[LeadCounts[], ReturnCount[]]>,
  ): Promise<Stats> {
    // group_by=provider answers a page of providers; its totals are every provider's (read
    // meanwhile: `wholeScope`, started with the ranking).
    const [leads, returns, whole] = await Promise.all([
      leadCounts(db, scope),
      returnCounts(db, scope),
      scope.providerIds === undefined ? undefined : (wholeScope ?? totalsOf(scope)),
    ]);
    const key = (period: string | null, group: string | null) => `${period}\u0000${group ?? ""}`;
    const leadsBy = new Map(leads.map((l) => [key(l.period, l.group), l]));
    const returnsBy = new Map(returns.map((r) => [key(r.period, r.group), r]));
    let cells: { period: string; group: string | null }[];
    if (scope.groupBy === undefined) {
      cells = periodsOf(scope.from, scope.to, scope.granularity).map((period) => ({ period, group: null }));
    } else {
      const order = new Map((scope.providerIds ?? []).map((id, i) => [String(id), i]));
      cells = leads
        .filter((c): c is LeadCounts & { period: string } => c.period !== null)
        .map((c) => ({ period: c.period, group: c.group }))
        .sort((a, b) =>
          // A page of providers keeps their ranking; within a provider, periods in order.
          scope.groupBy === "provider" && a.group !== b.group
            ? (order.get(a.group ?? "") ?? 0) - (order.get(b.group ?? "") ?? 0)
            : a.period !== b.period
              ? a.period < b.period
                ? -1
                : 1
              : (a.group ?? "") < (b.group ?? "")
                ? -1
                : 1,
        );
    }
    const names =
      scope.groupBy === "provider"
        ? await providerNames(db, [...new Set(cells.map((c) => Number(c.group)))])
        : undefined;
    const rows = cells.map((c) => {
      // Ungrouped queries group by '' (one group per period).
      const k = key(c.period, scope.groupBy === undefined ? "" : c.group);
      const name = names ? (names.get(Number(c.group)) ?? "") : undefined;
      return outcomes(c.period, c.group, name, leadsBy.get(k), returnsBy.get(k));
    });
    const totalOf = <T extends { period: string | null }>(list: readonly T[]) => list.find((x) => x.period === null);
    return {
      from: scope.from,
      to: scope.to,
      granularity: scope.granularity,
      groupBy: scope.groupBy ?? null,
      livemode: scope.livemode,
      timezone: zone,
      rows,
      totals: whole
        ? outcomes(undefined, undefined, undefined, totalOf(whole[0]), totalOf(whole[1]))
        : outcomes(undefined, undefined, undefined, leadsBy.get(key(null, null)), returnsBy.get(key(null, null))),
      nextPageToken,
    };
  }

  /** Every provider's totals of a scope (a page of group_by=provider's). */
  const totalsOf = (scope: StatsScope) =>
    Promise.all([
      leadCounts(db, { ...scope, groupBy: undefined, providerIds: undefined }),
      returnCounts(db, { ...scope, groupBy: undefined, providerIds: undefined }),
    ]);

  /** What a page token stands for: the query it was issued for (anything else is refused). */
  const fingerprint = (scope: Omit<StatsScope, "zone">, sort: string, pageSize: number) =>
    createHash("sha256")
      .update(JSON.stringify([scope.from, scope.to, scope.granularity, scope.livemode, sort, pageSize]))
      .digest("base64url")
      .slice(0, 16);

  return {
    /** The provider's own outcomes of its key's mode; group_by=sub_id splits them by sub-source. */
    async forProvider(owner: LeadOwner, q: StatsQuery): Promise<Stats> {
      const f = new Fields();
      const scope = readScope(f, q, ["sub_id"]);
      throwIfViolations(f.violations);
      return stats({ ...scope, zone, livemode: owner.livemode, providerId: owner.providerId });
    },
    /** Any provider's (or every provider's) outcomes of one mode (live unless asked). */
    async forAdmin(q: AdminStatsQuery): Promise<Stats> {
      const f = new Fields();
      const scope = readScope(f, q, ["sub_id", "provider"]);
      const providerId = q.providerId === undefined ? undefined : f.id({ provider_id: q.providerId }, "provider_id");
      const paged = scope.groupBy === "provider";
      if (!paged) {
        for (const [name, v] of [
          ["page_size", q.pageSize],
          ["sort", q.sort],
          ["page_token", q.pageToken],
        ] as const) {
          if (v !== undefined) f.add(name, "not_applicable", `${name} applies only with group_by=provider`);
        }
      }
      const sort = (f.oneOf({ sort: q.sort ?? DEFAULT_SORT }, "sort", SORTS, false) ?? DEFAULT_SORT) as string;
      const pageSize =
        f.integer({ page_size: q.pageSize ?? PROVIDER_PAGE_SIZE.default }, "page_size", 1, PROVIDER_PAGE_SIZE.max) ??
        PROVIDER_PAGE_SIZE.default;
      const base = { ...scope, zone, livemode: q.livemode ?? true, providerId };
      let offset = 0;
      const token = fingerprint(base, sort, pageSize);
      if (paged && q.pageToken !== undefined && q.pageToken !== "") {
        const m = /^([0-9]{1,9})\.([A-Za-z0-9_-]{16})$/.exec(q.pageToken);
        if (m === null || m[2] !== token) {
          f.add("page_token", "invalid_format", "page_token is not a token this service issued for this query");
        } else offset = Number(m[1]);
      }
      throwIfViolations(f.violations);
      if (!paged) return stats(base);
      const descending = sort.startsWith("-");
      const column = (descending ? sort.slice(1) : sort) as RankColumn;
      const whole = totalsOf(base);
      whole.catch(() => {}); // awaited in stats(); a ranking that fails first must not leave it unhandled
      const ranked = await rankProviders(db, base, { column, descending }, offset, pageSize + 1);
      const page = ranked.slice(0, pageSize);
      const next = ranked.length > pageSize ? `${offset + pageSize}.${token}` : "";
      return stats({ ...base, providerIds: page }, next, whole);
    },
  };
}
