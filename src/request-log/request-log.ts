/**
 * The request log's entries: what one Public API request was, how it was answered and for whom,
 * with the personal data in its body masked (maskBody). Written off the request path by
 * request-log.writer.ts; read by providers (their own, one mode) and administrators.
 */
import ipaddr from "ipaddr.js";
import type { FieldViolation } from "../errors.ts";

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
  /** Masked (maskBody) before it is stored; null for a body that was not JSON or a read. */
  readonly requestBody: unknown;
}

/** A stored entry: its row id orders the log (with created_at). */
export interface StoredRequestLogEntry extends RequestLogEntry {
  readonly id: number;
}

/** The outcome of an answer: its status, and for a 429 whether the rate limit refused it. */
export function outcomeOf(status: number, code: string | null): Outcome {
  if (status < 400) return "accepted";
  if (status >= 500) return "failed";
  if (status === 429 && code === "rate_limited") return "rate_limited";
  return "rejected";
}

const MASKED = "…";

/** `Maria` → `M…`. */
function maskName(v: unknown): unknown {
  return typeof v === "string" && v.length > 0 ? `${[...v][0]}${MASKED}` : maskOther(v);
}

/** `maria@example.com` → `m***@example.com`. */
function maskEmail(v: unknown): unknown {
  if (typeof v !== "string") return maskOther(v);
  const at = v.lastIndexOf("@");
  if (at < 1) return v.length > 0 ? `${[...v][0]}***` : v;
  return `${[...v][0]}***@${v.slice(at + 1)}`;
}

/** `+1 (310) 555-0142` → `…0142`: the last four digits. */
function maskPhone(v: unknown): unknown {
  if (typeof v !== "string") return maskOther(v);
  const digits = v.replace(/\D/g, "");
  return `${MASKED}${digits.slice(-4)}`;
}

/** `203.0.113.7` → `203.0.113.0/24`; IPv6 to its /48. Anything that is not an address is masked whole. */
function maskAddress(v: unknown): unknown {
  if (typeof v !== "string" || !ipaddr.isValid(v)) return maskOther(v);
  const address = ipaddr.parse(v);
  if (address.kind() === "ipv4") {
    const [a, b, c] = (address as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.0/24`;
  }
  const parts = (address as ipaddr.IPv6).parts;
  const prefix = new ipaddr.IPv6([parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, 0, 0, 0, 0, 0]);
  return `${prefix.toString()}/48`;
}

/** A personal field sent as something other than text (a number, an object): nothing of it is kept. */
function maskOther(v: unknown): unknown {
  return v === null || v === undefined ? v : MASKED;
}

const PERSONAL: Readonly<Record<string, (v: unknown) => unknown>> = {
  first_name: maskName,
  last_name: maskName,
  email: maskEmail,
  phone_number: maskPhone,
};

/**
 * The body as received with its personal data masked: first and last name to their first letter,
 * email to its first character and domain, phone to its last four digits, `consent.ip_address` to
 * its /24 (IPv4) or /48 (IPv6). Everything else is kept as sent. Never mutates `body`.
 */
export function maskBody(body: unknown): unknown {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return body ?? null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const mask = PERSONAL[k];
    if (mask) out[k] = mask(v);
    else if (k === "consent" && v !== null && typeof v === "object" && !Array.isArray(v)) {
      const consent: Record<string, unknown> = { ...v };
      if ("ip_address" in consent) consent.ip_address = maskAddress(consent.ip_address);
      out[k] = consent;
    } else out[k] = v;
  }
  return out;
}

/** The sub-source a create request named, for the stats rollup ('' for none or a malformed one). */
export function subIdOf(body: unknown): string {
  if (body === null || typeof body !== "object") return "";
  const v = (body as { sub_id?: unknown }).sub_id;
  return typeof v === "string" && v.length <= 100 ? v : "";
}
