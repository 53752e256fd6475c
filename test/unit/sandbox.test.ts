/** The sandbox mover's SQL selection agrees with the scenario table on every position a test lead can be in. */
import { describe, expect, it } from "vitest";
import type { LeadState } from "../../src/leads/lead.ts";
import { nextSandboxStep, SANDBOX_MARKERS, unfinishedPositions } from "../../src/sandbox/sandbox.ts";

const STATES: LeadState[] = ["LEAD", "QUOTE", "ORDER"];
const STATUSES = ["LEAD", "QUOTE", "ORDER", "NEGOTIATING", "SOMETHING_ELSE"];

/** What dueTestLeads' WHERE clause selects, in JavaScript. */
function selected(marker: string, state: LeadState, status: string): boolean {
  if (state === "ORDER") return false;
  return unfinishedPositions().some(
    (u) => u.marker === marker && u.states.includes(state) && (u.statusNot === undefined || status !== u.statusNot),
  );
}

describe("the sandbox mover's selection", () => {
  it("selects a test lead exactly when its scenario has a next move", () => {
    for (const marker of SANDBOX_MARKERS)
      for (const state of STATES)
        for (const status of STATUSES)
          expect(selected(marker, state, status), `${marker} ${state} ${status}`).toBe(
            nextSandboxStep(marker, state, status) !== undefined,
          );
  });

  it("leaves finished leads out: sandbox:quote in QUOTE, sandbox:status once NEGOTIATING", () => {
    expect(selected("sandbox:quote", "QUOTE", "QUOTE")).toBe(false);
    expect(selected("sandbox:status", "QUOTE", "NEGOTIATING")).toBe(false);
    expect(selected("sandbox:status", "QUOTE", "QUOTE")).toBe(true);
    expect(selected("sandbox:order", "QUOTE", "QUOTE")).toBe(true);
  });
});
