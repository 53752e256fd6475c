/** Provider domain types and the rules of provider input (create and update). */
import type { FieldViolation } from "../errors.ts";
import { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, type EventType, isEventType } from "../events/event.ts";
import { Fields } from "../fields.ts";
import { type WebhookUrlPolicy, webhookUrlProblem } from "./webhook-url.ts";

export interface ApiKeySummary {
  readonly masked: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly previousKeyExpiresAt: Date | null;
}

export interface Provider {
  readonly id: number;
  readonly name: string;
  readonly contactEmail: string | null;
  readonly isActive: boolean;
  readonly rateLimitPerMinute: number;
  readonly rateLimitPerDay: number;
  readonly webhookUrl: string | null;
  /** The event types the webhook receives; null: every type, including types added later. */
  readonly webhookEventTypes: readonly EventType[] | null;
  readonly notes: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The current live key (`lp_live_`). */
  readonly apiKey: ApiKeySummary | null;
  /** The current test key (`lp_test_`, the sandbox). */
  readonly testApiKey: ApiKeySummary | null;
}

/** Fields an administrator may set; `null` clears a nullable field. */
export interface ProviderChanges {
  name?: string;
  contactEmail?: string | null;
  isActive?: boolean;
  rateLimitPerMinute?: number;
  rateLimitPerDay?: number;
  webhookUrl?: string | null;
  webhookEventTypes?: EventType[] | null;
  notes?: string | null;
}

export const MAX_PER_MINUTE = 100_000;
export const MAX_PER_DAY = 10_000_000;
const KNOWN = new Set([
  "name",
  "contact_email",
  "is_active",
  "rate_limit_per_minute",
  "rate_limit_per_day",
  "webhook_url",
  "webhook_event_types",
  "notes",
]);

/** The allowed event types in words, for the message of a refused subscription. */
export const EVENT_TYPES_IN_WORDS = EVENT_TYPES.map((t) => `${t} (${EVENT_TYPE_DESCRIPTIONS[t].toLowerCase()})`).join(
  ", ",
);

/**
 * Reads a webhook subscription: null (every event type, also those added later) or a non-empty
 * list of known types, kept in the order of EVENT_TYPES without repeats. `field` names it in a
 * violation.
 */
export function parseEventTypes(f: Fields, value: unknown, field: string): EventType[] | null | undefined {
  if (value === null) return null;
  const bad = () => {
    f.add(
      field,
      "invalid_event_types",
      `${field} must be null (every event) or a non-empty list of these event types: ${EVENT_TYPES_IN_WORDS}`,
    );
    return undefined;
  };
  if (!Array.isArray(value) || value.length === 0 || value.length > 100) return bad();
  if (!value.every(isEventType)) return bad();
  return EVENT_TYPES.filter((t) => value.includes(t));
}

/**
 * Reads provider fields from a JSON-like object. `partial` (PATCH): nothing is required, only
 * sent fields are returned, and `null` clears contact_email, webhook_url and notes.
 * Unknown fields are errors here: a typo in a management call must not silently do nothing.
 */
export function parseProviderInput(
  raw: unknown,
  partial: boolean,
  webhookPolicy: WebhookUrlPolicy = { production: false },
): { changes: ProviderChanges; violations: FieldViolation[] } {
  const f = new Fields();
  const changes: ProviderChanges = {};
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    f.add("body", "invalid_type", "the request body must be a JSON object");
    return { changes, violations: f.violations };
  }
  const body = raw as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!KNOWN.has(key)) f.add(key, "unknown_field", `${key} is not a provider field`);
  }
  if (partial && Object.keys(body).length === 0) f.add("body", "required", "send at least one field to change");
  const has = (k: string) => k in body;

  if (!partial || has("name")) {
    const name = f.text(body, "name", { max: 100, required: true });
    if (name !== undefined && name.trim() === "") f.add("name", "required", "name must not be blank");
    else if (name !== undefined) changes.name = name.trim();
  }
  if (has("contact_email")) {
    if (body.contact_email === null) changes.contactEmail = null;
    else {
      const email = f.email(body, "contact_email");
      if (email !== undefined) changes.contactEmail = email;
    }
  }
  if (has("is_active")) {
    if (typeof body.is_active === "boolean") changes.isActive = body.is_active;
    else f.add("is_active", "invalid_type", "is_active must be true or false");
  }
  if (has("rate_limit_per_minute")) {
    const n = f.integer(body, "rate_limit_per_minute", 1, MAX_PER_MINUTE);
    if (n !== undefined) changes.rateLimitPerMinute = n;
  }
  if (has("rate_limit_per_day")) {
    const n = f.integer(body, "rate_limit_per_day", 1, MAX_PER_DAY);
    if (n !== undefined) changes.rateLimitPerDay = n;
  }
  if (has("webhook_url")) {
    if (body.webhook_url === null) changes.webhookUrl = null;
    else {
      const url = f.text(body, "webhook_url", { max: 2048, noControl: true });
      const problem = url === undefined ? undefined : webhookUrlProblem(url, webhookPolicy);
      if (problem !== undefined) f.add("webhook_url", "invalid_url", problem);
      else if (url !== undefined) changes.webhookUrl = url;
    }
  }
  if (has("webhook_event_types")) {
    const types = parseEventTypes(f, body.webhook_event_types, "webhook_event_types");
    if (types !== undefined) changes.webhookEventTypes = types;
  }
  if (has("notes")) {
    if (body.notes === null) changes.notes = null;
    else {
      const notes = f.text(body, "notes", { max: 2000, allowEmpty: true });
      if (notes !== undefined) changes.notes = notes;
    }
  }
  return { changes, violations: f.violations };
}
