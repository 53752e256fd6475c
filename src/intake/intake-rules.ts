/**
 * A provider's intake rules: the one document administrators set (PUT replaces it whole; a member
 * left out takes its default) and providers read. Stored as sent, in the API's own snake_case
 * shape. Pure: no I/O, no clock.
 */
import type { FieldViolation } from "../errors.ts";
import { Fields } from "../fields.ts";
import {
  MAX_VEHICLES,
  OVERSEAS_TYPES,
  type OverseasType,
  SHIP_VIAS,
  type ShipVia,
  VEHICLE_TYPES,
  type VehicleType,
} from "../leads/lead.ts";
import { US_STATES } from "../states/states.ts";

export const DUPLICATE_POLICIES = ["flag", "reject"] as const;
export type DuplicatePolicy = (typeof DUPLICATE_POLICIES)[number];

export const CAP_WINDOWS = ["day", "week", "month"] as const;
export type CapWindow = (typeof CAP_WINDOWS)[number];

export const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One opening of a day, `HH:MM` to `HH:MM` (close after open; `24:00` is the day's end). */
export interface Opening {
  readonly open: string;
  readonly close: string;
}

/** Openings by weekday in BUSINESS_TIMEZONE; a day left out is closed. */
export type Schedule = Partial<Record<Weekday, readonly Opening[]>>;

export interface IntakeRules {
  readonly paused: boolean;
  readonly paused_reason: string | null;
  readonly origin_states: readonly string[] | null;
  readonly destination_states: readonly string[] | null;
  readonly overseas_types: readonly OverseasType[] | null;
  readonly ship_via: readonly ShipVia[] | null;
  readonly vehicle_types: readonly VehicleType[] | null;
  readonly max_vehicles: number;
  readonly require_destination_zip: boolean;
  readonly ship_date_min_days: number;
  readonly ship_date_max_days: number;
  readonly reject_disposable_email: boolean;
  readonly consent_required: boolean;
  readonly duplicate_policy: DuplicatePolicy;
  readonly caps: { readonly day: number | null; readonly week: number | null; readonly month: number | null };
  readonly schedule: Schedule | null;
}

/** How far ahead a ship date may ever be required to be. */
export const MAX_SHIP_DATE_DAYS = 730;
export const MAX_CAP = 10_000_000;

/** No restriction at all: what a provider has until an administrator sets its rules. */
export const DEFAULT_INTAKE_RULES: IntakeRules = Object.freeze({
  paused: false,
  paused_reason: null,
  origin_states: null,
  destination_states: null,
  overseas_types: null,
  ship_via: null,
  vehicle_types: null,
  max_vehicles: MAX_VEHICLES,
  require_destination_zip: false,
  ship_date_min_days: 0,
  ship_date_max_days: 365,
  reject_disposable_email: false,
  consent_required: false,
  duplicate_policy: "flag",
  caps: Object.freeze({ day: null, week: null, month: null }),
  schedule: null,
});

const MEMBERS = new Set(Object.keys(DEFAULT_INTAKE_RULES));
/** What a GET answers beside the rules; a PUT of that answer ignores them. */
const READ_ONLY = new Set(["version", "updated_at", "cap_usage"]);

/** The document as one canonical text (keys sorted), to tell a change from a repeat. */
export function canonicalRules(rules: IntakeRules): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
          )
        : v;
  return JSON.stringify(sort(rules));
}
export const STATE_CODES: readonly string[] = US_STATES.map((s) => s.code);
const OPEN_TIME = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
const CLOSE_TIME = /^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$/;

/** Minutes from midnight of `HH:MM`. */
export function minutesOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

/** The stored document (older rows may lack members) with every member present. */
export function withDefaults(stored: unknown): IntakeRules {
  const s = (stored !== null && typeof stored === "object" ? stored : {}) as Partial<IntakeRules>;
  return { ...DEFAULT_INTAKE_RULES, ...s, caps: { ...DEFAULT_INTAKE_RULES.caps, ...(s.caps ?? {}) } };
}

export interface ParsedRules {
  readonly rules: IntakeRules | undefined;
  readonly violations: readonly FieldViolation[];
}

/** Reads a PUT body: every bad member is named (`caps.day must be a positive integer`). */
export function parseIntakeRules(input: unknown): ParsedRules {
  const f = new Fields();
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    f.add("body", "invalid_type", "the intake rules must be a JSON object");
    return { rules: undefined, violations: f.violations };
  }
  const body = input as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!MEMBERS.has(key) && !READ_ONLY.has(key)) f.add(key, "unknown_field", `${key} is not an intake rule`);
  }
  const d = DEFAULT_INTAKE_RULES;
  const paused = f.boolean(body, "paused") ?? d.paused;
  const pausedReason = f.text(body, "paused_reason", { max: 500 }) ?? null;
  const rules: IntakeRules = {
    paused,
    paused_reason: pausedReason,
    origin_states: list(f, body, "origin_states", STATE_CODES),
    destination_states: list(f, body, "destination_states", STATE_CODES),
    overseas_types: list(f, body, "overseas_types", OVERSEAS_TYPES),
    ship_via: list(f, body, "ship_via", SHIP_VIAS),
    vehicle_types: list(f, body, "vehicle_types", VEHICLE_TYPES),
    max_vehicles: optionalInteger(f, body, "max_vehicles", 1, MAX_VEHICLES) ?? d.max_vehicles,
    require_destination_zip: f.boolean(body, "require_destination_zip") ?? d.require_destination_zip,
    ship_date_min_days: optionalInteger(f, body, "ship_date_min_days", 0, MAX_SHIP_DATE_DAYS) ?? d.ship_date_min_days,
    ship_date_max_days: optionalInteger(f, body, "ship_date_max_days", 0, MAX_SHIP_DATE_DAYS) ?? d.ship_date_max_days,
    reject_disposable_email: f.boolean(body, "reject_disposable_email") ?? d.reject_disposable_email,
    consent_required: f.boolean(body, "consent_required") ?? d.consent_required,
    duplicate_policy: (f.oneOf(body, "duplicate_policy", DUPLICATE_POLICIES, false) ??
      d.duplicate_policy) as DuplicatePolicy,
    caps: capsOf(f, body.caps),
    schedule: scheduleOf(f, body.schedule),
  };
  if (rules.ship_date_min_days > rules.ship_date_max_days) {
    f.add("ship_date_min_days", "out_of_range", "ship_date_min_days must not be above ship_date_max_days");
  }
  if (!rules.paused && rules.paused_reason !== null) {
    f.add("paused_reason", "invalid", "paused_reason is only kept while paused is true");
  }
  return { rules: f.violations.length === 0 ? rules : undefined, violations: f.violations };
}

function optionalInteger(f: Fields, body: Record<string, unknown>, key: string, min: number, max: number) {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  return f.integer(body, key, min, max);
}

/** `null` (no restriction) or a non-empty list of distinct values of `allowed`. */
function list<T extends string>(
  f: Fields,
  body: Record<string, unknown>,
  key: string,
  allowed: readonly T[],
): readonly T[] | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v)) {
    f.add(key, "invalid_type", `${key} must be null (no restriction) or a list`);
    return null;
  }
  if (v.length === 0) {
    f.add(key, "too_few_items", `${key} must list at least one value, or be null for no restriction`);
    return null;
  }
  const out: T[] = [];
  v.forEach((item: unknown, i) => {
    if (typeof item !== "string" || !(allowed as readonly string[]).includes(item)) {
      f.add(`${key}[${i}]`, "invalid_enum", `${key}[${i}] must be one of: ${allowed.join(", ")}`);
    } else if (out.includes(item as T)) {
      f.add(`${key}[${i}]`, "duplicate", `${key}[${i}] ${item} is listed twice`);
    } else out.push(item as T);
  });
  return out;
}

function capsOf(f: Fields, raw: unknown): IntakeRules["caps"] {
  if (raw === undefined || raw === null) return DEFAULT_INTAKE_RULES.caps;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    f.add("caps", "invalid_type", "caps must be an object of day, week and month");
    return DEFAULT_INTAKE_RULES.caps;
  }
  const caps = raw as Record<string, unknown>;
  for (const key of Object.keys(caps)) {
    if (!(CAP_WINDOWS as readonly string[]).includes(key)) {
      f.add(`caps.${key}`, "unknown_field", `caps.${key} is not a cap window (day, week, month)`);
    }
  }
  const one = (w: CapWindow): number | null => {
    const v = caps[w];
    if (v === undefined || v === null) return null;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_CAP) {
      f.add(`caps.${w}`, "invalid", `caps.${w} must be a positive integer (at most ${MAX_CAP}), or null for no cap`);
      return null;
    }
    return v;
  };
  return { day: one("day"), week: one("week"), month: one("month") };
}

function scheduleOf(f: Fields, raw: unknown): Schedule | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    f.add("schedule", "invalid_type", "schedule must be null (always open) or an object of weekdays");
    return null;
  }
  const out: Partial<Record<Weekday, Opening[]>> = {};
  let openings = 0;
  for (const [day, value] of Object.entries(raw as Record<string, unknown>)) {
    const path = `schedule.${day}`;
    if (!(WEEKDAYS as readonly string[]).includes(day)) {
      f.add(path, "unknown_field", `${path}: days are ${WEEKDAYS.join(", ")}`);
      continue;
    }
    if (!Array.isArray(value)) {
      f.add(path, "invalid_type", `${path} must be a list of {open, close}`);
      continue;
    }
    const day_: Opening[] = [];
    value.forEach((item: unknown, i) => {
      const at = `${path}[${i}]`;
      const o = (item ?? {}) as Record<string, unknown>;
      for (const key of Object.keys(o)) {
        if (key !== "open" && key !== "close")
          f.add(`${at}.${key}`, "unknown_field", `${at}.${key} is not open or close`);
      }
      const open = typeof o.open === "string" && OPEN_TIME.test(o.open) ? o.open : undefined;
      const close = typeof o.close === "string" && CLOSE_TIME.test(o.close) ? o.close : undefined;
      if (open === undefined) f.add(`${at}.open`, "invalid_format", `${at}.open must be a time HH:MM (00:00–23:59)`);
      if (close === undefined) f.add(`${at}.close`, "invalid_format", `${at}.close must be a time HH:MM (00:01–24:00)`);
      if (open === undefined || close === undefined) return;
      if (minutesOf(close) <= minutesOf(open)) {
        f.add(`${at}.close`, "out_of_range", `${at}.close must be after its open (${open})`);
        return;
      }
      const overlaps = day_.some((x) => minutesOf(open) < minutesOf(x.close) && minutesOf(x.open) < minutesOf(close));
      if (overlaps) f.add(at, "overlap", `${at} overlaps another opening of ${day}`);
      else day_.push({ open, close });
    });
    day_.sort((a, b) => minutesOf(a.open) - minutesOf(b.open));
    openings += day_.length;
    out[day as Weekday] = day_;
  }
  if (openings === 0 && f.violations.every((v) => !v.field.startsWith("schedule"))) {
    f.add("schedule", "too_few_items", "schedule must open at least once a week (to stop intake, set paused)");
  }
  return out;
}

/** The rules with their revision. */
export interface VersionedRules {
  readonly rules: IntakeRules;
  readonly version: number;
  readonly updatedAt: Date | null;
}
