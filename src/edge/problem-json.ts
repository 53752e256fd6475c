/**
 * The RFC 9457 problem+json body, built in one place for every HTTP answer that is not a
 * Connect/gRPC reply: REST errors, the raw HTTP parser's refusals and /metrics.
 */
import type { FieldViolation } from "../errors.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json";

export interface ProblemFields {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly instance?: string | undefined;
  readonly requestId?: string | undefined;
  readonly errors?: readonly FieldViolation[] | undefined;
  /** Further members of the body (e.g. `existing_lead`, `retry_after`). */
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

export function problemJson(p: ProblemFields): string {
  return JSON.stringify({
    type: `urn:lead-provider:problem:${p.code}`,
    title: p.title,
    status: p.status,
    detail: p.detail,
    code: p.code,
    ...(p.instance !== undefined && { instance: p.instance }),
    ...(p.requestId !== undefined && { request_id: p.requestId }),
    ...(p.errors && p.errors.length > 0 && { errors: p.errors }),
    ...p.extra,
  });
}
