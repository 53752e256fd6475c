/**
 * Collects field violations while reading a plain JSON-like object. `null` counts as "not
 * sent" for every field. Lengths count Unicode code points, as JSON Schema does.
 */
import type { FieldViolation } from "./errors.ts";

/** The same email shape as JSON Schema's `format: email` (ajv-formats' full-mode pattern). */
const EMAIL =
  /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;
const PHONE_CHARS = /^[0-9+().\- ]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * `.` and `..` are refused as external_ids: as a path segment (`Location: /api/v1/public/leads/../`)
 * a client would resolve them to another path.
 */
export const DOT_SEGMENTS: ReadonlySet<string> = new Set([".", ".."]);

/** True for text that may name a stored external_id (1–128 characters, no control characters, no dot segment). */
export function isPossibleExternalId(s: string): boolean {
  return s.length > 0 && [...s].length <= 128 && !CONTROL.test(s) && !DOT_SEGMENTS.has(s);
}

/**
 * The largest id the API accepts: 2^53 − 1, the largest integer a JSON number carries exactly
 * (the columns are bigint; ids are handed out from 1 and never come near it).
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** An id as a caller may send it: path or query text, a JSON number, or a protobuf int64. */
export type RawId = string | number | bigint;

export interface TextRule {
  readonly max: number;
  readonly required?: boolean;
  /** Accept "" (otherwise an optional field sent empty is an error). */
  readonly allowEmpty?: boolean;
  readonly noControl?: boolean;
}

export class Fields {
  readonly violations: FieldViolation[] = [];

  add(field: string, code: string, message: string): void {
    this.violations.push({ field, code, message });
  }

  #value(obj: Record<string, unknown>, key: string, required: boolean, path: string): unknown {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (required) this.add(path, "required", `${path} is required`);
      return undefined;
    }
    return v;
  }

  text(obj: Record<string, unknown>, key: string, rule: TextRule, prefix = ""): string | undefined {
    const path = join(prefix, key);
    const v = this.#value(obj, key, rule.required ?? false, path);
    if (v === undefined) return undefined;
    if (typeof v !== "string") return this.#bad(path, "invalid_type", `${path} must be a string`);
    const length = [...v].length;
    if (length === 0 && !rule.allowEmpty) {
      return this.#bad(path, rule.required ? "required" : "too_short", `${path} must not be empty`);
    }
    if (length > rule.max) return this.#bad(path, "too_long", `${path} must be at most ${rule.max} characters`);
    if (rule.noControl && CONTROL.test(v)) {
      return this.#bad(path, "invalid_characters", `${path} must not contain control characters`);
    }
    // Postgres text cannot hold NUL; refuse it here rather than fail at the database.
    if (v.includes("\u0000")) return this.#bad(path, "invalid_characters", `${path} must not contain NUL characters`);
    // Nor a lone UTF-16 surrogate (JSON's "\ud800" escape): it is no character in any encoding.
    if (!v.isWellFormed()) {
      return this.#bad(path, "invalid_characters", `${path} must be valid Unicode text (it holds a lone surrogate)`);
    }
    return v;
  }

  email(obj: Record<string, unknown>, key: string): string | undefined {
    const v = this.text(obj, key, { max: 254, required: true });
    if (v === undefined) return undefined;
    return EMAIL.test(v) ? v : this.#bad(key, "invalid_email", `${key} must be a valid email address`);
  }

  phone(obj: Record<string, unknown>, key: string): string | undefined {
    const v = this.text(obj, key, { max: 32, required: true });
    if (v === undefined) return undefined;
    const digits = v.replace(/[+().\- ]/g, "");
    if (!PHONE_CHARS.test(v) || digits.length < 7 || digits.length > 15) {
      return this.#bad(
        key,
        "invalid_phone",
        `${key} must have 7 to 15 digits; only digits, spaces and + ( ) - . are allowed`,
      );
    }
    return v;
  }

  date(obj: Record<string, unknown>, key: string): string | undefined {
    const v = this.text(obj, key, { max: 10, required: true });
    if (v === undefined) return undefined;
    return isCalendarDate(v) ? v : this.#bad(key, "invalid_date", `${key} must be a real date in YYYY-MM-DD form`);
  }

  oneOf<T extends string>(
    obj: Record<string, unknown>,
    key: string,
    values: readonly T[],
    required: boolean,
    prefix = "",
  ): T | undefined {
    const path = join(prefix, key);
    const v = this.#value(obj, key, required, path);
    if (v === undefined) return undefined;
    if (typeof v === "string" && (values as readonly string[]).includes(v)) return v as T;
    return this.#bad(path, "invalid_enum", `${path} must be one of: ${values.join(", ")}`);
  }

  integer(obj: Record<string, unknown>, key: string, min: number, max: number, prefix = ""): number | undefined {
    const path = join(prefix, key);
    const v = this.#value(obj, key, true, path);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v)) {
      return this.#bad(path, "invalid_type", `${path} must be an integer`);
    }
    if (v < min || v > max) return this.#bad(path, "out_of_range", `${path} must be from ${min} to ${max}`);
    return v;
  }

  /**
   * An id: text of digits only (no sign, space, decimal point, exponent or hex), or an integer,
   * from 1 to MAX_ID. Anything else is `invalid_id`, named by `key`.
   */
  id(obj: Record<string, unknown>, key: string): number | undefined {
    const v = this.#value(obj, key, true, key);
    if (v === undefined) return undefined;
    const bad = () => this.#bad(key, "invalid_id", `${key} must be a whole number from 1 to ${MAX_ID}`);
    if (typeof v === "string") {
      if (!/^[0-9]{1,20}$/.test(v)) return bad();
      const n = BigInt(v);
      return n >= 1n && n <= BigInt(MAX_ID) ? Number(n) : bad();
    }
    if (typeof v === "bigint") return v >= 1n && v <= BigInt(MAX_ID) ? Number(v) : bad();
    if (typeof v === "number" && Number.isSafeInteger(v) && v >= 1) return v;
    return bad();
  }

  /** An instant a caller filters by (already parsed from RFC 3339 at the edge); undefined when not sent. */
  instant(value: Date | undefined, key: string): Date | undefined {
    if (value === undefined || !Number.isNaN(value.getTime())) return value;
    return this.#bad(key, "invalid_format", `${key} must be an RFC 3339 date-time`);
  }

  boolean(obj: Record<string, unknown>, key: string, prefix = ""): boolean | undefined {
    const path = join(prefix, key);
    const v = this.#value(obj, key, false, path);
    if (v === undefined) return undefined;
    return typeof v === "boolean" ? v : this.#bad(path, "invalid_type", `${path} must be true or false`);
  }

  #bad(field: string, code: string, message: string): undefined {
    this.add(field, code, message);
    return undefined;
  }
}

function join(prefix: string, key: string): string {
  return prefix === "" ? key : `${prefix}.${key}`;
}

/** YYYY-MM-DD naming a day that exists (2026-02-30 does not). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}
