/**
 * THE table of words for the API's names, shared by both apps (the back office and the provider
 * portal): every field, intake-rule setting, problem code and rule code that reaches a screen.
 * Rule names come from the rule table itself (src/intake/rule-table.ts `title`), so a refusal
 * names the rule in the same words the Rules page and the docs use. `test/labels.test.ts` fails
 * when a field the screens display (the openapi schemas they read) has no words here, and when a
 * rendered message on the portal's pages still carries a raw API field name.
 */
import { INTAKE_RULES_TABLE } from "../../src/intake/rule-table.ts";

/** Field names (request, lead, intake rules, stats, request log) as the screens name them. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  // a lead
  id: "Id",
  external_id: "External id",
  order_number: "Order number",
  first_name: "First name",
  last_name: "Last name",
  company_name: "Company",
  email: "Email",
  phone_number: "Phone number",
  phone_e164: "Phone number",
  origin: "Origin",
  origin_zip: "Origin ZIP",
  destination: "Destination",
  destination_zip: "Destination ZIP",
  city: "City",
  state: "State",
  state_id: "State",
  zip: "ZIP",
  estimated_ship_date: "Estimated ship date",
  overseas_type: "Overseas type",
  ship_via: "Ship via",
  vehicles: "Vehicles",
  vehicle_run: "Vehicle runs",
  year: "Year",
  make: "Make",
  model: "Model",
  type: "Type",
  vin: "VIN",
  tariff: "Tariff",
  deposit: "Deposit",
  note_from_shipper: "Note from the shipper",
  sub_id: "Sub-source",
  source: "Came in through",
  source_url: "Source page",
  page_url: "Page",
  consent: "Consent",
  consent_text: "Consent text",
  consented_at: "Consented at",
  trusted_form_cert_url: "TrustedForm certificate",
  jornaya_lead_id: "Jornaya lead id",
  ip_address: "IP address",
  text_sha256: "Text fingerprint (SHA-256)",
  lead_status: "Lead status",
  livemode: "Mode",
  billable: "Billable",
  duplicate: "Duplicate",
  matched_on: "Matched on",
  same_provider: "Your own lead",
  first_seen_at: "First seen",
  original: "Original lead",
  price: "Price",
  amount_cents: "Amount",
  currency: "Currency",
  rule: "Rule",
  terms_version: "Terms version",
  history: "History",
  from_state: "From",
  to_state: "To",
  changed_at: "Changed",
  actor: "By",
  return: "Return",
  reason: "Reason",
  note: "Note",
  requested_at: "Requested",
  decided_at: "Decided",
  decision_note: "Decision note",
  contest_deadline: "Contest by",
  created_at: "Created",
  updated_at: "Updated",
  state_changed_at: "State changed",
  // intake rules
  paused: "Paused",
  paused_reason: "Pause reason",
  origin_states: "Accepted origin states",
  destination_states: "Accepted destination states",
  overseas_types: "Accepted overseas types",
  vehicle_types: "Accepted vehicle types",
  max_vehicles: "Most vehicles per lead",
  require_destination_zip: "Destination ZIP required",
  ship_date_min_days: "Earliest ship date (days from today)",
  ship_date_max_days: "Latest ship date (days from today)",
  reject_disposable_email: "Refuse disposable email addresses",
  consent_required: "Consent required",
  duplicate_policy: "Duplicate policy",
  duplicate_window_days: "Duplicate look-back (days)",
  duplicate_match: "Duplicates matched on",
  caps: "Caps",
  "caps.day": "Day cap",
  "caps.week": "Week cap",
  "caps.month": "Month cap",
  cap_usage: "Cap usage",
  day: "Day",
  week: "Week",
  month: "Month",
  limit: "Limit",
  used: "Used",
  remaining: "Left",
  resets_at: "Resets",
  schedule: "Intake schedule",
  open: "Opens",
  close: "Closes",
  opens_at: "Opens",
  closes_at: "Closes",
  business_timezone: "Business time zone",
  timezone: "Time zone",
  rate_limits: "Rate limits",
  per_minute: "Requests a minute",
  per_day: "Requests a day",
  states: "States",
  ship_via_by_overseas_type: "Ways to ship by overseas type",
  rules: "Rules",
  code: "Code",
  field: "Field",
  setting: "Setting",
  applies_to: "Applies to",
  description: "Description",
  active: "Active",
  version: "Version",
  // stats
  period: "Period",
  periods: "Periods",
  group: "Group",
  group_by: "Group by",
  granularity: "Per",
  from: "From",
  to: "To",
  submitted: "Submitted",
  accepted: "Accepted",
  rejected: "Rejected",
  duplicates: "Duplicates (not billed)",
  quoted: "Quoted",
  ordered: "Ordered",
  returned: "Returned",
  acceptance_rate: "Acceptance rate",
  quote_rate: "Quote rate",
  order_rate: "Order rate",
  return_rate: "Return rate",
  median_hours_to_quote: "Median hours to quote",
  median_hours_to_order: "Median hours to order",
  last_lead_at: "Last lead",
  totals: "Totals",
  next: "Next page",
  next_page_token: "Next page",
  provider_id: "Provider",
  provider_name: "Provider",
  // problem details
  title: "Title",
  instance: "Request path",
  retry_after: "Retry after (seconds)",
  window: "Cap window",
  existing_lead: "Your lead with this external id",
  current_state: "Current state",
  closest_route: "Closest accepted route",
  closed_at: "Closed",
  return_id: "Return",
  return_state: "Return state",
  max_rate: "Most returns (share of billable leads)",
  max_returns: "Most returns",
  returns_this_month: "Returns this month",
  billable_leads_this_month: "Billable leads this month",
  // the request log
  request_id: "Request id",
  lead_id: "Lead",
  operation: "Operation",
  protocol: "Protocol",
  status: "HTTP status",
  rpc_code: "RPC code",
  outcome: "Outcome",
  detail: "Detail",
  errors: "Errors",
  message: "Message",
  duration_ms: "Duration (ms)",
  client_ip: "Client address",
  key_hint: "Key",
  user_agent: "Client software",
  request_body: "Body as received",
  request_body_bytes: "Body size",
  request_body_truncated: "Body cut",
};

/** The intake rules' names, from the rule table (a rule code → its title). */
export const RULE_LABELS: Readonly<Record<string, string>> = Object.fromEntries(
  INTAKE_RULES_TABLE.map((r) => [r.code, r.title]),
);

/** Problem codes (the `code` of an answer or a request log entry) in words. */
export const CODE_LABELS: Readonly<Record<string, string>> = {
  outside_criteria: "Outside your intake rules",
  validation_error: "Invalid fields",
  duplicate_lead: "Duplicate lead",
  duplicate_external_id: "Resent: the external id was already used",
  cap_reached: "Cap reached",
  intake_paused: "Intake paused",
  intake_closed: "Intake closed (outside the schedule)",
  rate_limited: "Rate limit reached",
  invalid_zip: "Unknown ZIP code",
  unauthenticated: "Not signed in or bad key",
  not_found: "Not found",
  invalid_argument: "Invalid request",
  internal: "Service error",
  duplicate: "Already exists",
  ...RULE_LABELS,
};

/** A field's words: `caps.day` → "Day cap", `vehicles[1].type` → "Vehicle 2 type", else the table's. */
export function fieldLabel(name: string): string {
  const known = FIELD_LABELS[name] ?? CODE_LABELS[name];
  if (known) return known;
  const vehicle = /^vehicles\[(\d+)\](?:\.(\w+))?$/.exec(name);
  if (vehicle) {
    const n = Number(vehicle[1]) + 1;
    return vehicle[2] ? `Vehicle ${n} ${fieldLabel(vehicle[2]).toLowerCase()}` : `Vehicle ${n}`;
  }
  if (name === "vehicles[i].type") return "Each vehicle's type";
  if (name === "vehicles[i].vin") return "Each vehicle's VIN";
  const schedule = /^schedule\.(\w+)(?:\[(\d+)\])?(?:\.(open|close))?$/.exec(name);
  if (schedule) return `Schedule, ${schedule[1]}${schedule[3] ? ` ${fieldLabel(schedule[3]).toLowerCase()}` : ""}`;
  return name.replaceAll("_", " ").replace(/^./, (c) => c.toUpperCase());
}

/** A code's words (problem or rule), or the field table's when it is a field. */
export const codeLabel = (code: string): string => CODE_LABELS[code] ?? fieldLabel(code);

/** An API name inside a sentence: snake_case, dotted (caps.day) or indexed (vehicles[0].type). */
const API_NAME =
  /\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|caps\.(?:day|week|month)|vehicles\[(?:\d+|i)\](?:\.[a-z_]+)?)(?!\w)/g;

/**
 * A message as a person reads it: each API name in it in words ("must be one of origin_states" →
 * "must be one of Accepted origin states"), the first letter upper case.
 */
export function words(message: string): string {
  return namesInWords(message).replace(/^./, (c) => c.toUpperCase());
}

/** The API names of a message in words, the rest as it was (for the service's own sentences). */
export function namesInWords(message: string): string {
  return message.replace(API_NAME, (name) =>
    FIELD_LABELS[name] || CODE_LABELS[name] || /^(caps|vehicles)/.test(name) ? fieldLabel(name) : name,
  );
}

export interface Violation {
  readonly field: string;
  readonly code: string;
  readonly message: string;
}

/**
 * One refused field as a sentence that names the rule that failed: "Origin state TX is not
 * accepted; accepted: NY. (Rule: Accepted origin states.)"; a field's own check: its label first.
 */
export function violationSentence(v: Violation): string {
  const said = words(v.message).replace(/[.;:\s]*$/, "");
  const rule = RULE_LABELS[v.code];
  if (rule) return `${said}. (Rule: ${rule}.)`;
  if (v.code === "duplicate_lead") return `${said}. (Rule: duplicate policy, ${fieldLabel(v.field).toLowerCase()}.)`;
  const label = fieldLabel(v.field);
  // "origin_zip 00000 is not a known US ZIP code" already names its field, in words now.
  if (said.toLowerCase().startsWith(label.toLowerCase())) return `${said}.`;
  return `${label}: ${said.replace(/^./, (c) => c.toLowerCase())}.`;
}

/** "Duplicate (phone_number, email)" → "Duplicate (same phone number and email)". */
export const duplicateLabel = (matchedOn: readonly string[]): string =>
  `Duplicate (same ${matchedOn.map((f) => fieldLabel(f).toLowerCase()).join(" and ")})`;
