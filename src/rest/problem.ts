/** RFC 9457 problem+json rendering: the one place a REST error body is built. */
import type { ErrorRequestHandler, Request, Response } from "express";
import {
  DomainError,
  describeViolations,
  type FieldViolation,
  HTTP_STATUS,
  isDatabaseUnavailable,
  TITLES,
} from "../errors.ts";
import { errorForLog, type Logger } from "../logger.ts";

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
  res
    .status(p.status)
    .type("application/problem+json")
    .send(
      JSON.stringify({
        type: `urn:lead-provider:problem:${p.code}`,
        title: p.title,
        status: p.status,
        detail: p.detail,
        code: p.code,
        instance: req.originalUrl.split("?")[0],
        request_id: res.getHeader("X-Request-Id"),
        ...(p.errors && p.errors.length > 0 && { errors: p.errors }),
        ...p.extra,
      }),
    );
}

export function problemOf(err: DomainError): Problem {
  return {
    status: HTTP_STATUS[err.kind],
    code: err.code,
    title: TITLES[err.kind],
    detail: err.message,
    errors: err.violations,
    extra: err.extra,
    headers: err.headers,
  };
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
 * Turns a request body into the service layer's own violations, so REST and gRPC word a
 * rejection the same way. Returns [] when the service has nothing to say.
 */
export type Explainer = (req: Request) => readonly FieldViolation[];

export function createErrorHandler(logger: Logger, explain: Explainer): ErrorRequestHandler {
  return (err, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof DomainError) return sendProblem(req, res, problemOf(err));
    if (isDatabaseUnavailable(err)) {
      return sendProblem(req, res, {
        status: 503,
        code: "service_unavailable",
        title: TITLES.unavailable,
        detail: "the database is unavailable; retry later",
        headers: { "Retry-After": "5" },
      });
    }
    const e = err as ValidatorError & { type?: string; status?: number; expose?: boolean };
    if (e.type === "entity.too.large") {
      return sendProblem(req, res, {
        status: 413,
        code: "payload_too_large",
        title: "Payload too large",
        detail: "the request body must be at most 64 KiB",
      });
    }
    if (e.type === "entity.parse.failed") {
      return sendProblem(req, res, {
        status: 400,
        code: "malformed_json",
        title: "Malformed JSON",
        detail: "the request body is not valid JSON",
      });
    }
    if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
      return sendProblem(req, res, {
        status: 415,
        code: "unsupported_media_type",
        title: "Unsupported media type",
        detail: "send the body as UTF-8 JSON",
      });
    }
    if (typeof e.status === "number" && Array.isArray(e.errors)) return validatorProblem(req, res, e, explain);
    logger.error({ err: errorForLog(err), request_id: res.getHeader("X-Request-Id") }, "request failed");
    sendProblem(req, res, {
      status: 500,
      code: "internal_error",
      title: TITLES.internal,
      detail: "an unexpected error occurred; it has been logged",
    });
  };
}

function validatorProblem(req: Request, res: Response, e: ValidatorError & { status?: number }, explain: Explainer) {
  const status = e.status ?? 400;
  if (status === 404)
    return sendProblem(req, res, {
      status,
      code: "not_found",
      title: TITLES.not_found,
      detail: `no route for ${req.method} ${req.path}`,
    });
  if (status === 405)
    return sendProblem(req, res, {
      status,
      code: "method_not_allowed",
      title: "Method not allowed",
      detail: `${req.method} is not allowed on ${req.path}`,
    });
  if (status === 415)
    return sendProblem(req, res, {
      status,
      code: "unsupported_media_type",
      title: "Unsupported media type",
      detail: "send the body as application/json",
    });
  if (status >= 500) {
    return sendProblem(req, res, {
      status: 500,
      code: "internal_error",
      title: TITLES.internal,
      detail: "the response did not match the API contract",
    });
  }
  const bodyError = (e.errors ?? []).some((x) => (x.path ?? "").startsWith("/body"));
  const own = bodyError ? explain(req) : [];
  const errors = own.length > 0 ? own : schemaViolations(e);
  sendProblem(req, res, { status: 400, title: TITLES.invalid_argument, ...describeViolations(errors), errors });
}
