/** Kysely table types. Rows never leave the repositories: they are mapped to domain types there. */
import type { ColumnType, Generated } from "kysely";

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface StatesTable {
  id: number;
  code: string;
  name: string;
}

export interface ProvidersTable {
  id: Generated<number>;
  name: string;
  contact_email: string | null;
  is_active: Generated<boolean>;
  rate_limit_per_minute: number;
  rate_limit_per_day: number;
  webhook_url: string | null;
  /** Event types the webhook receives; null: every type (0024). */
  webhook_event_types: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  notes: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The intake rules document (intake/intake-rules.ts), as the API shows it. */
  intake_rules: ColumnType<unknown, string | undefined, string>;
  intake_rules_version: Generated<number>;
  intake_rules_updated_at: Date | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  provider_id: number;
  /** HMAC-SHA256 of the key, hex: the lookup index. */
  digest: string;
  /** AES-256-GCM ciphertext of the key (iv.tag.data, base64url) so an admin can view it again. */
  ciphertext: string;
  masked: string;
  created_at: Timestamp;
  expires_at: Date | null;
  /** The key stops working at this instant (rotation); null while current. */
  revoked_at: Date | null;
  last_used_at: Date | null;
  mode: Generated<string>;
}

export interface LeadsTable {
  id: Generated<number>;
  provider_id: number;
  external_id: string;
  order_number: Generated<string>;
  /** False for leads created with a test key (sandbox). */
  livemode: Generated<boolean>;
  state: string;
  lead_status: string;
  first_name: string;
  last_name: string;
  email: string;
  phone_number: string;
  company_name: string | null;
  note_from_shipper: string | null;
  /** Postgres `date`, read back as YYYY-MM-DD text (type parser 1082). */
  estimated_ship_date: string;
  overseas_type: string;
  ship_via: string;
  origin_zip: string;
  origin_city: string;
  origin_state_id: number;
  origin_state_code: string;
  destination_zip: string | null;
  destination_city: string | null;
  destination_state_id: number | null;
  destination_state_code: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  state_changed_at: Timestamp;
  /** Migration 0007: the duplicate check's keys, the provider's sub-source, consent, duplicate record. */
  phone_e164: string | null;
  email_match: string | null;
  sub_id: string | null;
  source_url: string | null;
  consent: ColumnType<unknown, string | null, string | null>;
  duplicate: ColumnType<unknown, string | null, string | null>;
  /** Migration 0008: when the lead first reached QUOTE and ORDER (stats). */
  quoted_at: ColumnType<Date | null, never, Date | null>;
  ordered_at: ColumnType<Date | null, never, Date | null>;
  /** Migration 0019: the price fixed when the lead was accepted (null: a duplicate, or stored before prices). */
  price_cents: ColumnType<number | null, number | null | undefined, never>;
  price_currency: ColumnType<string | null, string | null | undefined, never>;
  price_rule: ColumnType<string | null, string | null | undefined, never>;
  price_terms_version: ColumnType<number | null, number | null | undefined, never>;
  /** Migration 0021: where the lead came in (api, form, grpc); null: stored before it was kept. */
  source: ColumnType<string | null, string | null | undefined, never>;
}

/** Migration 0021: a provider's drop-in form (forms/). */
export interface FormSettingsTable {
  provider_id: number;
  /** JSON array of origins (`https://host[:port]`). */
  allowed_origins: ColumnType<string[], string, string>;
  consent_text: string | null;
  enabled: boolean;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  updated_by: string;
}

/** Migration 0021: the publishable key of a provider and mode (not a secret). */
export interface PublishableKeysTable {
  provider_id: number;
  livemode: boolean;
  key: string;
  created_at: ColumnType<Date, Date | undefined, Date>;
  created_by: string;
}

/** Migration 0021: proof-of-work solutions already accepted, until their challenge expires. */
export interface FormChallengesUsedTable {
  id: string;
  expires_at: Date;
}

export interface VehiclesTable {
  lead_id: number;
  position: number;
  year: number;
  make: string;
  model: string;
  type: string;
  tariff: number;
  deposit: number;
  vehicle_run: boolean | null;
  vin: string | null;
}

export interface LeadStateHistoryTable {
  id: Generated<number>;
  lead_id: number;
  from_state: string | null;
  to_state: string;
  lead_status: string;
  changed_at: Timestamp;
  actor: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  details: ColumnType<unknown, string, string>;
  at: Timestamp;
}

export interface LeadEventsTable {
  id: Generated<number>;
  livemode: Generated<boolean>;
  event_id: string;
  provider_id: number;
  /** Null for an event about no lead (intake_rules.changed). */
  lead_id: number | null;
  type: string;
  created_at: Timestamp;
  data: ColumnType<unknown, string, string>;
}

export interface WebhookEndpointsTable {
  provider_id: number;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Timestamp;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  disabled_at: Date | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  provider_id: number;
  event_sequence: number;
  lead_id: number | null;
  /** The lead's mode (false: a test lead's delivery). */
  livemode: Generated<boolean>;
  state: Generated<string>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  /** While a worker sends it: when its lease runs out; null otherwise. */
  lease_expires_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Timestamp;
}

/** Migration 0008: one row per Public API request (request-log/request-log.ts). */
export interface RequestLogTable {
  entry_id: Generated<string>;
  request_id: string;
  created_at: Date;
  provider_id: number | null;
  livemode: boolean | null;
  operation: string;
  protocol: string;
  status: number;
  rpc_code: string | null;
  outcome: string;
  code: string | null;
  detail: string | null;
  errors: ColumnType<unknown, string | null, string | null>;
  external_id: string | null;
  lead_id: number | null;
  duration_ms: number;
  client_ip: string | null;
  key_hint: string | null;
  user_agent: string | null;
  request_body: ColumnType<unknown, string | null, string | null>;
  /** Migration 0018: the body's size as received, its SHA-256 when it was not kept, and whether it was cut. */
  request_body_bytes: number | null;
  request_body_sha256: string | null;
  request_body_truncated: Generated<boolean>;
}

/** Migration 0018: requests counted instead of listed, per minute, provider (0: none), mode, outcome, code and operation. */
export interface RequestLogTalliesTable {
  minute: Date;
  provider_id: number;
  mode: "live" | "test" | "none";
  outcome: string;
  code: string;
  /** '' but for answered reads. */
  operation: string;
  requests: number;
}

/** Migration 0008: create-lead requests per business day, provider, mode, sub_id and code ('' = accepted). */
export interface RequestOutcomesDailyTable {
  provider_id: number;
  livemode: boolean;
  day: string;
  sub_id: string;
  code: string;
  requests: number;
}

/** Migration 0009: each attempt to POST an event; delivery_id null for a webhook.test send. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  provider_id: number;
  delivery_id: number | null;
  event_id: string;
  attempt: number;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  at: Generated<Date>;
}

/** Migration 0011: a provider's own people, who sign in at /portal/. */
export interface PortalUsersTable {
  id: Generated<number>;
  provider_id: number;
  email: string;
  name: string;
  status: Generated<"invited" | "active" | "disabled">;
  password_hash: string | null;
  invite_digest: string | null;
  invite_expires_at: Date | null;
  totp_secret: string | null;
  totp_pending: string | null;
  totp_last_step: ColumnType<string | null, string | number | null, string | number | null>;
  last_sign_in_at: Date | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Migration 0023: `admin` may manage the provider's own people; `member` may not. */
  role: Generated<"admin" | "member">;
  /** Migration 0023: a password-reset link's SHA-256 digest and expiry (cleared once used). */
  reset_digest: string | null;
  reset_expires_at: Date | null;
}

/** Migration 0011: a signed-in portal user's session, by the digest of the cookie's token. */
export interface PortalSessionsTable {
  digest: string;
  user_id: number;
  created_at: Generated<Date>;
  last_seen_at: Generated<Date>;
  expires_at: Date;
}

export interface Database {
  states: StatesTable;
  providers: ProvidersTable;
  api_keys: ApiKeysTable;
  leads: LeadsTable;
  vehicles: VehiclesTable;
  lead_state_history: LeadStateHistoryTable;
  audit_log: AuditLogTable;
  lead_events: LeadEventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  request_log: RequestLogTable;
  request_outcomes_daily: RequestOutcomesDailyTable;
  request_log_tallies: RequestLogTalliesTable;
  portal_users: PortalUsersTable;
  portal_sessions: PortalSessionsTable;
  form_settings: FormSettingsTable;
  publishable_keys: PublishableKeysTable;
  form_challenges_used: FormChallengesUsedTable;
}
