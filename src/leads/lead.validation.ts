/**
 * Every rule of a lead submission (spec 2.1–2.3, DESIGN §2), applied to a plain JSON-like
 * object. Both edges call this through the lead service: REST passes the parsed body, gRPC
 * maps its message to the same shape. All violations are collected, never just the first.
 */
import { isIP } from "node:net";
import type { FieldViolation } from "../errors.ts";
import { DOT_SEGMENTS, Fields } from "../fields.ts";
import { daysUntil } from "../intake/business-time.ts";
import { checkPhone, isDisposableEmail, isValidVin } from "../intake/contact.ts";
import { normalizeZip, type ZipDirectory } from "../zip/zip-directory.ts";
import {
  type Consent,
  MAX_VEHICLES,
  type NewLead,
  OVERSEAS_TYPES,
  type OverseasType,
  type Place,
  SHIP_VIA_BY_OVERSEAS_TYPE,
  SHIP_VIAS,
  type ShipVia,
  shipViaAllowed,
  VEHICLE_TYPES,
  type Vehicle,
  type VehicleType,
  type Warning,
} from "./lead.ts";

export const MAX_MONEY = 10_000_000;

const LEAD_FIELDS = new Set([
  "external_id",
  "first_name",
  "last_name",
  "email",
  "phone_number",
  "origin_zip",
  "estimated_ship_date",
  "overseas_type",
  "ship_via",
  "vehicles",
  "destination_zip",
  "origin_city",
  "destination_city",
  "company_name",
  "note_from_shipper",
  "sub_id",
  "source_url",
  "consent",
]);
const DEPRECATED_FIELDS = new Set(["origin_state", "destination_state"]);
const VEHICLE_FIELDS = new Set(["year", "make", "model", "type", "tariff", "deposit", "vehicle_run", "vin"]);
const CONSENT_FIELDS = new Set([
  "trusted_form_cert_url",
  "jornaya_lead_id",
  "consent_text",
  "consented_at",
  "ip_address",
  "user_agent",
  "page_url",
]);
/** A provider's sub-source: what `sub_id` may hold (also what the stats group refused requests by). */
export const SUB_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const TRUSTED_FORM = /^https:\/\/cert\.trustedform\.com\/[0-9a-f]{40}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

export interface ValidationResult {
  readonly lead: NewLead | undefined;
  readonly violations: readonly FieldViolation[];
  /** The first MAX_WARNINGS warnings. */
  readonly warnings: readonly Warning[];
  /** How many more there were (a body of thousands of unknown fields answers a bounded list). */
  readonly warningsTruncated: number;
}

/** At most this many warnings are listed; the rest are only counted. */
export const MAX_WARNINGS = 20;

/** Keeps the first MAX_WARNINGS of `all`, counting the rest. */
function capped(all: Warning[]): { warnings: readonly Warning[]; warningsTruncated: number } {
  return { warnings: all.slice(0, MAX_WARNINGS), warningsTruncated: Math.max(0, all.length - MAX_WARNINGS) };
}

/** Highest accepted model year: next year + 1. */
export function maxModelYear(now: Date): number {
  return now.getUTCFullYear() + 2;
}

/** What the lead rules need besides the body: the ZIP directory, the clock and the broker's time zone. */
export interface ValidationContext {
  readonly zips: ZipDirectory;
  readonly now: Date;
  /** BUSINESS_TIMEZONE: "yesterday" for ship_date_in_past. */
  readonly zone: string;
}

export function validateLead(raw: unknown, ctx: ValidationContext): ValidationResult {
  const { zips, now } = ctx;
  const f = new Fields();
  const warnings: Warning[] = [];
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    f.add("body", "invalid_type", "the request body must be a JSON object");
    return { lead: undefined, violations: f.violations, ...capped(warnings) };
  }
  const body = raw as Record<string, unknown>;
  collectWarnings(body, LEAD_FIELDS, "", warnings);

  const externalId = f.text(body, "external_id", { max: 128, required: true, noControl: true });
  if (externalId !== undefined && DOT_SEGMENTS.has(externalId)) {
    f.add("external_id", "invalid_format", "external_id must not be . or .. (they are path segments in its URL)");
  }
  const firstName = f.text(body, "first_name", { max: 100, required: true });
  const lastName = f.text(body, "last_name", { max: 100, required: true });
  const email = f.email(body, "email");
  if (email !== undefined && isDisposableEmail(email)) {
    warnings.push({
      field: "email",
      code: "disposable_email",
      message: "email uses a disposable address domain; the lead was accepted",
    });
  }
  const phone = phoneOf(f, body);
  const estimatedShipDate = f.date(body, "estimated_ship_date");
  // One day of grace: "yesterday" in BUSINESS_TIMEZONE may still be today where the shipper is.
  if (estimatedShipDate !== undefined && daysUntil(estimatedShipDate, now, ctx.zone) < -1) {
    f.add("estimated_ship_date", "ship_date_in_past", "estimated_ship_date must not be before yesterday");
  }
  const subId = f.text(body, "sub_id", { max: 64 });
  if (subId !== undefined && !SUB_ID.test(subId)) {
    f.add("sub_id", "invalid_format", "sub_id must be 1 to 64 of A-Z a-z 0-9 . _ : -");
  }
  const sourceUrl = httpUrl(f, body, "source_url", 2048);
  const consent = consentOf(f, body, now);
  const originCity = f.text(body, "origin_city", { max: 100 });
  const destinationCity = f.text(body, "destination_city", { max: 100 });
  const companyName = f.text(body, "company_name", { max: 100, allowEmpty: true });
  const noteFromShipper = f.text(body, "note_from_shipper", { max: 2000, allowEmpty: true });
  const origin = zipPlace(f, zips, body, "origin_zip", true, originCity);
  const destination = zipPlace(f, zips, body, "destination_zip", false, destinationCity);
  const overseasType = f.oneOf(body, "overseas_type", OVERSEAS_TYPES, true);
  const shipVia = shipViaFor(f, body, overseasType);
  const vehicles = vehiclesOf(f, body, warnings, now);

  if (f.violations.length > 0) return { lead: undefined, violations: f.violations, ...capped(warnings) };
  const lead: NewLead = {
    externalId: externalId as string,
    firstName: firstName as string,
    lastName: lastName as string,
    email: email as string,
    phoneNumber: phone?.text as string,
    phoneE164: phone?.e164 as string,
    companyName: companyName ?? null,
    noteFromShipper: noteFromShipper ?? null,
    estimatedShipDate: estimatedShipDate as string,
    overseasType: overseasType as OverseasType,
    shipVia: shipVia as ShipVia,
    origin: origin as Place,
    destination: destination ?? null,
    vehicles,
    subId: subId ?? null,
    sourceUrl: sourceUrl ?? null,
    consent,
  };
  return { lead, violations: [], ...capped(warnings) };
}

function collectWarnings(obj: Record<string, unknown>, known: Set<string>, prefix: string, out: Warning[]): void {
  for (const key of Object.keys(obj)) {
    if (known.has(key)) continue;
    const field = `${prefix}${key}`;
    if (prefix === "" && DEPRECATED_FIELDS.has(key)) {
      out.push({ field, code: "deprecated_field", message: `${field} is deprecated and was ignored` });
    } else {
      out.push({ field, code: "unknown_field", message: `${field} is not a known field and was ignored` });
    }
  }
}

function zipPlace(
  f: Fields,
  zips: ZipDirectory,
  body: Record<string, unknown>,
  field: string,
  required: boolean,
  givenCity: string | undefined,
): Place | undefined {
  const zip = f.text(body, field, { max: 10, required });
  if (zip === undefined) return undefined;
  if (normalizeZip(zip) === undefined) {
    f.add(field, "invalid_zip", `${field} must be a US ZIP code such as 12345 or 12345-6789`);
    return undefined;
  }
  const found = zips.lookup(zip);
  if (!found) {
    f.add(field, "invalid_zip", `${field} ${zip} is not a known US ZIP code`);
    return undefined;
  }
  return { zip: found.zip, city: givenCity ?? found.city, stateCode: found.stateCode, stateId: found.stateId };
}

function shipViaFor(f: Fields, body: Record<string, unknown>, overseasType: OverseasType | undefined) {
  const shipVia = f.oneOf(body, "ship_via", SHIP_VIAS, true);
  if (shipVia === undefined || overseasType === undefined) return shipVia;
  if (!shipViaAllowed(overseasType, shipVia)) {
    const allowed = SHIP_VIA_BY_OVERSEAS_TYPE[overseasType].join(", ");
    f.add(
      "ship_via",
      "invalid_ship_via",
      `ship_via ${shipVia} is not allowed for overseas_type ${overseasType}; allowed: ${allowed}`,
    );
    return undefined;
  }
  return shipVia;
}

function vehiclesOf(f: Fields, body: Record<string, unknown>, warnings: Warning[], now: Date): Vehicle[] {
  const list = body.vehicles;
  if (list === undefined || list === null) {
    f.add("vehicles", "required", "vehicles is required");
    return [];
  }
  if (!Array.isArray(list)) {
    f.add("vehicles", "invalid_type", "vehicles must be an array of vehicles");
    return [];
  }
  if (list.length < 1) f.add("vehicles", "too_few_items", "vehicles must have at least 1 vehicle");
  if (list.length > MAX_VEHICLES) {
    f.add("vehicles", "too_many_items", `vehicles must have at most ${MAX_VEHICLES} vehicles`);
    return [];
  }
  const out: Vehicle[] = [];
  list.forEach((item: unknown, i) => {
    const path = `vehicles[${i}]`;
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      f.add(path, "invalid_type", `${path} must be an object`);
      return;
    }
    const v = item as Record<string, unknown>;
    collectWarnings(v, VEHICLE_FIELDS, `${path}.`, warnings);
    const year = f.integer(v, "year", 1900, maxModelYear(now), path);
    const make = f.text(v, "make", { max: 100, required: true }, path);
    const model = f.text(v, "model", { max: 100, required: true }, path);
    const type = f.oneOf(v, "type", VEHICLE_TYPES, true, path);
    const tariff = f.integer(v, "tariff", 0, MAX_MONEY, path);
    const deposit = f.integer(v, "deposit", 0, MAX_MONEY, path);
    const vehicleRun = f.boolean(v, "vehicle_run", path);
    const vinText = f.text(v, "vin", { max: 17 }, path);
    const vin = vinText?.toUpperCase();
    if (vin !== undefined && !isValidVin(vin)) {
      f.add(
        `${path}.vin`,
        "invalid_vin",
        `${path}.vin must be 17 characters (no I, O or Q) with a valid check digit in position 9`,
      );
    }
    if ([year, make, model, type, tariff, deposit].some((x) => x === undefined)) return;
    out.push({
      year: year as number,
      make: make as string,
      model: model as string,
      type: type as VehicleType,
      tariff: tariff as number,
      deposit: deposit as number,
      vehicleRun: vehicleRun ?? null,
      vin: vin ?? null,
    });
  });
  return out;
}

function phoneOf(f: Fields, body: Record<string, unknown>): { text: string; e164: string } | undefined {
  const text = f.phone(body, "phone_number");
  if (text === undefined) return undefined;
  const checked = checkPhone(text);
  if ("problem" in checked) {
    f.add("phone_number", "invalid_phone", `phone_number ${checked.problem}`);
    return undefined;
  }
  return { text, e164: checked.e164 };
}

/** An absolute http(s) URL of at most `max` characters, or undefined (not sent, or named as bad). */
function httpUrl(f: Fields, obj: Record<string, unknown>, key: string, max: number, prefix = ""): string | undefined {
  const path = prefix === "" ? key : `${prefix}.${key}`;
  const text = f.text(obj, key, { max, noControl: true }, prefix);
  if (text === undefined) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    f.add(path, "invalid_url", `${path} must be an absolute http or https URL`);
    return undefined;
  }
  return text;
}

function consentOf(f: Fields, body: Record<string, unknown>, now: Date): Consent | null {
  const raw = body.consent;
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    f.add("consent", "invalid_type", "consent must be an object");
    return null;
  }
  const c = raw as Record<string, unknown>;
  const p = "consent";
  for (const key of Object.keys(c)) {
    if (!CONSENT_FIELDS.has(key)) f.add(`${p}.${key}`, "unknown_field", `${p}.${key} is not a consent field`);
  }
  const cert = f.text(c, "trusted_form_cert_url", { max: 100 }, p);
  if (cert !== undefined && !TRUSTED_FORM.test(cert)) {
    f.add(
      `${p}.trusted_form_cert_url`,
      "invalid_format",
      `${p}.trusted_form_cert_url must be https://cert.trustedform.com/ followed by 40 hex characters`,
    );
  }
  const jornaya = f.text(c, "jornaya_lead_id", { max: 36 }, p);
  if (jornaya !== undefined && !UUID.test(jornaya)) {
    f.add(`${p}.jornaya_lead_id`, "invalid_format", `${p}.jornaya_lead_id must be a UUID (8-4-4-4-12 hex)`);
  }
  const consentText = f.text(c, "consent_text", { max: 2000 }, p);
  const consentedAt = f.text(c, "consented_at", { max: 40 }, p);
  if (consentedAt !== undefined) {
    const at = RFC3339.test(consentedAt) ? new Date(consentedAt) : undefined;
    if (!at || Number.isNaN(at.getTime())) {
      f.add(`${p}.consented_at`, "invalid_format", `${p}.consented_at must be an RFC 3339 date-time`);
    } else if (at.getTime() > now.getTime() + 60_000) {
      f.add(`${p}.consented_at`, "out_of_range", `${p}.consented_at must not be in the future`);
    }
  }
  const ip = f.text(c, "ip_address", { max: 45 }, p);
  if (ip !== undefined && isIP(ip) === 0) {
    f.add(`${p}.ip_address`, "invalid_format", `${p}.ip_address must be an IPv4 or IPv6 address`);
  }
  const userAgent = f.text(c, "user_agent", { max: 512 }, p);
  const pageUrl = httpUrl(f, c, "page_url", 2048, p);
  return {
    trustedFormCertUrl: cert ?? null,
    jornayaLeadId: jornaya ?? null,
    consentText: consentText ?? null,
    consentedAt: consentedAt ?? null,
    ipAddress: ip ?? null,
    userAgent: userAgent ?? null,
    pageUrl: pageUrl ?? null,
  };
}
