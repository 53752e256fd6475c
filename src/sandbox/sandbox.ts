/**
 * Test mode's reserved values: what an integrator writes in `note_from_shipper` of a lead created
 * with an `lp_test_` key to see each outcome without anyone's help. Live leads ignore them.
 */
import { DomainError } from "../errors.ts";
import type { LeadState, NewLead } from "../leads/lead.ts";

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

/** The refusal a reserved value asks for, before anything is stored; undefined for the rest. */
export function sandboxRefusal(lead: NewLead): DomainError | undefined {
  if (lead.noteFromShipper?.trim() !== RATE_LIMITED_MARKER) return undefined;
  return new DomainError(
    "rate_limited",
    `test mode: "${RATE_LIMITED_MARKER}" answers 429 as a rate limit would; retry in ${SANDBOX_RETRY_AFTER_SECONDS} s`,
    { code: "rate_limited", window: "minute", retryAfterSeconds: SANDBOX_RETRY_AFTER_SECONDS },
  );
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
