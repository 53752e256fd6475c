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
/** A date and time as people read it. */
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString("en-US") : "—");
/** A time with its zone named ("11/28/2026, 5:40:13 PM UTC"), for times read beside one another. */
export const whenZoned = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString("en-US", { timeZoneName: "short" }) : "—";

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

/** A value as a person reads it. */
export function shown(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  if (typeof v === "number") return num(v);
  if (Array.isArray(v)) return v.map(shown).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
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
