/**
 * The CSV of the leads list as it is filtered now (mode, state, sub-source, search): every matching
 * lead, page by page from the same route the list reads, as plain columns (no JSON in a cell).
 */
import { api, data } from "./api.ts";

// biome-ignore lint/suspicious/noExplicitAny: a lead as the route answers it, read by column
type Lead = Record<string, any>;

/** At most this many leads in one file (100 pages of the route's largest page). */
export const CSV_MAX_LEADS = 10_000;

/** RFC 4180 with CRLF; text a spreadsheet would run as a formula gets a leading apostrophe. */
export function csvCell(v: unknown): string {
  let s = v === null || v === undefined ? "" : String(v);
  if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const COLUMNS: ReadonlyArray<readonly [string, (l: Lead) => unknown]> = [
  ["Order number", (l) => l.order_number],
  ["External id", (l) => l.external_id],
  ["Created (UTC)", (l) => l.created_at],
  ["Mode", (l) => (l.livemode ? "live" : "test")],
  ["State", (l) => l.state],
  ["Lead status", (l) => l.lead_status],
  ["Sub-source", (l) => l.sub_id ?? ""],
  ["First name", (l) => l.first_name],
  ["Last name", (l) => l.last_name],
  ["Email", (l) => l.email],
  ["Phone number", (l) => l.phone_number],
  ["Origin city", (l) => l.origin?.city],
  ["Origin state", (l) => l.origin?.state],
  ["Origin ZIP", (l) => l.origin?.zip],
  ["Destination city", (l) => l.destination?.city ?? ""],
  ["Destination state", (l) => l.destination?.state ?? ""],
  ["Destination ZIP", (l) => l.destination?.zip ?? ""],
  ["Estimated ship date", (l) => l.estimated_ship_date],
  ["Overseas type", (l) => l.overseas_type],
  ["Ship via", (l) => l.ship_via],
  ["Vehicles", (l) => (l.vehicles as Lead[]).map((v) => `${v.year} ${v.make} ${v.model} (${v.type})`).join("; ")],
  ["Billable", (l) => (l.billable ? "yes" : "no")],
  ["Duplicate", (l) => (l.duplicate ? "yes" : "no")],
];

export function leadsCsv(leads: readonly Lead[]): string {
  const rows = [COLUMNS.map(([name]) => name), ...leads.map((l) => COLUMNS.map(([, value]) => value(l)))];
  return rows.map((r) => `${r.map(csvCell).join(",")}\r\n`).join("");
}

export interface LeadFilter {
  readonly mode?: string;
  readonly state?: string;
  readonly sub_id?: string;
  readonly q?: string;
}

/** Every lead the filter matches (up to CSV_MAX_LEADS), newest first; `more` when there were more. */
export async function allLeads(filter: LeadFilter): Promise<{ leads: Lead[]; more: boolean }> {
  const leads: Lead[] = [];
  let page_token: string | undefined;
  do {
    const page = (await data(
      api.GET("/api/v1/portal/leads/", {
        params: {
          query: {
            mode: filter.mode === "test" ? "test" : "live",
            page_size: 100,
            page_token,
            state: (filter.state || undefined) as never,
            sub_id: filter.sub_id || undefined,
            q: filter.q || undefined,
          },
        },
      }),
    )) as { results: Lead[]; next_page_token: string | null };
    leads.push(...page.results);
    page_token = page.next_page_token ?? undefined;
  } while (page_token && leads.length < CSV_MAX_LEADS);
  return { leads: leads.slice(0, CSV_MAX_LEADS), more: page_token !== undefined || leads.length > CSV_MAX_LEADS };
}
