/**
 * THE intake pipeline, top to bottom: the stages a lead submission goes through, in order, each
 * named with the rules of the rule table (rule-table.ts) it applies. The lead service
 * (leads/lead.service.ts `create`) runs this list and then stores the lead; authentication and
 * the rate limits come before it, at the edge (edge/surfaces.ts's gate). A stage that refuses
 * throws, and nothing is stored: every bad field at once (`invalid_argument`), the sandbox's
 * reserved answer (test keys), `intake_paused` or `intake_closed` (live leads), every broken
 * criterion at once (`outside_criteria`). The last stage runs in the database, in the insert
 * statement itself: intake_guard() (its SQL: intake-guard.sql.ts), atomically with the insert,
 * answers `duplicate_lead` (reject policy) or `cap_reached`, or lets the lead in, flagged when it
 * is a duplicate.
 */
import { type DomainError, type FieldViolation, throwIfViolations } from "../errors.ts";
import type { LeadOwner, NewLead, Warning } from "../leads/lead.ts";
import type { IntakeRules } from "./intake-rules.ts";
import { CRITERIA_CODES } from "./rule-table.ts";

/** What intake_guard() (intake-guard.sql.ts) is asked to check, atomically with the insert. */
export interface IntakeGuard {
  /** Match on the phone / the email (DUPLICATE_MATCH). */
  readonly matchPhone: boolean;
  readonly matchEmail: boolean;
  readonly windowDays: number;
  /** Refuse a duplicate (reject) instead of storing it flagged (flag). */
  readonly rejectDuplicates: boolean;
  /** The provider's caps of the lead's mode: window name, window start, limit. */
  readonly caps: ReadonlyArray<{ readonly window: string; readonly start: Date; readonly limit: number }>;
}

/** A submission on its way through the pipeline: what the stages have found so far. */
export interface Intake {
  readonly owner: LeadOwner;
  /** The submission as received (the parsed JSON body, or the RPC message in the same shape). */
  readonly input: unknown;
  /** When it arrived (the lead's own checks: "yesterday", ship-date days). */
  readonly at: Date;
  lead?: NewLead;
  warnings: readonly Warning[];
  warningsTruncated: number;
  /** The provider's intake rules, and when the intake service read them. */
  provider?: { readonly rules: IntakeRules; readonly at: Date };
  guard?: IntakeGuard;
}

export interface IntakeStage {
  readonly name: string;
  /** The codes of the rule-table rows this stage applies. */
  readonly rules: readonly string[];
  /** In the service, or in the database (the insert statement: intake_guard()). */
  readonly runsIn: "service" | "database";
  run(intake: Intake): void | Promise<void>;
}

/** What the stages call: the lead's own rules (leads/), the sandbox (sandbox/), the provider's intake rules (intake.service.ts). */
export interface IntakeStageDeps {
  /** Every rule of the submission's fields (leads/lead.validation.ts). */
  validate(
    input: unknown,
    at: Date,
  ): {
    readonly lead: NewLead | undefined;
    readonly violations: readonly FieldViolation[];
    readonly warnings: readonly Warning[];
    readonly warningsTruncated: number;
  };
  /** Test mode only: the sandbox's answer to a reserved value, or nothing (sandbox/sandbox.ts). */
  readonly sandboxRefusal?: ((lead: NewLead, at: Date) => DomainError | undefined) | undefined;
  /** The provider's rules as they stand now (intake.service.ts). */
  rulesNow(owner: LeadOwner): Promise<{ readonly rules: IntakeRules; readonly at: Date }>;
  /** Throws intake_paused or intake_closed for a live lead. */
  checkOpen(owner: LeadOwner, rules: IntakeRules, at: Date): void;
  /** Throws outside_criteria listing every broken criterion. */
  checkCriteria(lead: NewLead, rules: IntakeRules, at: Date): void;
  /** intake_guard()'s arguments under these rules. */
  guardFor(rules: IntakeRules, at: Date): IntakeGuard;
}

/** The lead and intake_guard()'s arguments, once every stage before the insert has run. */
export interface Admitted {
  readonly lead: NewLead;
  readonly warnings: readonly Warning[];
  readonly warningsTruncated: number;
  readonly guard: IntakeGuard;
}

const leadOf = (intake: Intake): NewLead => {
  if (!intake.lead) throw new Error("an intake stage ran before the fields stage");
  return intake.lead;
};
const providerOf = (intake: Intake) => {
  if (!intake.provider) throw new Error("an intake stage ran before the provider's rules were read");
  return intake.provider;
};

export function intakePipeline(deps: IntakeStageDeps): readonly IntakeStage[] {
  return [
    {
      name: "fields",
      rules: ["invalid_phone", "ship_date_in_past", "invalid_vin", "disposable_email"],
      runsIn: "service",
      run(intake) {
        const { lead, violations, warnings, warningsTruncated } = deps.validate(intake.input, intake.at);
        throwIfViolations(violations);
        if (!lead) throw new Error("validation returned no lead and no violations");
        Object.assign(intake, { lead, warnings, warningsTruncated });
      },
    },
    {
      name: "sandbox",
      rules: [],
      runsIn: "service",
      run(intake) {
        const refusal = intake.owner.livemode ? undefined : deps.sandboxRefusal?.(leadOf(intake), intake.at);
        if (refusal) throw refusal;
      },
    },
    {
      name: "pause_and_schedule",
      rules: ["intake_paused", "intake_closed"],
      runsIn: "service",
      async run(intake) {
        intake.provider = await deps.rulesNow(intake.owner);
        deps.checkOpen(intake.owner, intake.provider.rules, intake.provider.at);
      },
    },
    {
      name: "criteria",
      rules: CRITERIA_CODES,
      runsIn: "service",
      run(intake) {
        const { rules, at } = providerOf(intake);
        deps.checkCriteria(leadOf(intake), rules, at);
      },
    },
    {
      name: "intake_guard",
      rules: ["duplicate_lead", "cap_reached"],
      runsIn: "database",
      run(intake) {
        const { rules, at } = providerOf(intake);
        intake.guard = deps.guardFor(rules, at);
      },
    },
  ];
}

/** Runs every stage in order; the lead and what its insert must check, or the first stage's refusal. */
export async function runIntake(
  stages: readonly IntakeStage[],
  owner: LeadOwner,
  input: unknown,
  at: Date,
): Promise<Admitted> {
  const intake: Intake = { owner, input, at, warnings: [], warningsTruncated: 0 };
  for (const stage of stages) await stage.run(intake);
  if (!intake.guard) throw new Error("the intake pipeline ended without intake_guard's arguments");
  return {
    lead: leadOf(intake),
    warnings: intake.warnings,
    warningsTruncated: intake.warningsTruncated,
    guard: intake.guard,
  };
}
