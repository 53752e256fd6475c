/**
 * The one error type the service layer throws. Each edge renders it once: REST as RFC 9457
 * problem+json, Connect/gRPC as a ConnectError (see rest/problem.ts and rpc/errors.ts).
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

export interface DomainErrorOptions {
  /** Machine-readable code for clients, e.g. `invalid_zip`, `lead_not_found`. */
  readonly code: string;
  readonly violations?: readonly FieldViolation[];
  /** Extra members of the problem body (e.g. `existing_lead`). Never secrets. */
  readonly extra?: Readonly<Record<string, unknown>>;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  readonly violations: readonly FieldViolation[];
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(kind: ErrorKind, message: string, options: DomainErrorOptions) {
    super(message, { cause: options.cause });
    this.name = "DomainError";
    this.kind = kind;
    this.code = options.code;
    this.violations = options.violations ?? [];
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/** The `WWW-Authenticate` challenge sent with every 401, for API keys and JWTs alike. */
export const BEARER_CHALLENGE = { "WWW-Authenticate": 'Bearer realm="lead-provider-api", error="invalid_token"' };

/** One table from error kind to HTTP status and title (the Connect side is in rpc/errors.ts). */
export const HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  invalid_argument: 400,
  duplicate: 400, // the spec maps a duplicate external_id to 400, not 409
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  failed_precondition: 409,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

export const TITLES: Readonly<Record<ErrorKind, string>> = {
  invalid_argument: "Invalid request",
  duplicate: "Duplicate",
  unauthenticated: "Unauthenticated",
  permission_denied: "Forbidden",
  not_found: "Not found",
  failed_precondition: "Conflict with current state",
  rate_limited: "Too many requests",
  unavailable: "Service unavailable",
  internal: "Internal server error",
};

/** The problem code and one-line detail for a list of violations. */
export function describeViolations(violations: readonly FieldViolation[]): { code: string; detail: string } {
  const onlyZip = violations.length > 0 && violations.every((v) => v.code === "invalid_zip");
  const detail =
    violations.length === 1
      ? (violations[0]?.message ?? "invalid request")
      : `${violations.length} fields are invalid: ${violations.map((v) => v.field).join(", ")}`;
  return { code: onlyZip ? "invalid_zip" : "validation_error", detail };
}

/** Throws `invalid_argument` with every violation at once; does nothing for an empty list. */
export function throwIfViolations(violations: readonly FieldViolation[]): void {
  if (violations.length === 0) return;
  const { code, detail } = describeViolations(violations);
  throw new DomainError("invalid_argument", detail, { code, violations });
}

/**
 * Database errors that mean "the database is not reachable right now" become `unavailable`
 * (503), so a client learns to retry instead of seeing a 500.
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
