/**
 * A provider's commercial terms: the one document administrators set (PUT replaces it; a member
 * left out takes its default) and providers read, in the API's own snake_case shape, and the price
 * a lead earns under it. THE table of price-rule conditions (`PRICE_CONDITIONS`) is here: one row
 * per `when` member, with how it is read (and every bad value named), how it matches a lead, how
 * it reads in words and its description; validation, pricing, the published terms, the README and
 * openapi.yaml (`make generate`) all come from it. Pure: no I/O, no clock.
 */
import type { FieldViolation } from "../errors.ts";
import { Fields } from "../fields.ts";
import {
  MAX_VEHICLES,
  type NewLead,
  OVERSEAS_TYPES,
  type OverseasType,
  SHIP_VIAS,
  type ShipVia,
  VEHICLE_TYPES,
  type VehicleType,
} from "../leads/lead.ts";
import { SUB_ID } from "../leads/lead.validation.ts";
import { US_STATES } from "../states/states.ts";

/** The most a lead's base price, or its price per extra vehicle, may be: $100,000. */
export const MAX_PRICE_CENTS = 10_000_000;
export const MAX_PRICE_RULES = 100;
export const MAX_SETTLEMENT_DAYS = 365;

export const RETURN_REASONS = [
  "invalid_contact",
  "not_requested",
  "out_of_area",
  "already_shipped",
  "test_or_fraud",
  "other",
] as const;
export type ReturnReason = (typeof RETURN_REASONS)[number];

/** The conditions of one price rule; every member set must match. */
export interface PriceRuleWhen {
  readonly sub_id?: string;
  readonly origin_states?: readonly string[];
  readonly destination_states?: readonly string[];
  readonly overseas_type?: OverseasType;
  readonly ship_via?: ShipVia;
  readonly vehicle_type?: VehicleType;
  readonly min_vehicles?: number;
  readonly vehicle_run?: boolean;
}

export interface PriceRule {
  readonly when: PriceRuleWhen;
  readonly price_cents: number;
}

/** The return policy (used by returns; stored and published here). */
export interface ReturnsPolicy {
  readonly window_hours: number;
  readonly max_rate: number;
  readonly contest_hours: number;
  readonly reasons: readonly ReturnReason[];
  readonly auto_approve: readonly ReturnReason[];
}

export interface Terms {
  readonly currency: string;
  readonly default_price_cents: number;
  readonly extra_vehicle_cents: number;
  readonly price_rules: readonly PriceRule[];
  readonly settlement_days: number;
  readonly returns: ReturnsPolicy;
}

/** The terms with their revision: version 0 (never set, `effectiveAt` null) is the defaults. */
export interface VersionedTerms {
  readonly terms: Terms;
  readonly version: number;
  readonly effectiveAt: Date | null;
}

export const DEFAULT_RETURNS: ReturnsPolicy = Object.freeze({
  window_hours: 72,
  max_rate: 0.15,
  contest_hours: 48,
  reasons: RETURN_REASONS,
  auto_approve: [],
});

/** What a provider has until an administrator sets its terms: every billable lead priced at 0. */
export function defaultTerms(currency: string): Terms {
  return {
    currency,
    default_price_cents: 0,
    extra_vehicle_cents: 0,
    price_rules: [],
    settlement_days: 7,
    returns: DEFAULT_RETURNS,
  };
}

// ---- the table of conditions ----

type Read<T> = (f: Fields, path: string, value: unknown) => T | undefined;

interface ConditionSpec<K extends keyof PriceRuleWhen> {
  readonly member: K;
  /** What the member holds, for the docs. */
  readonly holds: string;
  readonly description: string;
  readonly read: Read<NonNullable<PriceRuleWhen[K]>>;
  readonly matches: (lead: NewLead, value: NonNullable<PriceRuleWhen[K]>) => boolean;
  readonly words: (value: NonNullable<PriceRuleWhen[K]>) => string;
}

/** A row of the table with its value's type erased (each row reads and matches its own). */
export interface PriceCondition {
  readonly member: keyof PriceRuleWhen;
  readonly holds: string;
  readonly description: string;
  readonly read: Read<unknown>;
  readonly matches: (lead: NewLead, value: unknown) => boolean;
  readonly words: (value: unknown) => string;
}

const row = <K extends keyof PriceRuleWhen>(spec: ConditionSpec<K>): PriceCondition =>
  spec as unknown as PriceCondition;

const STATE_CODES: readonly string[] = US_STATES.map((s) => s.code);

function oneOf<T extends string>(values: readonly T[], what: string): Read<T> {
  return (f, path, v) => {
    if (typeof v === "string" && (values as readonly string[]).includes(v)) return v as T;
    f.add(path, "invalid_enum", `${path} must be ${what}: ${values.join(", ")}`);
    return undefined;
  };
}

const states: Read<readonly string[]> = (f, path, v) => {
  if (!Array.isArray(v) || v.length === 0) {
    f.add(
      path,
      v === undefined || Array.isArray(v) ? "too_few_items" : "invalid_type",
      `${path} must list state codes`,
    );
    return undefined;
  }
  const out: string[] = [];
  v.forEach((item: unknown, i) => {
    if (typeof item !== "string" || !STATE_CODES.includes(item)) {
      f.add(`${path}[${i}]`, "invalid_enum", `${path}[${i}] must be a state code (AL … WY, DC, PR, AA, AE, AP)`);
    } else if (out.includes(item)) f.add(`${path}[${i}]`, "duplicate", `${path}[${i}] ${item} is listed twice`);
    else out.push(item);
  });
  return out.length === v.length ? out : undefined;
};

const list = (codes: readonly string[]) => (codes.length === 1 ? codes[0] : `one of ${codes.join(", ")}`);

export const PRICE_CONDITIONS: readonly PriceCondition[] = [
  row({
    member: "sub_id",
    holds: "text",
    description:
      "The lead's sub_id is this value; a value ending in `-` matches every sub_id that starts with it (`fb-` matches `fb-spring`).",
    read: (f, path, v) => {
      if (typeof v === "string" && SUB_ID.test(v)) return v;
      f.add(path, "invalid_format", `${path} must be 1 to 64 of A-Z a-z 0-9 . _ : - (ending in - to match a prefix)`);
      return undefined;
    },
    matches: (lead, v) => lead.subId !== null && (lead.subId === v || (v.endsWith("-") && lead.subId.startsWith(v))),
    words: (v) => (v.endsWith("-") ? `sub_id starts with ${v}` : `sub_id is ${v}`),
  }),
  row({
    member: "origin_states",
    holds: "state codes",
    description: "The origin ZIP's state is one of these.",
    read: states,
    matches: (lead, v) => v.includes(lead.origin.stateCode),
    words: (v) => `the origin is in ${list(v)}`,
  }),
  row({
    member: "destination_states",
    holds: "state codes",
    description: "The lead has a destination ZIP and its state is one of these.",
    read: states,
    matches: (lead, v) => lead.destination !== null && v.includes(lead.destination.stateCode),
    words: (v) => `the destination is in ${list(v)}`,
  }),
  row({
    member: "overseas_type",
    holds: "DOMESTIC or FOREIGN",
    description: "The lead's overseas_type is this one.",
    read: oneOf(OVERSEAS_TYPES, "one of"),
    matches: (lead, v) => lead.overseasType === v,
    words: (v) => `overseas_type is ${v}`,
  }),
  row({
    member: "ship_via",
    holds: "a ship_via value",
    description: "The lead's ship_via is this one.",
    read: oneOf(SHIP_VIAS, "one of"),
    matches: (lead, v) => lead.shipVia === v,
    words: (v) => `ship_via is ${v}`,
  }),
  row({
    member: "vehicle_type",
    holds: "a vehicle type",
    description: "Every vehicle of the lead is of this type.",
    read: oneOf(VEHICLE_TYPES, "one of"),
    matches: (lead, v) => lead.vehicles.every((x) => x.type === v),
    words: (v) => `every vehicle is a ${v}`,
  }),
  row({
    member: "min_vehicles",
    holds: `an integer, 1 to ${MAX_VEHICLES}`,
    description: "The lead lists at least this many vehicles.",
    read: (f, path, v) => {
      if (typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_VEHICLES) return v;
      f.add(path, "out_of_range", `${path} must be an integer from 1 to ${MAX_VEHICLES}`);
      return undefined;
    },
    matches: (lead, v) => lead.vehicles.length >= v,
    words: (v) => `at least ${v} vehicles`,
  }),
  row({
    member: "vehicle_run",
    holds: "true or false",
    description:
      "Every vehicle runs (true) or every vehicle does not (false); a vehicle sent without vehicle_run matches neither.",
    read: (f, path, v) => {
      if (typeof v === "boolean") return v;
      f.add(path, "invalid_type", `${path} must be true or false`);
      return undefined;
    },
    matches: (lead, v) => lead.vehicles.every((x) => x.vehicleRun === v),
    words: (v) => (v ? "every vehicle runs" : "no vehicle runs"),
  }),
];

const CONDITION_BY_MEMBER = new Map(PRICE_CONDITIONS.map((c) => [c.member as string, c]));

/** Whether every condition of `when` matches the lead. */
export function ruleMatches(when: PriceRuleWhen, lead: NewLead): boolean {
  for (const [member, value] of Object.entries(when)) {
    const c = CONDITION_BY_MEMBER.get(member);
    if (!c?.matches(lead, value)) return false;
  }
  return true;
}

/** A rule's conditions in words, in the table's order ("sub_id starts with fb- and overseas_type is FOREIGN"). */
export function whenInWords(when: PriceRuleWhen): string {
  return PRICE_CONDITIONS.filter((c) => when[c.member] !== undefined)
    .map((c) => c.words(when[c.member]))
    .join(" and ");
}

/** The price a lead earns under `terms`, and which member set it. */
export interface PriceBreakdown {
  readonly amountCents: number;
  readonly baseCents: number;
  readonly extraVehiclesCents: number;
  /** `price_rules[i]` (the first rule whose every condition matched) or `default_price_cents`. */
  readonly rule: string;
}

/**
 * The first rule whose every condition matches sets the base price, else default_price_cents;
 * extra_vehicle_cents is added per vehicle after the first, whichever rule matched.
 */
export function priceOf(terms: Terms, lead: NewLead): PriceBreakdown {
  const i = terms.price_rules.findIndex((r) => ruleMatches(r.when, lead));
  const rule = terms.price_rules[i];
  const baseCents = rule ? rule.price_cents : terms.default_price_cents;
  const extraVehiclesCents = terms.extra_vehicle_cents * Math.max(0, lead.vehicles.length - 1);
  return {
    amountCents: baseCents + extraVehiclesCents,
    baseCents,
    extraVehiclesCents,
    rule: rule ? `price_rules[${i}]` : "default_price_cents",
  };
}

// ---- reading a PUT ----

const MEMBERS = new Set([
  "currency",
  "default_price_cents",
  "extra_vehicle_cents",
  "price_rules",
  "settlement_days",
  "returns",
]);
/** What a GET answers beside the terms; a PUT of that answer ignores them. */
const READ_ONLY = new Set(["version", "effective_at"]);
const RETURNS_MEMBERS = new Set(["window_hours", "max_rate", "contest_hours", "reasons", "auto_approve"]);

/** An amount of money: a whole number of cents from `min` to `max`, named by `path`. */
export function readCents(
  f: Fields,
  path: string,
  v: unknown,
  bounds: { readonly min: number; readonly max: number },
): number | undefined {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    f.add(path, "invalid_type", `${path} must be a whole number of cents`);
    return undefined;
  }
  if (!Number.isInteger(v)) {
    f.add(path, "invalid_type", `${path} must be a whole number of cents (${v} is not)`);
    return undefined;
  }
  if (v < bounds.min || v > bounds.max) {
    f.add(path, "out_of_range", `${path} must be from ${bounds.min} to ${bounds.max} cents`);
    return undefined;
  }
  return v;
}

function integer(f: Fields, path: string, v: unknown, min: number, max: number): number | undefined {
  if (typeof v === "number" && Number.isInteger(v) && v >= min && v <= max) return v;
  f.add(
    path,
    typeof v === "number" ? "out_of_range" : "invalid_type",
    `${path} must be an integer from ${min} to ${max}`,
  );
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function unknownMembers(
  f: Fields,
  obj: Record<string, unknown>,
  known: ReadonlySet<string>,
  prefix: string,
  what: string,
) {
  for (const key of Object.keys(obj)) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    if (!known.has(key)) f.add(path, "unknown_field", `${path} is not ${what}`);
  }
}

function readWhen(f: Fields, path: string, raw: unknown): PriceRuleWhen | undefined {
  if (!isObject(raw)) {
    f.add(
      path,
      raw === undefined || raw === null ? "required" : "invalid_type",
      `${path} must be an object of conditions`,
    );
    return undefined;
  }
  const out: Record<string, unknown> = {};
  let named = 0;
  for (const [member, value] of Object.entries(raw)) {
    if (value === undefined || value === null) continue; // null: not sent, as everywhere
    named += 1;
    const c = CONDITION_BY_MEMBER.get(member);
    if (!c) {
      const names = PRICE_CONDITIONS.map((x) => x.member).join(", ");
      f.add(
        `${path}.${member}`,
        "unknown_field",
        `${path}.${member} is not a price rule condition; conditions: ${names}`,
      );
      continue;
    }
    const read = c.read(f, `${path}.${member}`, value);
    if (read !== undefined) out[member] = read;
  }
  if (named === 0) {
    f.add(
      path,
      "too_few_items",
      `${path} must name at least one condition (default_price_cents prices every other lead)`,
    );
  }
  // In the table's order, so the same rule always reads (and compares) the same.
  return Object.fromEntries(
    PRICE_CONDITIONS.filter((c) => c.member in out).map((c) => [c.member, out[c.member]]),
  ) as PriceRuleWhen;
}

function readRules(f: Fields, raw: unknown): PriceRule[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    f.add("price_rules", "invalid_type", "price_rules must be a list of {when, price_cents}");
    return [];
  }
  if (raw.length > MAX_PRICE_RULES) {
    f.add("price_rules", "too_many_items", `price_rules may list at most ${MAX_PRICE_RULES} rules`);
  }
  const rules: PriceRule[] = [];
  raw.forEach((item: unknown, i) => {
    const path = `price_rules[${i}]`;
    if (!isObject(item)) {
      f.add(path, "invalid_type", `${path} must be an object {when, price_cents}`);
      return;
    }
    unknownMembers(f, item, new Set(["when", "price_cents"]), path, "a member of a price rule (when, price_cents)");
    const when = readWhen(f, `${path}.when`, item.when);
    let price: number | undefined;
    if (item.price_cents === undefined || item.price_cents === null) {
      f.add(`${path}.price_cents`, "required", `${path}.price_cents is required`);
    } else price = readCents(f, `${path}.price_cents`, item.price_cents, { min: 0, max: MAX_PRICE_CENTS });
    if (when !== undefined && price !== undefined) rules.push({ when, price_cents: price });
  });
  return rules;
}

function reasonList(f: Fields, path: string, raw: unknown, allowed: readonly string[], min: number): ReturnReason[] {
  if (!Array.isArray(raw)) {
    f.add(path, "invalid_type", `${path} must be a list of return reasons`);
    return [];
  }
  if (raw.length < min) f.add(path, "too_few_items", `${path} must list at least ${min} reason`);
  const out: ReturnReason[] = [];
  raw.forEach((item: unknown, i) => {
    if (typeof item !== "string" || !allowed.includes(item)) {
      f.add(`${path}[${i}]`, "invalid_enum", `${path}[${i}] must be one of: ${allowed.join(", ")}`);
    } else if (out.includes(item as ReturnReason)) {
      f.add(`${path}[${i}]`, "duplicate", `${path}[${i}] ${item} is listed twice`);
    } else out.push(item as ReturnReason);
  });
  return out;
}

function readReturns(f: Fields, raw: unknown): ReturnsPolicy {
  const d = DEFAULT_RETURNS;
  if (raw === undefined || raw === null) return d;
  if (!isObject(raw)) {
    f.add("returns", "invalid_type", "returns must be an object");
    return d;
  }
  unknownMembers(f, raw, RETURNS_MEMBERS, "returns", "a member of returns");
  const present = (k: string) => raw[k] !== undefined && raw[k] !== null;
  let maxRate = d.max_rate;
  if (present("max_rate")) {
    const v = raw.max_rate;
    if (typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1) maxRate = v;
    else f.add("returns.max_rate", "out_of_range", "returns.max_rate must be a number from 0 to 1 (0.15 is 15 %)");
  }
  const reasons = present("reasons") ? reasonList(f, "returns.reasons", raw.reasons, RETURN_REASONS, 1) : d.reasons;
  const autoApprove = present("auto_approve")
    ? reasonList(f, "returns.auto_approve", raw.auto_approve, reasons, 0)
    : d.auto_approve.filter((r) => reasons.includes(r));
  return {
    window_hours: present("window_hours")
      ? (integer(f, "returns.window_hours", raw.window_hours, 1, 8760) ?? d.window_hours)
      : d.window_hours,
    max_rate: maxRate,
    contest_hours: present("contest_hours")
      ? (integer(f, "returns.contest_hours", raw.contest_hours, 1, 720) ?? d.contest_hours)
      : d.contest_hours,
    reasons,
    auto_approve: autoApprove,
  };
}

export interface ParsedTerms {
  readonly terms: Terms | undefined;
  readonly violations: readonly FieldViolation[];
}

/**
 * Reads a PUT body: members left out take their defaults; every bad member is named
 * (`price_rules[1].when.origin_states[0] must be a state code`). `currency` must be the ledger's.
 */
export function parseTerms(input: unknown, currency: string): ParsedTerms {
  const f = new Fields();
  if (!isObject(input)) {
    f.add("body", "invalid_type", "the terms must be a JSON object");
    return { terms: undefined, violations: f.violations };
  }
  for (const key of Object.keys(input)) {
    if (!MEMBERS.has(key) && !READ_ONLY.has(key)) f.add(key, "unknown_field", `${key} is not a member of the terms`);
  }
  const d = defaultTerms(currency);
  if (input.currency !== undefined && input.currency !== null && input.currency !== currency) {
    f.add("currency", "invalid_enum", `currency must be ${currency}: the ledger keeps one currency (LEDGER_CURRENCY)`);
  }
  const cents = (key: "default_price_cents" | "extra_vehicle_cents") =>
    input[key] === undefined || input[key] === null
      ? d[key]
      : (readCents(f, key, input[key], { min: 0, max: MAX_PRICE_CENTS }) ?? d[key]);
  const terms: Terms = {
    currency,
    default_price_cents: cents("default_price_cents"),
    extra_vehicle_cents: cents("extra_vehicle_cents"),
    price_rules: readRules(f, input.price_rules),
    settlement_days:
      input.settlement_days === undefined || input.settlement_days === null
        ? d.settlement_days
        : (integer(f, "settlement_days", input.settlement_days, 0, MAX_SETTLEMENT_DAYS) ?? d.settlement_days),
    returns: readReturns(f, input.returns),
  };
  return { terms: f.violations.length === 0 ? terms : undefined, violations: f.violations };
}

/** The stored document (older rows may lack members) with every member present. */
export function termsWithDefaults(stored: unknown, currency: string): Terms {
  const s = (isObject(stored) ? stored : {}) as Partial<Terms>;
  const d = defaultTerms(currency);
  return { ...d, ...s, currency, returns: { ...d.returns, ...(s.returns ?? {}) } };
}

/** The document as one canonical text (keys sorted), to tell a change from a repeat. */
export function canonicalTerms(terms: Terms): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : isObject(v)
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort(v[k])]),
          )
        : v;
  return JSON.stringify(sort(terms));
}
