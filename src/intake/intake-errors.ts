/**
 * The refusals of the intake pipeline, as DomainErrors each edge renders through its own table
 * (REST: 400 / 429 problem+json; gRPC: INVALID_ARGUMENT / RESOURCE_EXHAUSTED with ErrorInfo).
 */
import { DomainError } from "../errors.ts";
import type { Duplicate } from "../leads/lead.ts";
import { secondsUntil } from "./business-time.ts";
import type { CapWindow } from "./intake-rules.ts";
import type { Breach } from "./rule-table.ts";

export function intakePaused(reason: string | null): DomainError {
  const why = reason ? `: ${reason}` : "";
  return new DomainError("rate_limited", `intake is paused for this provider${why}`, {
    code: "intake_paused",
    pausedReason: reason,
  });
}

export function intakeClosed(opensAt: Date | null, now: Date): DomainError {
  const message =
    opensAt === null
      ? "intake is closed: the schedule has no opening"
      : `intake is closed until ${opensAt.toISOString()}`;
  return new DomainError("rate_limited", message, {
    code: "intake_closed",
    opensAt,
    ...(opensAt && { retryAfterSeconds: secondsUntil(opensAt, now) }),
  });
}

export function outsideCriteria(breaches: ReadonlyArray<Breach & { code: string }>): DomainError {
  const detail =
    breaches.length === 1
      ? (breaches[0]?.message ?? "the lead is outside the accepted criteria")
      : `the lead breaks ${breaches.length} intake rules: ${breaches.map((b) => b.code).join(", ")}`;
  return new DomainError("invalid_argument", detail, {
    code: "outside_criteria",
    violations: breaches.map((b) => ({ field: b.field, code: b.code, message: b.message })),
  });
}

export function capReached(window: CapWindow, resetsAt: Date, now: Date): DomainError {
  return new DomainError(
    "rate_limited",
    `the ${window} cap of leads is reached; it resets at ${resetsAt.toISOString()}`,
    {
      code: "cap_reached",
      window,
      resetsAt,
      retryAfterSeconds: secondsUntil(resetsAt, now),
    },
  );
}

/** `duplicate` as the provider may see it (providerDuplicate already applied). */
export function duplicateLead(duplicate: Duplicate): DomainError {
  const on = duplicate.matchedOn.join(" and ");
  // Another provider's original is dated to its business day (its start), yours to the millisecond.
  const seen = duplicate.sameProvider
    ? `one first seen at ${duplicate.firstSeenAt.toISOString()}`
    : `another provider's lead first seen on the business day starting ${duplicate.firstSeenAt.toISOString()}`;
  return new DomainError("invalid_argument", `the lead duplicates ${seen} (same ${on}); nothing was stored`, {
    code: "duplicate_lead",
    duplicate,
    violations: duplicate.matchedOn.map((field) => ({
      field,
      code: "duplicate_lead",
      message: `${field} matches a lead created within the duplicate window`,
    })),
  });
}
