/** Outcome analytics over REST, as JSON or (Accept: text/csv) one CSV row per period and group. */
import { type Request, type Response, Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { RestFeature } from "../rest/feature.ts";
import { pageLink } from "../rest/links.ts";
import { operation, providerOf } from "../rest/typed.ts";
import type { Outcomes, Stats, StatsQuery, StatsService } from "./stats.service.ts";

export const STATS_PATH = "/api/v1/public/stats/";
export const ADMIN_STATS_PATH = "/api/v1/admin/stats/";

type OutcomesJson = components["schemas"]["StatsOutcomes"];

/**
 * A period's outcomes (or the totals: period, group and name undefined, so not serialized) as
 * the API names them, as one object literal of one shape (see stats.service.ts outcomes).
 */
function outcomesJson<P extends string | undefined, G extends string | null | undefined>(
  o: Outcomes,
  period: P,
  group: G,
  providerName: string | undefined,
): OutcomesJson & { period: P; group: G; provider_name: string | undefined } {
  return {
    period,
    group,
    provider_name: providerName,
    submitted: o.submitted,
    accepted: o.accepted,
    // Read only: serialized as it is (a copy a row cost more than the rest of the row).
    rejected: o.rejected as OutcomesJson["rejected"],
    duplicates: o.duplicates,
    billable: o.billable,
    acceptance_rate: o.acceptanceRate,
    quoted: o.quoted,
    ordered: o.ordered,
    quote_rate: o.quoteRate,
    order_rate: o.orderRate,
    returned: o.returned,
    return_rate: o.returnRate,
    median_hours_to_quote: o.medianHoursToQuote,
    median_hours_to_order: o.medianHoursToOrder,
    last_lead_at: o.lastLeadAt === null ? null : o.lastLeadAt.toISOString(),
  };
}

export function statsJson(s: Stats, next?: string | null): components["schemas"]["Stats"] {
  return {
    from: s.from,
    to: s.to,
    granularity: s.granularity,
    group_by: s.groupBy,
    livemode: s.livemode,
    timezone: s.timezone,
    periods: s.rows.map((r) => outcomesJson(r, r.period, r.group, r.providerName)),
    totals: outcomesJson(s.totals, undefined, undefined, undefined),
    ...(s.groupBy === "provider" && {
      next_page_token: s.nextPageToken === "" ? null : s.nextPageToken,
      next: next ?? null,
    }),
  };
}

/**
 * RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; lines end
 * CRLF. Text a spreadsheet would run as a formula (=, +, -, @, tab or CR first) is prefixed with
 * an apostrophe (OWASP's advice on CSV injection): a provider's name cannot plant a formula.
 */
export function csvField(v: unknown): string {
  let s = v === null || v === undefined ? "" : String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const cell = (n: number | null) => (n === null ? "" : String(n));

/**
 * One row per period and group; one `rejected_<code>` column per refusal code seen in the range;
 * `billable` and `acceptance_rate` after the first columns (so a reader of those keeps working).
 * With `totals`, a last row whose period is `total` holds the range's totals.
 */
export function statsCsv(s: Stats, options: { totals?: boolean } = {}): string {
  const codes = Object.keys(s.totals.rejected).sort();
  const grouped = s.groupBy !== null;
  const header = [
    "period",
    ...(grouped ? [s.groupBy === "provider" ? "provider_id" : "sub_id"] : []),
    ...(s.groupBy === "provider" ? ["provider_name"] : []),
    "submitted",
    "accepted",
    "rejected",
    ...codes.map((c) => `rejected_${c}`),
    "duplicates",
    "quoted",
    "ordered",
    "quote_rate",
    "order_rate",
    "median_hours_to_quote",
    "median_hours_to_order",
    "last_lead_at",
    "returned",
    "return_rate",
    "billable",
    "acceptance_rate",
  ];
  const line = (r: Outcomes, period: string, group: string | null, providerName: string | undefined) => [
    period,
    ...(grouped ? [group ?? ""] : []),
    ...(s.groupBy === "provider" ? [providerName ?? ""] : []),
    String(r.submitted),
    String(r.accepted),
    String(Object.values(r.rejected).reduce((n, v) => n + v, 0)),
    ...codes.map((c) => String(r.rejected[c] ?? 0)),
    String(r.duplicates),
    String(r.quoted),
    String(r.ordered),
    cell(r.quoteRate),
    cell(r.orderRate),
    cell(r.medianHoursToQuote),
    cell(r.medianHoursToOrder),
    r.lastLeadAt?.toISOString() ?? "",
    String(r.returned),
    cell(r.returnRate),
    String(r.billable),
    cell(r.acceptanceRate),
  ];
  const lines = [header, ...s.rows.map((r) => line(r, r.period, r.group, r.providerName))];
  if (options.totals) lines.push(line(s.totals, "total", null, undefined));
  return lines.map((l) => `${l.map(csvField).join(",")}\r\n`).join("");
}

export function sendStats(
  req: Pick<Request, "accepts" | "originalUrl">,
  res: Response,
  s: Stats,
  name: string,
  publicBaseUrl?: string,
  csv: { totals?: boolean } = {},
): void {
  // A page of providers: the next one's link, in the answer and (for CSV too) as a Link header.
  const next = s.nextPageToken === "" ? null : pageLink(req, { page_token: s.nextPageToken }, publicBaseUrl);
  if (next !== null) res.links({ next });
  // `text/csv; charset=utf-8` asks for CSV too (a range with parameters matches only an offer with them).
  const type = req.accepts(["application/json", "text/csv", "text/csv; charset=utf-8"]);
  if (typeof type === "string" && type.startsWith("text/csv")) {
    res
      .type("text/csv; charset=utf-8; header=present")
      .attachment(`${name}-${s.from}-${s.to}-${s.granularity}.csv`)
      .send(statsCsv(s, csv));
    return;
  }
  res.json(statsJson(s, next));
}

/** The range, granularity and grouping of a stats read, as the query string gives them. */
export function statsQueryOf(q: { from?: string; to?: string; granularity?: string; group_by?: string }): StatsQuery {
  return { from: q.from, to: q.to, granularity: q.granularity, groupBy: q.group_by };
}

export function statsRoutes(stats: StatsService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.get(
    STATS_PATH,
    operation("getStats", async (req, res) => {
      const s = await stats.forProvider(providerOf(res), statsQueryOf(req.query));
      sendStats(req, res, s, s.livemode ? "stats" : "stats-test", undefined, { totals: req.query.totals === true });
    }),
  );
  router.get(
    ADMIN_STATS_PATH,
    operation("getAdminStats", async (req, res) => {
      const q = req.query;
      const s = await stats.forAdmin({
        ...statsQueryOf(q),
        providerId: q.provider_id,
        livemode: q.livemode,
        pageSize: q.page_size,
        sort: q.sort,
        pageToken: q.page_token,
      });
      sendStats(req, res, s, s.livemode ? "stats" : "stats-test", publicBaseUrl);
    }),
  );
  return { router };
}
