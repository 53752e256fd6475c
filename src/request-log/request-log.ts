/**
 * The request log's entries: what one Public API request was, how it was answered and for whom,
 * with its body kept as request-log.mask.ts allows. Written off the request path by
 * request-log.writer.ts; read by providers (their own, one mode) and administrators.
 */
import type { FieldViolation } from "../errors.ts";
import { SUB_ID } from "../leads/lead.validation.ts";

export const OUTCOMES = ["accepted", "rejected", "rate_limited", "failed"] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const PROTOCOLS = ["rest", "grpc", "grpc-web", "connect"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** The operations that create a lead: their entries feed the stats' submitted and rejected counts. */
export const CREATE_OPERATIONS: ReadonlySet<string> = new Set([
  "POST /api/v1/public/leads/",
  "leadprovider.v1.PublicLeadService/CreateLead",
]);

export interface RequestLogEntry {
  readonly requestId: string;
  readonly createdAt: Date;
  /** Null for a request refused before a key named a provider (401): administrators only. */
  readonly providerId: number | null;
  readonly livemode: boolean | null;
  readonly operation: string;
  readonly protocol: string;
  readonly status: number;
  readonly rpcCode: string | null;
  readonly outcome: Outcome;
  readonly code: string | null;
  readonly detail: string | null;
  readonly errors: readonly FieldViolation[];
  readonly externalId: string | null;
  readonly leadId: number | null;
  readonly durationMs: number;
  readonly clientIp: string | null;
  readonly keyHint: string | null;
  readonly userAgent: string | null;
  /**
   * The body as received (parsed JSON, or the RPC message's JSON form); null for a read or a body
   * that was not JSON. The writer keeps it as request-log.mask.ts allows, and only for a provider.
   */
  readonly requestBody: unknown;
  /** The body's size as received (Content-Length), when known. */
  readonly requestBodyBytes: number | null;
  /**
   * The gate verified the key and admitted the request (request-log.listing.ts): false for a
   * request refused before or by the gate, and for one whose key was identified afterwards.
   */
  readonly gated: boolean;
}

/** A stored entry: its random entry id orders the log after created_at (and names it in page tokens). */
export interface StoredRequestLogEntry extends Omit<RequestLogEntry, "gated"> {
  readonly entryId: string;
  /** The body was cut to the kept size (request-log.mask.ts). */
  readonly requestBodyTruncated: boolean;
  /** A SHA-256 of the body when it was not kept (no provider). */
  readonly requestBodySha256: string | null;
}

/** Whether an operation only reads: a REST GET or HEAD, an RPC Get, List or Watch method. */
export function isRead(operation: string): boolean {
  return /^(GET|HEAD) /.test(operation) || /\/(Get|List|Watch)[A-Z][A-Za-z]*$/.test(operation);
}

/** The outcome of an answer: its status, and for a 429 whether the rate limit refused it. */
export function outcomeOf(status: number, code: string | null): Outcome {
  if (status < 400) return "accepted";
  if (status >= 500) return "failed";
  if (status === 429 && code === "rate_limited") return "rate_limited";
  return "rejected";
}

/** The sub-source a create request named, for the stats rollup ('' for none or a malformed one). */
export function subIdOf(body: unknown): string {
  if (body === null || typeof body !== "object") return "";
  const v = (body as { sub_id?: unknown }).sub_id;
  // The form the lead service accepts (lead.validation.ts); anything else counts as none.
  return typeof v === "string" && SUB_ID.test(v) ? v : "";
}
