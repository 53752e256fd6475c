/**
 * The event types and what each announces, in words. Plain data with no imports, so the admin
 * console and the portal read the same table as the service.
 */
export const EVENT_TYPES = [
  "lead.created",
  "lead.quoted",
  "lead.ordered",
  "lead.status_changed",
  "intake_rules.changed",
  "terms.changed",
  "payout.created",
  "adjustment.created",
  "lead.return_requested",
  "lead.return_contested",
  "lead.return_approved",
  "lead.return_denied",
  "lead.return_withdrawn",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * What each event type announces, in words: the one table read by the subscription check's
 * message, the admin console and the portal (a new type is one more row here).
 */
export const EVENT_TYPE_DESCRIPTIONS: Readonly<Record<EventType, string>> = {
  "lead.created": "A lead was stored",
  "lead.quoted": "A lead was quoted",
  "lead.ordered": "A lead became an order",
  "lead.status_changed": "A lead's status changed without it moving",
  "intake_rules.changed": "The intake rules changed",
  "terms.changed": "The price terms changed",
  "payout.created": "A payout was made",
  "adjustment.created": "A balance adjustment was made",
  "lead.return_requested": "A lead's return was requested",
  "lead.return_contested": "A lead's return was contested",
  "lead.return_approved": "A lead's return was approved",
  "lead.return_denied": "A lead's return was denied",
  "lead.return_withdrawn": "A lead's return was withdrawn",
};

export function isEventType(t: unknown): t is EventType {
  return typeof t === "string" && (EVENT_TYPES as readonly string[]).includes(t);
}
