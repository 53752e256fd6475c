/**
 * Every rule of a lead submission (spec 2.1–2.3, DESIGN §2), applied to a plain JSON-like
 * object. Both edges call this through the lead service: REST passes the parsed body, gRPC
 * maps its message to the same shape. All violations are collected, never just the first.
 */
import type { FieldViolation } from "../errors.ts";
import { DOT_SEGMENTS, Fields } from "../fields.ts";
import { normalizeZip, type ZipDirectory } from "../zip/zip-directory.ts";
import {
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

export const MAX_VEHICLES = 20;
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
]);
const DEPRECATED_FIELDS = new Set(["origin_state", "destination_state"]);
const VEHICLE_FIELDS = new Set(["year", "make", "model", "type", "tariff", "deposit", "vehicle_run"]);

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

export function validateLead(raw: unknown, zips: ZipDirectory, now: Date): ValidationResult {
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
  const phoneNumber = f.phone(body, "phone_number");
  const estimatedShipDate = f.date(body, "estimated_ship_date");
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
    phoneNumber: phoneNumber as string,
    companyName: companyName ?? null,
    noteFromShipper: noteFromShipper ?? null,
    estimatedShipDate: estimatedShipDate as string,
    overseasType: overseasType as OverseasType,
    shipVia: shipVia as ShipVia,
    origin: origin as Place,
    destination: destination ?? null,
    vehicles,
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
    if ([year, make, model, type, tariff, deposit].some((x) => x === undefined)) return;
    out.push({
      year: year as number,
      make: make as string,
      model: model as string,
      type: type as VehicleType,
      tariff: tariff as number,
      deposit: deposit as number,
      vehicleRun: vehicleRun ?? null,
    });
  });
  return out;
}
