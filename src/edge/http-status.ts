/**
 * The HTTP status and problem title of each error kind: the REST edge answers with them, and the
 * request log records the same status for an RPC call refused for the same reason.
 */
import { asDomainError, type DomainError, type ErrorKind } from "../errors.ts";
import type { NotedProblem } from "./request-note.ts";

export const HTTP: Readonly<Record<ErrorKind, { readonly status: number; readonly title: string }>> = {
  invalid_argument: { status: 400, title: "Invalid request" },
  duplicate: { status: 400, title: "Duplicate" }, // the spec maps a duplicate external_id to 400, not 409
  unauthenticated: { status: 401, title: "Unauthenticated" },
  permission_denied: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not found" },
  failed_precondition: { status: 409, title: "Conflict with current state" },
  rate_limited: { status: 429, title: "Too many requests" },
  unavailable: { status: 503, title: "Service unavailable" },
  internal: { status: 500, title: "Internal server error" },
};

/** A failure as the request log records it: the REST status, code, detail and field errors. */
export function notedProblem(thrown: unknown): NotedProblem {
  const err: DomainError = asDomainError(thrown);
  return { status: HTTP[err.kind].status, code: err.code, detail: err.message, errors: err.violations };
}

/** gRPC status codes by number: their names (as Connect spells them, snake_case) and the HTTP status Connect gives them. */
export const RPC_CODES: readonly (readonly [string, number])[] = [
  ["ok", 200],
  ["canceled", 499],
  ["unknown", 500],
  ["invalid_argument", 400],
  ["deadline_exceeded", 504],
  ["not_found", 404],
  ["already_exists", 409],
  ["permission_denied", 403],
  ["resource_exhausted", 429],
  ["failed_precondition", 400],
  ["aborted", 409],
  ["out_of_range", 400],
  ["unimplemented", 501],
  ["internal", 500],
  ["unavailable", 503],
  ["data_loss", 500],
  ["unauthenticated", 401],
];
