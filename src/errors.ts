/**
 * The one error type the service layer throws. It carries meaning only (kind, code, message,
 * violations and typed extras); each edge renders it through its own table: REST as RFC 9457
 * problem+json (rest/problem.ts), Connect/gRPC as a ConnectError with google.rpc details
 * (rpc/errors.ts). Nothing here knows HTTP or gRPC.
 */

export type ErrorKind =
  | "invalid_argument"
  | "duplicate"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "failed_precondition"
  | "rate_limited"
  | "unavailable"
  | "internal";

/** One field problem: `field` is a path such as `vehicles[0].year`. */
export interface FieldViolation {
  readonly field: string;
  readonly code: string;
  readonly message: string;
}

import type { Quota } from "./limits.ts";

/** What a duplicate lead matched: the earliest live lead in the look-back window with its phone or email. */
export interface DuplicateMatch {
  /** `phone_number`, `email`: the fields on which some lead in the window matched. */
  readonly matchedOn: readonly string[];
  /**
   * When the earliest matching lead was created (exact as stored; a provider is shown another
   * provider's only to the business day: providerDuplicate).
   */
  readonly firstSeenAt: Date;
  /** Whether that lead is the same provider's. */
  readonly sameProvider: boolean;
  /**
   * That lead. A provider is shown it only when it is its own (providerView); administrators
   * always.
   */
  readonly original: {
    readonly id: number;
    readonly providerId: number;
    readonly orderNumber: string;
    readonly externalId: string;
  } | null;
}

/** The lead that already uses an external_id. */
export interface ExistingLead {
  readonly id: number;
  readonly orderNumber: string;
}

export interface DomainErrorOptions {
  /** Machine-readable code for clients, e.g. `invalid_zip`, `lead_not_found`. */
  readonly code: string;
  readonly violations?: readonly FieldViolation[];
  /** duplicate_external_id: the provider's lead that already has the id. */
  readonly existingLead?: ExistingLead;
  /** rate_limited, unavailable: whole seconds before a retry can succeed. */
  readonly retryAfterSeconds?: number;
  /** rate_limited: the exhausted window; cap_reached: the cap's window. */
  readonly window?: "minute" | "day" | "week" | "month";
  /** cap_reached: when the cap's window resets. */
  readonly resetsAt?: Date;
  /** intake_closed: the next opening (null when the schedule never opens). */
  readonly opensAt?: Date | null;
  /** intake_paused: the reason the administrator gave (null when none). */
  readonly pausedReason?: string | null;
  /** duplicate_lead: what the lead matched, as its provider may see it. */
  readonly duplicate?: DuplicateMatch;
  /** rate_limited by a provider's limits: where its windows stand. */
  readonly quota?: Quota;
  /** invalid_transition: the state the lead is in. */
  readonly currentState?: string;
  readonly cause?: unknown;
}

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly violations: readonly FieldViolation[];
  readonly existingLead: ExistingLead | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly window: "minute" | "day" | "week" | "month" | undefined;
  readonly quota: Quota | undefined;
  readonly currentState: string | undefined;
  readonly resetsAt: Date | undefined;
  readonly opensAt: Date | null | undefined;
  readonly pausedReason: string | null | undefined;
  readonly duplicate: DuplicateMatch | undefined;

  constructor(kind: ErrorKind, message: string, options: DomainErrorOptions) {
    super(message, { cause: options.cause });
    this.name = "DomainError";
    this.kind = kind;
    this.code = options.code;
    this.violations = options.violations ?? [];
    this.existingLead = options.existingLead;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.window = options.window;
    this.quota = options.quota;
    this.currentState = options.currentState;
    this.resetsAt = options.resetsAt;
    this.opensAt = options.opensAt;
    this.pausedReason = options.pausedReason;
    this.duplicate = options.duplicate;
  }
}

/** The problem code and one-line detail for a list of violations. */
export function describeViolations(violations: readonly FieldViolation[]): { code: string; detail: string } {
  const onlyZip = violations.length > 0 && violations.every((v) => v.code === "invalid_zip");
  const detail =
    violations.length === 1
      ? (violations[0]?.message ?? "invalid request")
      : `${violations.length} fields are invalid: ${violations.map((v) => v.field).join(", ")}`;
  return { code: onlyZip ? "invalid_zip" : "validation_error", detail };
}

/** An `invalid_argument` error listing every violation. */
export function invalidArgument(violations: readonly FieldViolation[]): DomainError {
  const { code, detail } = describeViolations(violations);
  return new DomainError("invalid_argument", detail, { code, violations });
}

/** Throws `invalid_argument` with every violation at once; does nothing for an empty list. */
export function throwIfViolations(violations: readonly FieldViolation[]): void {
  if (violations.length > 0) throw invalidArgument(violations);
}

/** Seconds a client should wait before retrying while the database is unreachable. */
export const DATABASE_RETRY_SECONDS = 5;

/**
 * Database errors that mean "the database is not reachable right now" become `unavailable`,
 * so a client learns to retry instead of seeing an internal error.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object") return false;
  const code = typeof e.code === "string" ? e.code : "";
  if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "57P01", "57P03"].includes(code)) {
    return true;
  }
  if (code.startsWith("08")) return true; // connection exception class
  const msg = typeof e.message === "string" ? e.message : "";
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|database unavailable/i.test(
    msg,
  );
}

/**
 * What an edge renders for any thrown value: a DomainError as it is, a database outage as
 * `unavailable`, anything else as `internal` (its message is never shown to clients).
 */
export function asDomainError(err: unknown): DomainError {
  if (err instanceof DomainError) return err;
  if (isDatabaseUnavailable(err)) {
    return new DomainError("unavailable", "the database is unavailable; retry later", {
      code: "service_unavailable",
      retryAfterSeconds: DATABASE_RETRY_SECONDS,
      cause: err,
    });
  }
  return new DomainError("internal", "an unexpected error occurred; it has been logged", {
    code: "internal_error",
    cause: err,
  });
}
