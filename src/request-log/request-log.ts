/**
 * The request log's entries: what one Public API request was, how it was answered and for whom,
 * with the personal data in its body masked (maskBody). Written off the request path by
 * request-log.writer.ts; read by providers (their own, one mode) and administrators.
 */
import ipaddr from "ipaddr.js";
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
  /** Masked (maskBody) before it is stored; null for a body that was not JSON or a read. */
  readonly requestBody: unknown;
}

/** A stored entry: its random entry id orders the log after created_at (and names it in page tokens). */
export interface StoredRequestLogEntry extends RequestLogEntry {
  readonly entryId: string;
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

/** Personal fields by name, compared case-insensitively and without `_` (`Email`, `phoneNumber`). */
const PERSONAL: Readonly<Record<string, (v: unknown) => unknown>> = {
  firstname: maskName,
  lastname: maskName,
  name: maskName,
  fullname: maskName,
  email: maskEmail,
  phonenumber: maskPhone,
  phone: maskPhone,
  ipaddress: maskAddress,
};

/** How deep a body is kept; anything deeper is replaced whole (nothing personal can hide there). */
const MAX_DEPTH = 8;

/**
 * The mask of a key (PERSONAL), remembered: bodies repeat the same few keys, so each is folded
 * (lower case, no `_` or `-`) once rather than in every body. Bounded, since keys are the
 * caller's: only keys of up to 64 characters are remembered, and past 1,000 of them the memory
 * starts again (at most about 64,000 characters held, whatever bodies arrive).
 */
const masks = new Map<string, ((v: unknown) => unknown) | null>();
const REMEMBERED_KEY_LENGTH = 64;
function maskOf(key: string): ((v: unknown) => unknown) | null {
  let mask = key.length <= REMEMBERED_KEY_LENGTH ? masks.get(key) : undefined;
  if (mask === undefined) {
    const folded = key.toLowerCase().replaceAll("_", "").replaceAll("-", "");
    // Own keys only: `constructor` is not a mask (Object's own would keep what it holds unmasked).
    mask = Object.hasOwn(PERSONAL, folded) ? (PERSONAL[folded] as (v: unknown) => unknown) : null;
    if (key.length <= REMEMBERED_KEY_LENGTH) {
      if (masks.size >= 1000) masks.clear();
      masks.set(key, mask);
    }
  }
  return mask;
}

function maskValue(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== "object") return v;
  if (depth >= MAX_DEPTH) return MASKED;
  if (Array.isArray(v)) return v.map((item) => maskValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const item = o[k];
    const mask = maskOf(k);
    const masked = mask ? mask(item) : maskValue(item, depth + 1);
    // A key `__proto__` is defined, not assigned (which would set the prototype), so it stays a key.
    if (k === "__proto__")
      Object.defineProperty(out, k, { value: masked, enumerable: true, writable: true, configurable: true });
    else out[k] = masked;
  }
  return out;
}

/**
 * The body as received with its personal data masked, wherever it sits (top level, nested, in
 * arrays, whatever the case of the key): first and last name to their first letter, email to its
 * first character and domain, phone to its last four digits, an IP address (`consent.ip_address`)
 * to its /24 (IPv4) or /48 (IPv6). A personal field sent as something other than text is replaced
 * whole. Everything else is kept as sent, eight levels deep. Never mutates `body`.
 */
export function maskBody(body: unknown): unknown {
  if (body === undefined) return null;
  return maskValue(body, 0);
}

/** The sub-source a create request named, for the stats rollup ('' for none or a malformed one). */
export function subIdOf(body: unknown): string {
  if (body === null || typeof body !== "object") return "";
  const v = (body as { sub_id?: unknown }).sub_id;
  // The form the lead service accepts (lead.validation.ts); anything else counts as none.
  return typeof v === "string" && SUB_ID.test(v) ? v : "";
}
