/**
 * THE table of intake rules: one row per rule, with its code, the request field it names, the
 * setting of the intake rules document that drives it, which leads it applies to, the answer it
 * gives and its description. The same rows drive enforcement (a criterion's `check`), the
 * published `GET /api/v1/public/intake_rules/` (`rules`), the openapi.yaml and README tables
 * (`make generate` writes them from here) and the console's rules form, so what providers are told
 * cannot drift from what is enforced. Pure: no I/O; the console imports it too.
 */
import type { NewLead } from "../leads/lead.ts";
import type { IntakeRules } from "./intake-rules.ts";

/** The answer a rule gives when it refuses (or, for a warning, accepts with a note). */
export type RuleOutcome =
  | "validation_error"
  | "warning"
  | "intake_paused"
  | "intake_closed"
  | "outside_criteria"
  | "duplicate_lead"
  | "cap_reached";

/** Which leads a rule judges. */
export type AppliesTo = "live_and_test" | "live" | "live_and_test_separately";

/** Where a criterion's check needs to know the date. */
export interface CriteriaContext {
  /** Whole days from today (BUSINESS_TIMEZONE) to the lead's estimated_ship_date. */
  readonly shipDateInDays: number;
  readonly disposableEmail: boolean;
}

export interface Breach {
  readonly field: string;
  readonly message: string;
}

export interface IntakeRuleRow {
  readonly code: string;
  /** The rule's name in words, as the portal's screens and refusal sentences name it. */
  readonly title: string;
  /** The request field the refusal names (`vehicles[i].type`: one per vehicle). */
  readonly field: string;
  /** The intake_rules member that turns the rule on or sets it; null for checks every lead gets. */
  readonly setting: keyof IntakeRules | null;
  readonly appliesTo: AppliesTo;
  readonly outcome: RuleOutcome;
  readonly description: string;
  /** Criteria only: what the lead breaks under these rules (empty: nothing). */
  readonly check?: (lead: NewLead, rules: IntakeRules, ctx: CriteriaContext) => readonly Breach[];
}

const notIn = (list: readonly string[] | null, value: string) => list !== null && !list.includes(value);
const one = (cond: boolean, field: string, message: () => string): readonly Breach[] =>
  cond ? [{ field, message: message() }] : [];

export const INTAKE_RULES_TABLE: readonly IntakeRuleRow[] = [
  {
    code: "invalid_phone",
    title: "Valid phone number",
    field: "phone_number",
    setting: null,
    appliesTo: "live_and_test",
    outcome: "validation_error",
    description:
      "phone_number must be a valid number (libphonenumber, US unless it starts with +), and not toll-free, premium-rate, shared-cost, UAN, pager or voicemail.",
  },
  {
    code: "ship_date_in_past",
    title: "Ship date not in the past",
    field: "estimated_ship_date",
    setting: null,
    appliesTo: "live_and_test",
    outcome: "validation_error",
    description: "estimated_ship_date must not be before yesterday in the broker's time zone.",
  },
  {
    code: "invalid_vin",
    title: "Valid VIN",
    field: "vehicles[i].vin",
    setting: null,
    appliesTo: "live_and_test",
    outcome: "validation_error",
    description: "A VIN, when sent, has 17 characters, no I, O or Q, and a valid check digit in position 9.",
  },
  {
    code: "disposable_email",
    title: "No disposable email addresses",
    field: "email",
    setting: null,
    appliesTo: "live_and_test",
    outcome: "warning",
    description:
      "An email on a disposable-address domain is accepted with this warning (refused instead when reject_disposable_email is true).",
  },
  {
    code: "intake_paused",
    title: "Intake paused",
    field: "",
    setting: "paused",
    appliesTo: "live",
    outcome: "intake_paused",
    description: "While paused, live leads are refused with paused_reason and no Retry-After.",
  },
  {
    code: "intake_closed",
    title: "Intake schedule",
    field: "",
    setting: "schedule",
    appliesTo: "live",
    outcome: "intake_closed",
    description: "Outside the weekly schedule, live leads are refused with opens_at and Retry-After.",
  },
  {
    code: "origin_state_not_accepted",
    title: "Accepted origin states",
    field: "origin_zip",
    setting: "origin_states",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "The origin ZIP's state must be one of origin_states.",
    check: (lead, r) =>
      one(notIn(r.origin_states, lead.origin.stateCode), "origin_zip", () => {
        return `origin state ${lead.origin.stateCode} is not accepted; accepted: ${r.origin_states?.join(", ")}`;
      }),
  },
  {
    code: "destination_state_not_accepted",
    title: "Accepted destination states",
    field: "destination_zip",
    setting: "destination_states",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "The destination ZIP's state, when sent, must be one of destination_states.",
    check: (lead, r) =>
      one(
        lead.destination !== null && notIn(r.destination_states, lead.destination.stateCode),
        "destination_zip",
        () =>
          `destination state ${lead.destination?.stateCode} is not accepted; accepted: ${r.destination_states?.join(", ")}`,
      ),
  },
  {
    code: "overseas_type_not_accepted",
    title: "Accepted overseas types",
    field: "overseas_type",
    setting: "overseas_types",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "overseas_type must be one of overseas_types.",
    check: (lead, r) =>
      one(notIn(r.overseas_types, lead.overseasType), "overseas_type", () => {
        return `overseas_type ${lead.overseasType} is not accepted; accepted: ${r.overseas_types?.join(", ")}`;
      }),
  },
  {
    code: "ship_via_not_accepted",
    title: "Accepted ways to ship",
    field: "ship_via",
    setting: "ship_via",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "ship_via must be one of ship_via.",
    check: (lead, r) =>
      one(notIn(r.ship_via, lead.shipVia), "ship_via", () => {
        return `ship_via ${lead.shipVia} is not accepted; accepted: ${r.ship_via?.join(", ")}`;
      }),
  },
  {
    code: "vehicle_type_not_accepted",
    title: "Accepted vehicle types",
    field: "vehicles[i].type",
    setting: "vehicle_types",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "Every vehicle's type must be one of vehicle_types.",
    check: (lead, r) =>
      lead.vehicles.flatMap((v, i) =>
        one(notIn(r.vehicle_types, v.type), `vehicles[${i}].type`, () => {
          return `vehicles[${i}].type ${v.type} is not accepted; accepted: ${r.vehicle_types?.join(", ")}`;
        }),
      ),
  },
  {
    code: "too_many_vehicles",
    title: "Most vehicles per lead",
    field: "vehicles",
    setting: "max_vehicles",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "A lead may list at most max_vehicles vehicles.",
    check: (lead, r) =>
      one(lead.vehicles.length > r.max_vehicles, "vehicles", () => {
        return `${lead.vehicles.length} vehicles are more than the ${r.max_vehicles} accepted`;
      }),
  },
  {
    code: "destination_zip_required",
    title: "Destination ZIP required",
    field: "destination_zip",
    setting: "require_destination_zip",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "When require_destination_zip is true, destination_zip must be sent.",
    check: (lead, r) =>
      one(
        r.require_destination_zip && lead.destination === null,
        "destination_zip",
        () => "destination_zip is required",
      ),
  },
  {
    code: "ship_date_too_soon",
    title: "Earliest ship date",
    field: "estimated_ship_date",
    setting: "ship_date_min_days",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description:
      "estimated_ship_date must be at least ship_date_min_days after today (broker's time zone); 0 adds nothing to ship_date_in_past.",
    check: (_lead, r, ctx) =>
      one(r.ship_date_min_days > 0 && ctx.shipDateInDays < r.ship_date_min_days, "estimated_ship_date", () => {
        return `estimated_ship_date must be at least ${r.ship_date_min_days} days from today`;
      }),
  },
  {
    code: "ship_date_too_far",
    title: "Latest ship date",
    field: "estimated_ship_date",
    setting: "ship_date_max_days",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "estimated_ship_date must be at most ship_date_max_days after today (broker's time zone).",
    check: (_lead, r, ctx) =>
      one(ctx.shipDateInDays > r.ship_date_max_days, "estimated_ship_date", () => {
        return `estimated_ship_date must be at most ${r.ship_date_max_days} days from today`;
      }),
  },
  {
    code: "disposable_email",
    title: "No disposable email addresses",
    field: "email",
    setting: "reject_disposable_email",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "When reject_disposable_email is true, an email on a disposable-address domain is refused.",
    check: (_lead, r, ctx) =>
      one(r.reject_disposable_email && ctx.disposableEmail, "email", () => {
        return "email uses a disposable address domain, which is not accepted";
      }),
  },
  {
    code: "consent_required",
    title: "Consent required",
    field: "consent",
    setting: "consent_required",
    appliesTo: "live_and_test",
    outcome: "outside_criteria",
    description: "When consent_required is true, consent must carry a trusted_form_cert_url or a jornaya_lead_id.",
    check: (lead, r) =>
      one(
        r.consent_required && !lead.consent?.trustedFormCertUrl && !lead.consent?.jornayaLeadId,
        "consent",
        () => "consent with a trusted_form_cert_url or a jornaya_lead_id is required",
      ),
  },
  {
    code: "duplicate_lead",
    title: "Duplicate policy",
    field: "phone_number",
    setting: "duplicate_policy",
    appliesTo: "live_and_test",
    outcome: "duplicate_lead",
    description:
      "A lead whose phone or email matches a lead of the look-back window (any provider's for live leads; the same provider's test leads for test leads) is flagged (duplicate_policy flag: 201, billable false) or refused (reject).",
  },
  {
    code: "cap_reached",
    title: "Caps",
    field: "",
    setting: "caps",
    appliesTo: "live_and_test_separately",
    outcome: "cap_reached",
    description:
      "At most caps.day / caps.week / caps.month leads per calendar day, ISO week (from Monday) and calendar month; test leads are counted apart from live ones.",
  },
];

/** Every breach of the criteria rows, in table order (all of them, never just the first). */
export function criteriaBreaches(
  lead: NewLead,
  rules: IntakeRules,
  ctx: CriteriaContext,
): Array<Breach & { code: string }> {
  const out: Array<Breach & { code: string }> = [];
  for (const row of INTAKE_RULES_TABLE) {
    if (!row.check) continue;
    for (const b of row.check(lead, rules, ctx)) out.push({ code: row.code, ...b });
  }
  return out;
}

/** The codes `outside_criteria` may list, in table order. */
export const CRITERIA_CODES: readonly string[] = INTAKE_RULES_TABLE.filter((r) => r.check).map((r) => r.code);
