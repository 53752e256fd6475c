/**
 * The errors a call can throw. Every refusal of the service is an RFC 9457 problem document with a
 * stable `code`; each code maps to one class here (ERROR_CLASSES, checked against the contract's
 * list), carrying the whole problem and the request id. A call that got no answer throws a
 * ConnectionError, which carries the request id the SDK sent (the service logs it if the request
 * reached it).
 */
import type { components } from "./generated/schema.ts";

type Schemas = components["schemas"];
/** The problem document of a refusal, as the service sent it. */
export type Problem = Schemas["Problem"];
/** Every problem code the contract documents. */
export type ProblemCode = Problem["code"];

/** The base of every error this SDK throws. */
export class LeadProviderError extends Error {}

/** An answer that was not a success, or no answer at all: the base of every error a call throws. */
export class ApiError extends LeadProviderError {
  /** HTTP status; 0 when no answer arrived (ConnectionError). */
  readonly status: number;
  /** The problem's stable code (`validation_error`, `cap_reached`, …; `connection_error` or `timeout` without an answer). */
  readonly code: string;
  /** The request's id (the `X-Request-Id` header, the problem's `request_id`): quote it when asking about a request. */
  readonly requestId: string;
  /** The whole problem document as the service sent it (undefined without an answer). */
  readonly problem: Problem | undefined;
  /** The answer's headers (undefined without an answer). */
  readonly headers: Headers | undefined;

  constructor(
    message: string,
    init: { status: number; code: string; requestId: string; problem?: Problem; headers?: Headers; cause?: unknown },
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.problem = init.problem;
    this.headers = init.headers;
  }

  /** The same as `requestId`, spelled as the problem document spells it. */
  get request_id(): string {
    return this.requestId;
  }

  /** The problem's `detail`, when there is one. */
  get detail(): string | undefined {
    return this.problem?.detail;
  }

  /** Seconds the service asked to wait (`Retry-After`), when it did. */
  get retryAfter(): number | undefined {
    const header = this.headers?.get("retry-after");
    if (header != null && /^\d+$/.test(header.trim())) return Number(header.trim());
    return this.problem?.retry_after;
  }
}

/** The request is invalid: `errors` names every bad field (validation_error, invalid_zip, outside_criteria, …). */
export class ValidationError extends ApiError {
  /** Each invalid field: `field` (e.g. `vehicles[0].year`), a machine-readable `code` and a `message`. */
  get errors(): Schemas["FieldError"][] {
    return this.problem?.errors ?? [];
  }
}

/**
 * The lead was not taken because it is a duplicate: `duplicate_external_id` (this provider already
 * sent a lead with this external_id; `existingLead` names it) or `duplicate_lead` (the intake
 * rules refuse a lead whose phone or email matches a recent one; `duplicate` says what matched).
 */
export class DuplicateLeadError extends ApiError {
  get errors(): Schemas["FieldError"][] {
    return this.problem?.errors ?? [];
  }
  /** On `duplicate_external_id`: the stored lead with this external_id. */
  get existingLead(): NonNullable<Problem["existing_lead"]> | undefined {
    return this.problem?.existing_lead;
  }
  /** On `duplicate_lead`: what the lead matched (never whose lead). */
  get duplicate(): Problem["duplicate"] | undefined {
    return this.problem?.duplicate;
  }
}

/** The API key is missing, malformed, unknown, revoked or expired (401). */
export class AuthenticationError extends ApiError {}

/** The key is valid but may not do this (403), or the provider is inactive. */
export class PermissionError extends ApiError {}

/** Nothing of this provider (in this key's mode) has that id (404). */
export class NotFoundError extends ApiError {}

/** The state of what was asked for refuses it (409: a return already contested, a closed contest window …). */
export class ConflictError extends ApiError {}

/** The provider's per-minute or per-day rate limit is used up (429 rate_limited). */
export class RateLimitError extends ApiError {
  /** Which limit: `minute` or `day`. */
  get window(): Problem["window"] | undefined {
    return this.problem?.window;
  }
}

/** The provider's day, week or month cap of leads is full (429 cap_reached); nothing was stored. */
export class CapReachedError extends ApiError {
  /** Which cap: `day`, `week` or `month`. */
  get window(): Problem["window"] | undefined {
    return this.problem?.window;
  }
  /** When the cap's window resets. */
  get resetsAt(): Date | undefined {
    return this.problem?.resets_at === undefined ? undefined : new Date(this.problem.resets_at);
  }
}

/** Outside the provider's weekly intake schedule (429 intake_closed); nothing was stored. */
export class IntakeClosedError extends ApiError {
  /** The schedule's next opening. */
  get opensAt(): Date | undefined {
    const at = this.problem?.opens_at;
    return at == null ? undefined : new Date(at);
  }
}

/** An administrator paused the provider's intake (429 intake_paused, no Retry-After); nothing was stored. */
export class IntakePausedError extends ApiError {
  get pausedReason(): string | undefined {
    return this.problem?.paused_reason ?? undefined;
  }
}

/** The service failed or is unavailable (5xx); retried before it is thrown. */
export class ServerError extends ApiError {}

/** No answer arrived: the connection failed or was reset, or the attempt timed out (`code` `timeout`). */
export class ConnectionError extends ApiError {}

/** A webhook whose signature, timestamp or headers do not verify. */
export class WebhookVerificationError extends LeadProviderError {}

/**
 * Names each class on its prototype, so that an error's stack and Node's report of an uncaught
 * one say `RateLimitError: …` (a class field would be set only after the stack was taken).
 */
for (const [Class, name] of [
  [LeadProviderError, "LeadProviderError"],
  [ApiError, "ApiError"],
  [ValidationError, "ValidationError"],
  [DuplicateLeadError, "DuplicateLeadError"],
  [AuthenticationError, "AuthenticationError"],
  [PermissionError, "PermissionError"],
  [NotFoundError, "NotFoundError"],
  [ConflictError, "ConflictError"],
  [RateLimitError, "RateLimitError"],
  [CapReachedError, "CapReachedError"],
  [IntakeClosedError, "IntakeClosedError"],
  [IntakePausedError, "IntakePausedError"],
  [ServerError, "ServerError"],
  [ConnectionError, "ConnectionError"],
  [WebhookVerificationError, "WebhookVerificationError"],
] as const) {
  Object.defineProperty(Class.prototype, "name", { value: name, writable: true, configurable: true });
}

type ErrorClass = new (
  message: string,
  init: { status: number; code: string; requestId: string; problem?: Problem; headers?: Headers },
) => ApiError;

/**
 * The class each problem code is thrown as. Typed by the contract's list of codes, so a code added
 * to openapi.yaml does not compile until it is placed here.
 */
export const ERROR_CLASSES: Readonly<Record<ProblemCode, ErrorClass>> = {
  validation_error: ValidationError,
  invalid_zip: ValidationError,
  outside_criteria: ValidationError,
  malformed_json: ValidationError,
  payload_too_large: ValidationError,
  unsupported_media_type: ValidationError,
  duplicate_header: ValidationError,
  invalid_host: ValidationError,
  method_not_allowed: ValidationError,
  weak_password: ValidationError,
  invite_invalid: ValidationError,
  reset_invalid: ValidationError,
  wrong_current_password: ValidationError,
  second_factor_not_started: ValidationError,
  challenge_invalid: ValidationError,
  honeypot_filled: ValidationError,
  duplicate_external_id: DuplicateLeadError,
  duplicate_lead: DuplicateLeadError,
  invalid_api_key: AuthenticationError,
  expired_api_key: AuthenticationError,
  invalid_token: AuthenticationError,
  session_required: AuthenticationError,
  sign_in_failed: AuthenticationError,
  second_factor_required: AuthenticationError,
  invalid_totp_code: AuthenticationError,
  publishable_key_required: AuthenticationError,
  publishable_key_invalid: AuthenticationError,
  secret_key_refused: AuthenticationError,
  forbidden: PermissionError,
  provider_inactive: PermissionError,
  portal_admin_required: PermissionError,
  cross_origin_refused: PermissionError,
  origin_required: PermissionError,
  origin_not_allowed: PermissionError,
  form_disabled: PermissionError,
  lead_not_found: NotFoundError,
  request_not_found: NotFoundError,
  delivery_not_found: NotFoundError,
  provider_not_found: NotFoundError,
  portal_user_not_found: NotFoundError,
  password_reset_unavailable: NotFoundError,
  return_not_found: NotFoundError,
  not_found: NotFoundError,
  zip_not_found: NotFoundError,
  consent_not_found: NotFoundError,
  webhook_not_configured: ConflictError,
  webhook_disabled: ConflictError,
  duplicate_provider_name: ConflictError,
  duplicate_portal_user_email: ConflictError,
  own_portal_account: ConflictError,
  last_portal_admin: ConflictError,
  insufficient_balance: ConflictError,
  reference_reused: ConflictError,
  not_billable: ConflictError,
  return_window_closed: ConflictError,
  already_returned: ConflictError,
  return_cap_reached: ConflictError,
  already_contested: ConflictError,
  contest_window_closed: ConflictError,
  return_decided: ConflictError,
  return_not_contested: ConflictError,
  rate_limited: RateLimitError,
  cap_reached: CapReachedError,
  intake_closed: IntakeClosedError,
  intake_paused: IntakePausedError,
  service_unavailable: ServerError,
  internal_error: ServerError,
};

/** The class of a code the contract does not (yet) list, by status. */
function classByStatus(status: number): ErrorClass {
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  if (status >= 400) return ValidationError;
  return ApiError;
}

function isProblem(body: unknown): body is Problem {
  return typeof body === "object" && body !== null && typeof (body as { code?: unknown }).code === "string";
}

/** The error for a refusal: its class by code (else by status), its problem, and the request id. */
export function errorFromResponse(response: Response, body: unknown, sentRequestId: string): ApiError {
  const problem = isProblem(body) ? body : undefined;
  const requestId = problem?.request_id ?? response.headers.get("x-request-id") ?? sentRequestId;
  const code = problem?.code ?? `http_${response.status}`;
  const Class =
    (problem && Object.hasOwn(ERROR_CLASSES, problem.code) ? ERROR_CLASSES[problem.code] : undefined) ??
    classByStatus(response.status);
  const what =
    problem?.detail ??
    problem?.title ??
    (typeof body === "string" && body !== "" ? body.slice(0, 200) : response.statusText);
  const message = `${response.status} ${code}: ${what} (request ${requestId})`;
  return new Class(message, {
    status: response.status,
    code,
    requestId,
    headers: response.headers,
    ...(problem && { problem }),
  });
}
