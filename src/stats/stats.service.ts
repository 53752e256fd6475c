/**
 * Outcome analytics: per business-day, week or month, what a provider submitted and what became
 * of it (accepted, refused by code, flagged duplicates, quoted, ordered, how fast). Providers see
 * their own of their key's mode; administrators any provider's, or all, grouped by provider.
 */

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
  type RefusalCount,
  type ReturnCount,
  refusalCounts,
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
}

/** What happened to the leads of one period and group (or of the whole range: the totals). */
export interface Outcomes {
  readonly submitted: number;
  readonly accepted: number;
  readonly rejected: Readonly<Record<string, number>>;
  readonly duplicates: number;
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
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

function outcomes(
  leads: LeadCounts | undefined,
  refusals: readonly RefusalCount[],
  returns: ReturnCount | undefined,
): Outcomes {
  const rejected: Record<string, number> = {};
  for (const r of [...refusals].sort((a, b) => (a.code < b.code ? -1 : 1))) rejected[r.code] = r.requests;
  const accepted = leads?.accepted ?? 0;
  const refused = refusals.reduce((n, r) => n + r.requests, 0);
  const rate = (n: number) => (accepted === 0 ? null : round(n / accepted, 4));
  const hours = (h: number | null | undefined) => (h === null || h === undefined ? null : round(h, 2));
  return {
    submitted: accepted + refused,
    accepted,
    rejected,
    duplicates: leads?.duplicates ?? 0,
    quoted: leads?.quoted ?? 0,
    ordered: leads?.ordered ?? 0,
    quoteRate: rate(leads?.quoted ?? 0),
    orderRate: rate(leads?.ordered ?? 0),
    returned: returns?.returned ?? 0,
    returnRate: rate(returns?.returned ?? 0),
    medianHoursToQuote: hours(leads?.hoursToQuote),
    medianHoursToOrder: hours(leads?.hoursToOrder),
    lastLeadAt: leads?.lastLeadAt ?? null,
  };
}

/** Every period's first day from `from` to `to` (a dense series when nothing is grouped). */
function periodsOf(from: string, to: string, granularity: Granularity): string[] {
  const out: string[] = [];
  let d = DateTime.fromISO(from, { zone: "UTC" }).startOf(granularity === "week" ? "week" : granularity);
  const last = DateTime.fromISO(to, { zone: "UTC" });
  while (d <= last) {
    out.push(d.toISODate() as string);
    d = d.plus({ [granularity]: 1 });
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

  async function stats(scope: StatsScope): Promise<Stats> {
    const [leads, refusals, returns] = await Promise.all([
      leadCounts(db, scope),
      refusalCounts(db, scope),
      returnCounts(db, scope),
    ]);
    const key = (period: string | null, group: string | null) => `${period}\u0000${group ?? ""}`;
    const leadsBy = new Map(leads.map((l) => [key(l.period, l.group), l]));
    const returnsBy = new Map(returns.map((r) => [key(r.period, r.group), r]));
    const refusalsBy = new Map<string, RefusalCount[]>();
    for (const r of refusals) {
      const k = key(r.period, r.group);
      refusalsBy.set(k, [...(refusalsBy.get(k) ?? []), r]);
    }
    let cells: { period: string; group: string | null }[];
    if (scope.groupBy === undefined) {
      cells = periodsOf(scope.from, scope.to, scope.granularity).map((period) => ({ period, group: null }));
    } else {
      const seen = new Map<string, { period: string; group: string | null }>();
      for (const c of [...leads, ...refusals]) {
        if (c.period !== null) seen.set(key(c.period, c.group), { period: c.period, group: c.group });
      }
      cells = [...seen.values()].sort((a, b) =>
        a.period !== b.period ? (a.period < b.period ? -1 : 1) : (a.group ?? "") < (b.group ?? "") ? -1 : 1,
      );
    }
    const names =
      scope.groupBy === "provider"
        ? await providerNames(db, [...new Set(cells.map((c) => Number(c.group)))])
        : undefined;
    const rows = cells.map((c) => {
      // Ungrouped queries group by '' (one group per period).
      const k = key(c.period, scope.groupBy === undefined ? "" : c.group);
      return {
        period: c.period,
        group: c.group,
        ...(names && { providerName: names.get(Number(c.group)) ?? "" }),
        ...outcomes(leadsBy.get(k), refusalsBy.get(k) ?? [], returnsBy.get(k)),
      };
    });
    return {
      from: scope.from,
      to: scope.to,
      granularity: scope.granularity,
      groupBy: scope.groupBy ?? null,
      livemode: scope.livemode,
      timezone: zone,
      rows,
      totals: outcomes(
        leadsBy.get(key(null, null)),
        refusalsBy.get(key(null, null)) ?? [],
        returnsBy.get(key(null, null)),
      ),
    };
  }

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
      throwIfViolations(f.violations);
      return stats({ ...scope, zone, livemode: q.livemode ?? true, providerId });
    },
  };
}
