/**
 * The drop-in quote form's rules (docs/forms.md, docs/decisions/0035-drop-in-form.md): publishable
 * keys, allowed origins, the consent text and its hash. Pure: no database, no clock.
 */
import { createHash, randomBytes } from "node:crypto";
import { DomainError, type FieldViolation } from "../errors.ts";

/** The form script's version: its path (/forms/v1/quote-form.js) and every consent record name it. */
export const FORM_VERSION = "v1";

/** `lp_pub_live_` / `lp_pub_test_` + 32 base62 characters: not a secret, only who and which mode. */
export const PUBLISHABLE_PREFIXES = { live: "lp_pub_live_", test: "lp_pub_test_" } as const;
const PUBLISHABLE_KEY = /^lp_pub_(live|test)_[0-9A-Za-z]{32}$/;

export type FormMode = keyof typeof PUBLISHABLE_PREFIXES;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `n` random base62 characters (rejection sampling: every character equally likely). */
export function randomBase62(n: number): string {
  let out = "";
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += BASE62[b % 62];
    }
  }
  return out;
}

export function newPublishableKey(mode: FormMode): string {
  return `${PUBLISHABLE_PREFIXES[mode]}${randomBase62(32)}`;
}

/** Whether the text has the shape of a publishable key (looked up only then). */
export function isPublishableKeyShape(key: string): boolean {
  return PUBLISHABLE_KEY.test(key);
}

/** A form lead's external_id and its consent record's id share one random part. */
export function newFormIds(): { externalId: string; consentId: string } {
  const part = randomBase62(22);
  return { externalId: `form_${part}`, consentId: `cns_${part}` };
}

export const CONSENT_ID = /^cns_[0-9A-Za-z]{22}$/;

export const MAX_ALLOWED_ORIGINS = 20;
export const MAX_CONSENT_TEXT = 2000;

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** Whether an origin may carry a test key only: plain http on localhost or a loopback address. */
export function isLocalOrigin(origin: string): boolean {
  const url = new URL(origin);
  return url.protocol === "http:" && LOOPBACK_HOST.test(url.hostname);
}

/**
 * An allowed origin as it is stored (`https://host[:port]`, lower case, no default port), or the
 * violation that names what is wrong with it. `http://` only for localhost and loopback
 * addresses, which only test keys may use.
 */
export function normalizeOrigin(raw: string, field: string): string | FieldViolation {
  const bad = (message: string): FieldViolation => ({ field, code: "invalid_origin", message });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad(`${raw} is not an origin: write it as https://host or https://host:port`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return bad(`${raw} must start with https://`);
  if (url.protocol === "http:" && !LOOPBACK_HOST.test(url.hostname)) {
    return bad(`${raw} must use https:// (http:// only for localhost, with a test key)`);
  }
  if (url.username || url.password) return bad(`${raw} must not carry a user name or password`);
  const rest = raw.replace(/^[a-z]+:\/\/[^/?#]*/i, "");
  if (rest !== "" && rest !== "/") return bad(`${raw} is an origin only: no path, query or fragment`);
  if (url.hostname.includes("*")) return bad(`${raw}: wildcards are not allowed; list each origin`);
  return url.origin;
}

/** The allowed origins as submitted: checked, normalised, without repeats; or a validation error. */
export function readAllowedOrigins(value: unknown): string[] {
  const violations: FieldViolation[] = [];
  if (!Array.isArray(value)) {
    throw validation([{ field: "allowed_origins", code: "invalid_type", message: "allowed_origins must be a list" }]);
  }
  if (value.length > MAX_ALLOWED_ORIGINS) {
    violations.push({
      field: "allowed_origins",
      code: "too_many",
      message: `allowed_origins may list at most ${MAX_ALLOWED_ORIGINS} origins`,
    });
  }
  const out: string[] = [];
  value.forEach((raw, i) => {
    const field = `allowed_origins[${i}]`;
    if (typeof raw !== "string") {
      violations.push({ field, code: "invalid_type", message: `${field} must be text` });
      return;
    }
    const origin = normalizeOrigin(raw.trim(), field);
    if (typeof origin !== "string") violations.push(origin);
    else if (!out.includes(origin)) out.push(origin);
  });
  if (violations.length > 0) throw validation(violations);
  return out;
}

export function validation(violations: readonly FieldViolation[]): DomainError {
  const detail =
    violations.length === 1
      ? (violations[0]?.message ?? "invalid request")
      : `${violations.length} fields are invalid: ${violations.map((v) => v.field).join(", ")}`;
  return new DomainError("invalid_argument", detail, { code: "validation_error", violations });
}

/** The consent text a provider has not written its own of, naming the broker. */
export function defaultConsentText(brokerName: string): string {
  return (
    `By checking this box, I agree that ${brokerName} and its carrier partners may contact me about shipping ` +
    "my vehicle at the phone number and email address I entered, including by calls and text messages sent " +
    "with an automatic telephone dialing system or prerecorded voice. My consent is not a condition of any " +
    "purchase. Message and data rates may apply; reply STOP to opt out."
  );
}

/** SHA-256 of the text in UTF-8, lower-case hex: what a form sends to say which text it showed. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Whether `origin` may use a key of this mode, given the provider's allowed origins. */
export function originAllowed(origin: string, livemode: boolean, allowed: readonly string[]): boolean {
  if (!allowed.includes(origin)) return false;
  return !livemode || !isLocalOrigin(origin);
}
