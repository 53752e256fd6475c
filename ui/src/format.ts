/**
 * One way to write numbers, money, dates, durations and field names on every screen of both apps
 * (the back office and the provider portal).
 */

const NUMBER = new Intl.NumberFormat("en-US");
const USD = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });

/** A count, the same everywhere: 12,480. */
export const num = (n: number | null | undefined): string => (n === null || n === undefined ? "—" : NUMBER.format(n));
/** Whole dollars with the currency: $1,450 (USD). */
export const money = (n: number | null | undefined): string =>
  n === null || n === undefined ? "—" : `${USD.format(n)} USD`;
/**
 * The viewer's own time zone (IANA, "Europe/Berlin"): every timestamp on a screen is shown in it.
 * Business days (statistics, caps' "today", schedules, statements) are the broker's
 * BUSINESS_TIMEZONE instead, which the service names in its answers (docs/stats.md).
 */
export const viewerZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;
/**
 * A timestamp in the viewer's time zone, the zone named ("11/28/2026, 5:40:13 PM EST"): the one
 * way every screen of both apps writes an instant.
 */
export const when = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString("en-US", { timeZoneName: "short" }) : "—";
/** A timestamp with the viewer's zone spelled out: "11/28/2026, 5:40:13 PM GMT+1 (your time, Europe/Berlin)". */
export const whenYours = (iso: string | null | undefined): string =>
  iso ? `${when(iso)} (your time, ${viewerZone()})` : "—";
/** A column or field name for timestamps: "Created (your time, Europe/Berlin)". */
export const yourTime = (name: string): string => `${name} (your time, ${viewerZone()})`;
/** The calendar day (YYYY-MM-DD) it is in `zone` at `at`: a business day when `zone` is BUSINESS_TIMEZONE. */
export function dayIn(zone: string, at: Date = new Date()): string {
  // en-CA writes dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    at,
  );
}

/** Field names as the screens name them (the API's names, in words). */
const LABELS: Record<string, string> = {
  name: "Name",
  contact_email: "Contact email",
  is_active: "Active",
  rate_limit_per_minute: "Requests per minute",
  rate_limit_per_day: "Requests per day",
  webhook_url: "Webhook URL",
  notes: "Notes",
  provider_id: "Provider",
  from_state: "From",
  to_state: "To",
  lead_status: "Lead status",
  modes: "Keys",
  mode: "Key",
  event_id: "Event",
  delivery_id: "Delivery",
  status_code: "HTTP status",
  previous_key_grace_seconds: "Old key works for",
  overlap_seconds: "Old secret signs for",
  grace_seconds: "Old key works for",
  deleted_leads: "Test leads deleted",
  leads: "Leads",
  version: "Version",
  key_id: "Key id",
  masked: "Key",
  expires_at: "Expires",
};
export const label = (field: string): string =>
  LABELS[field] ?? field.replaceAll("_", " ").replace(/^./, (c) => c.toUpperCase());

/** An ISO 8601 instant as the API writes one ("2026-11-28T15:15:02.301Z", or with an offset). */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A value as a person reads it; an instant in the viewer's time zone (`when`). */
export function shown(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  if (typeof v === "number") return num(v);
  if (Array.isArray(v)) return v.map(shown).join(", ");
  // Its instants too in the viewer's time zone: no UTC clock beside the screen's own.
  if (typeof v === "object")
    return JSON.stringify(v, (_k, x) => (typeof x === "string" && INSTANT.test(x) ? when(x) : x));
  if (typeof v === "string" && INSTANT.test(v)) return when(v);
  return String(v);
}

/** A span of seconds in the largest unit that keeps it readable: "45 s", "12 min", "3 h", "2 days". */
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round((s / 3600) * 10) / 10} h`;
  const days = Math.round((s / 86_400) * 10) / 10;
  return `${days} ${days === 1 ? "day" : "days"}`;
}
/** "in 12 h" or "3 min ago", from now. */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const seconds = (Date.parse(iso) - now) / 1000;
  return seconds >= 0 ? `in ${span(seconds)}` : `${span(-seconds)} ago`;
}

/** A webhook delivery's send-again button: Replay once delivered; pending, failed or disabled: Retry now (sent now). */
export const resendLabel = (state: string): string => (state === "delivered" ? "Replay" : "Retry now");
