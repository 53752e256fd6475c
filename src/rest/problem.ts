/**
 * The REST edge's error table and RFC 9457 problem+json rendering: every REST error answer is
 * built here, from a DomainError (status, title and headers by kind) or from what Express and
 * the OpenAPI validator throw before a handler runs.
 */
import type { ErrorRequestHandler, Request, Response } from "express";
import { HTTP } from "../edge/http-status.ts";
import { PROBLEM_CONTENT_TYPE, problemJson } from "../edge/problem-json.ts";
import { rateLimitHeaders } from "../edge/rate-limit-headers.ts";
import { noteOf } from "../edge/request-note.ts";
import { asDomainError, DomainError, describeViolations, type FieldViolation } from "../errors.ts";
import { errorForLog, type Logger } from "../logger.ts";

/** The challenge sent with every 401, for API keys and JWTs alike. */
const BEARER_CHALLENGE = 'Bearer realm="lead-provider-api", error="invalid_token"';

export interface Problem {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly errors?: readonly FieldViolation[];
  readonly extra?: Readonly<Record<string, unknown>>;
  readonly headers?: Readonly<Record<string, string>>;
}

export function sendProblem(req: Request, res: Response, p: Problem): void {
  for (const [k, v] of Object.entries(p.headers ?? {})) res.setHeader(k, v);
  const note = noteOf(req);
  if (note) {
    note.problem = { status: p.status, code: p.code, detail: p.detail, errors: p.errors };
    const existing = p.extra?.existing_lead as { id?: number } | undefined;
    if (existing?.id !== undefined) note.leadId = existing.id;
  }
  const requestId = res.getHeader("X-Request-Id");
  res
    .status(p.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(
      problemJson({
        ...p,
        instance: req.originalUrl.split("?")[0],
        requestId: typeof requestId === "string" ? requestId : undefined,
      }),
    );
}

/**
 * Members a feature adds to the problem+json body of its own errors (the leads feature: the
 * `duplicate` of a duplicate_lead refusal); registered through its RestFeature.
 */
export type ProblemExtension = (err: DomainError) => Readonly<Record<string, unknown>> | undefined;

/** A DomainError as the REST edge answers it. */
export function problemOf(err: DomainError, extensions: readonly ProblemExtension[] = []): Problem {
  const { status, title } = HTTP[err.kind];
  const headers: Record<string, string> = err.quota ? rateLimitHeaders(err.quota) : {};
  if (err.kind === "unauthenticated") headers["WWW-Authenticate"] = BEARER_CHALLENGE;
  if (err.retryAfterSeconds !== undefined) headers["Retry-After"] = String(err.retryAfterSeconds);
  const extra: Record<string, unknown> = {
    ...(err.existingLead && { existing_lead: { id: err.existingLead.id, order_number: err.existingLead.orderNumber } }),
    ...(err.kind === "rate_limited" && { window: err.window, retry_after: err.retryAfterSeconds }),
    ...(err.currentState !== undefined && { current_state: err.currentState }),
    ...(err.resetsAt !== undefined && { resets_at: err.resetsAt.toISOString() }),
    ...(err.opensAt !== undefined && { opens_at: err.opensAt?.toISOString() ?? null }),
    ...(err.pausedReason !== undefined && { paused_reason: err.pausedReason }),
  };
  for (const extend of extensions) Object.assign(extra, extend(err));
  return { status, title, code: err.code, detail: err.message, errors: err.violations, extra, headers };
}

const UNSUPPORTED = "Unsupported media type";
const UTF8_JSON = {
  status: 415,
  code: "unsupported_media_type",
  title: UNSUPPORTED,
  detail: "send the body as UTF-8 JSON",
};

/** What Express and body-parser throw before any handler runs, by their `type`. */
const BODY_ERRORS: Readonly<Record<string, Omit<Problem, "errors">>> = {
  "entity.too.large": {
    status: 413,
    code: "payload_too_large",
    title: "Payload too large",
    detail: "the request body must be at most 64 KiB",
  },
  "entity.parse.failed": {
    status: 400,
    code: "malformed_json",
    title: "Malformed JSON",
    detail: "the request body is not valid JSON",
  },
  "encoding.unsupported": UTF8_JSON,
  "charset.unsupported": UTF8_JSON,
};

const INVALID_CONTENT_ENCODING: Problem = {
  status: 400,
  code: "invalid_content_encoding",
  title: "Invalid content encoding",
  detail: "the request body could not be decoded as its Content-Encoding says",
};

/**
 * body-parser inflates gzip, deflate, br and zstd bodies; a body that is not what its
 * Content-Encoding says fails in zlib with a 400 that carries no `type` of its own.
 */
function isDecompressionError(err: unknown, req: Request): boolean {
  const e = err as { status?: unknown; type?: unknown; errors?: unknown } | null;
  const encoding = req.headers["content-encoding"];
  return (
    e !== null &&
    typeof e === "object" &&
    e.status === 400 &&
    e.type === undefined &&
    e.errors === undefined &&
    typeof encoding === "string" &&
    encoding.toLowerCase() !== "identity"
  );
}

interface ValidatorError {
  status?: number;
  errors?: Array<{ path?: string; message?: string; errorCode?: string }>;
  type?: string;
}

const SCHEMA_CODES: Record<string, string> = {
  required: "required",
  type: "invalid_type",
  enum: "invalid_enum",
  const: "invalid_enum",
  format: "invalid_format",
  pattern: "invalid_format",
  maxLength: "too_long",
  minLength: "too_short",
  minimum: "out_of_range",
  maximum: "out_of_range",
  minItems: "too_few_items",
  maxItems: "too_many_items",
  additionalProperties: "unknown_field",
  minProperties: "required",
};

/** `/body/vehicles/0/year` → `vehicles[0].year`; `/query/page` → `page`. */
export function fieldPath(path: string): string {
  const parts = path
    .replace(/^\.?\/?(body|query|params|path|headers)\/?/, "")
    .split(/[/.]/)
    .filter(Boolean);
  return parts.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), "") || "body";
}

/** The validator's query-parameter errors carry no schema keyword; word them like the others. */
const QUERY_PARAMETER_ERRORS = [
  { pattern: /^Unknown query parameter/, kind: "additionalProperties", says: "is not a known query parameter" },
  { pattern: /^Empty value found for query parameter/, kind: "minLength", says: "must not be empty" },
];

function schemaViolations(err: ValidatorError): FieldViolation[] {
  const seen = new Set<string>();
  const out: FieldViolation[] = [];
  for (const e of err.errors ?? []) {
    const field = fieldPath(e.path ?? "");
    const special = QUERY_PARAMETER_ERRORS.find((q) => q.pattern.test(e.message ?? ""));
    const kind = special?.kind ?? (e.errorCode ?? "").split(".")[0] ?? "";
    const key = `${field}:${kind}`;
    if (seen.has(key) || kind === "oneOf" || kind === "anyOf") continue;
    seen.add(key);
    const message = `${field} ${special?.says ?? e.message ?? "is invalid"}`;
    out.push({ field, code: SCHEMA_CODES[kind] ?? "invalid", message });
  }
  return out;
}

/**
 * Turns a rejected request body into the service layer's own violations, so REST and gRPC word
 * a rejection the same way; [] when the service has nothing to say about this operation.
 */
export type Explainer = (req: Request) => readonly FieldViolation[];

/** The validator's non-400 refusals, by status. */
function validatorRefusal(req: Request, status: number): Problem | undefined {
  switch (status) {
    case 404:
      return {
        status,
        code: "not_found",
        title: HTTP.not_found.title,
        detail: `no route for ${req.method} ${req.path}`,
      };
    case 405:
      return {
        status,
        code: "method_not_allowed",
        title: "Method not allowed",
        detail: `${req.method} is not allowed on ${req.path}`,
      };
    case 415:
      return {
        status,
        code: "unsupported_media_type",
        title: UNSUPPORTED,
        detail: "send the body as application/json",
      };
    default:
      if (status < 500) return undefined;
      return {
        status: 500,
        code: "internal_error",
        title: HTTP.internal.title,
        detail: "the response did not match the API contract",
      };
  }
}

export function createErrorHandler(
  logger: Logger,
  explain: Explainer,
  extensions: readonly ProblemExtension[] = [],
): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const e = err as ValidatorError;
    const bodyError = typeof e.type === "string" ? BODY_ERRORS[e.type] : undefined;
    if (!(err instanceof DomainError) && bodyError) return sendProblem(req, res, bodyError);
    if (isDecompressionError(err, req)) return sendProblem(req, res, INVALID_CONTENT_ENCODING);
    if (!(err instanceof DomainError) && typeof e.status === "number" && Array.isArray(e.errors)) {
      const refusal = validatorRefusal(req, e.status);
      if (refusal) return sendProblem(req, res, refusal);
      const isBody = e.errors.some((x) => (x.path ?? "").startsWith("/body"));
      const own = isBody ? explain(req) : [];
      const errors = own.length > 0 ? own : schemaViolations(e);
      return sendProblem(req, res, {
        status: 400,
        title: HTTP.invalid_argument.title,
        ...describeViolations(errors),
        errors,
      });
    }
    const domain = asDomainError(err);
    if (domain.kind === "internal") {
      logger.error({ err: errorForLog(err), request_id: res.getHeader("X-Request-Id") }, "request failed");
    }
    sendProblem(req, res, problemOf(domain, extensions));
  };
}
