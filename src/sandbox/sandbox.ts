/**
 * Test mode's reserved values: what an integrator writes in `note_from_shipper` of a lead created
 * with an `lp_test_` key to see each outcome without anyone's help. Live leads ignore them.
 */
import { DomainError } from "../errors.ts";
import { capWindow } from "../intake/business-time.ts";
import { capReached, duplicateLead, intakeClosed, outsideCriteria } from "../intake/intake-errors.ts";
import { type LeadState, type NewLead, providerDuplicate } from "../leads/lead.ts";

/** Seconds between the sandbox's steps (after creation, and between two moves). */
export const SANDBOX_STEP_SECONDS = 2;
/** What a reserved rate-limit answer asks the client to wait. */
export const SANDBOX_RETRY_AFTER_SECONDS = 7;

export interface SandboxStep {
  readonly to: LeadState;
  /** The lead_status to set; the state's name when absent. */
  readonly leadStatus?: string;
}

/** The reserved markers and the moves each one makes, in order. */
export const SANDBOX_SCENARIOS = {
  /** Moves to QUOTE. */
  "sandbox:quote": [{ to: "QUOTE" }],
  /** Moves to QUOTE, then to ORDER. */
  "sandbox:order": [{ to: "QUOTE" }, { to: "ORDER" }],
  /** Moves to QUOTE, then changes only its lead_status to NEGOTIATING (lead.status_changed). */
  "sandbox:status": [{ to: "QUOTE" }, { to: "QUOTE", leadStatus: "NEGOTIATING" }],
} as const satisfies Record<string, readonly SandboxStep[]>;
export type SandboxMarker = keyof typeof SANDBOX_SCENARIOS;
export const SANDBOX_MARKERS = Object.keys(SANDBOX_SCENARIOS) as SandboxMarker[];

/** Creating a test lead with this note answers 429 rate_limited (nothing is stored). */
export const RATE_LIMITED_MARKER = "sandbox:rate_limited";

/**
 * The refusals a reserved value asks for, before anything is stored, each as the real refusal
 * would answer: `sandbox:rate_limited` (429, 7 s), `sandbox:duplicate` (400 duplicate_lead, as
 * under duplicate_policy reject, matched on the phone of another provider's lead a day earlier),
 * `sandbox:cap_reached` (429, the day cap, resetting at the next midnight of BUSINESS_TIMEZONE),
 * `sandbox:intake_closed` (429, opening at the next midnight) and `sandbox:outside_criteria` (400,
 * the origin state not accepted).
 */
export const REFUSAL_MARKERS = [
  RATE_LIMITED_MARKER,
  "sandbox:duplicate",
  "sandbox:cap_reached",
  "sandbox:intake_closed",
  "sandbox:outside_criteria",
] as const;

/** Every reserved value and what it does, in words (the provider portal's Sandbox page shows this table). */
export const SANDBOX_VALUES: readonly { readonly value: string; readonly effect: string }[] = [
  { value: "sandbox:quote", effect: `Moves the lead to QUOTE about ${SANDBOX_STEP_SECONDS} s after it is created.` },
  { value: "sandbox:order", effect: `Moves it to QUOTE, then to ORDER, ${SANDBOX_STEP_SECONDS} s apart.` },
  { value: "sandbox:status", effect: "Moves it to QUOTE, then changes only its lead_status to NEGOTIATING." },
  {
    value: RATE_LIMITED_MARKER,
    effect: `Answers 429 rate_limited with Retry-After: ${SANDBOX_RETRY_AFTER_SECONDS} (nothing is stored).`,
  },
  { value: "sandbox:duplicate", effect: "Answers 400 duplicate_lead, as a duplicate under the reject policy would." },
  { value: "sandbox:cap_reached", effect: "Answers 429 cap_reached, as a full day cap would." },
  { value: "sandbox:intake_closed", effect: "Answers 429 intake_closed, opening at the next midnight." },
  { value: "sandbox:outside_criteria", effect: "Answers 400 outside_criteria (the origin state is not accepted)." },
];

/** The refusal a reserved value asks for, before anything is stored; undefined for the rest. */
export function createSandboxRefusal(zone: string) {
  return (lead: NewLead, now: Date): DomainError | undefined => {
    switch (lead.noteFromShipper?.trim()) {
      case RATE_LIMITED_MARKER:
        return new DomainError(
          "rate_limited",
          `test mode: "${RATE_LIMITED_MARKER}" answers 429 as a rate limit would; retry in ${SANDBOX_RETRY_AFTER_SECONDS} s`,
          { code: "rate_limited", window: "minute", retryAfterSeconds: SANDBOX_RETRY_AFTER_SECONDS },
        );
      case "sandbox:duplicate":
        return duplicateLead(
          providerDuplicate(
            {
              matchedOn: ["phone_number"],
              firstSeenAt: new Date(now.getTime() - 24 * 3600 * 1000),
              sameProvider: false,
              original: null,
            },
            zone,
          ),
        );
      case "sandbox:cap_reached":
        return capReached("day", capWindow("day", now, zone).resetsAt, now);
      case "sandbox:intake_closed":
        return intakeClosed(capWindow("day", now, zone).resetsAt, now);
      case "sandbox:outside_criteria":
        return outsideCriteria([
          {
            field: "origin_zip",
            code: "origin_state_not_accepted",
            message: `test mode: origin state ${lead.origin.stateCode} is not accepted ("sandbox:outside_criteria")`,
          },
        ]);
      default:
        return undefined;
    }
  };
}

/**
 * The next move of a test lead with `marker` that is in `state` with `leadStatus`, or undefined
 * when its scenario is done (or it has none).
 */
export function nextSandboxStep(marker: string | null, state: LeadState, leadStatus: string): SandboxStep | undefined {
  const steps: readonly SandboxStep[] | undefined = SANDBOX_SCENARIOS[marker?.trim() as SandboxMarker];
  if (!steps) return undefined;
  // The first step not yet reached: a state after the lead's, or its state with another status.
  const order = ["LEAD", "QUOTE", "ORDER"];
  return steps.find((s) => {
    const ahead = order.indexOf(s.to) - order.indexOf(state);
    return ahead > 0 || (ahead === 0 && s.leadStatus !== undefined && s.leadStatus !== leadStatus);
  });
}

/**
 * For each marker, where its leads still have a move to make, as SQL can select them: a lead in
 * a state before the scenario's last, or in that state without the status its last step sets.
 * The same rule as nextSandboxStep (a test checks they agree on every position).
 */
export function unfinishedPositions(): { marker: SandboxMarker; states: LeadState[]; statusNot?: string }[] {
  const order: LeadState[] = ["LEAD", "QUOTE", "ORDER"];
  const positions: { marker: SandboxMarker; states: LeadState[]; statusNot?: string }[] = [];
  for (const marker of SANDBOX_MARKERS) {
    const steps: readonly SandboxStep[] = SANDBOX_SCENARIOS[marker];
    const last = steps[steps.length - 1] as SandboxStep;
    const before = order.slice(0, order.indexOf(last.to));
    if (before.length > 0) positions.push({ marker, states: before });
    if (last.leadStatus !== undefined) positions.push({ marker, states: [last.to], statusNot: last.leadStatus });
  }
  return positions;
}
