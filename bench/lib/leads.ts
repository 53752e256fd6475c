/**
 * Realistic lead submissions for the load: a few names, ZIPs the service knows, 1–3 vehicles.
 * The same generator feeds REST (JSON text) and gRPC (message init), and the SQL seed uses the
 * same pools so stored rows look like the ones the service writes.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { OverseasType, ShipVia, VehicleType } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import type { CreateLeadRequestSchema } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";

/** ZIPs known to the service's directory, with the city and state it detects for them. */
export const ZIPS = [
  { zip: "90210", city: "Beverly Hills", stateCode: "CA", stateId: 5 },
  { zip: "10001", city: "New York", stateCode: "NY", stateId: 33 },
  { zip: "33101", city: "Miami", stateCode: "FL", stateId: 10 },
  { zip: "60601", city: "Chicago", stateCode: "IL", stateId: 14 },
  { zip: "98101", city: "Seattle", stateCode: "WA", stateId: 48 },
  { zip: "75201", city: "Dallas", stateCode: "TX", stateId: 44 },
  { zip: "30301", city: "Atlanta", stateCode: "GA", stateId: 11 },
  { zip: "02108", city: "Boston", stateCode: "MA", stateId: 22 },
  { zip: "80202", city: "Denver", stateCode: "CO", stateId: 6 },
  { zip: "85001", city: "Phoenix", stateCode: "AZ", stateId: 3 },
] as const;

export const FIRST_NAMES = ["Maria", "James", "Aisha", "Wei", "Olivia", "Carlos", "Noah", "Priya"] as const;
export const LAST_NAMES = ["Gonzalez", "Smith", "Khan", "Chen", "Johnson", "Rossi", "Nguyen", "Patel"] as const;
export const VEHICLES = [
  { make: "Toyota", model: "Camry", type: "CAR" },
  { make: "Ford", model: "F-150", type: "PICKUP" },
  { make: "Honda", model: "CR-V", type: "SUV" },
  { make: "Tesla", model: "Model 3", type: "CAR" },
  { make: "Chrysler", model: "Pacifica", type: "MINIVAN" },
  { make: "Harley-Davidson", model: "Street Glide", type: "MOTORCYCLE" },
] as const;
const DOMESTIC_SHIP_VIA = ["OPEN", "ENCLOSED", "DRIVE_AWAY"] as const;
const AREA_CODES = [212, 213, 305, 312, 404, 415, 512, 617, 702, 713, 808, 917, 206, 303, 602, 214, 480, 646] as const;

export interface LeadInput {
  readonly externalId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phoneNumber: string;
  readonly originZip: string;
  readonly destinationZip: string;
  readonly estimatedShipDate: string;
  readonly shipVia: (typeof DOMESTIC_SHIP_VIA)[number];
  readonly companyName?: string;
  readonly vehicles: readonly {
    year: number;
    make: string;
    model: string;
    type: (typeof VEHICLES)[number]["type"];
    tariff: number;
    deposit: number;
    vehicleRun: boolean;
  }[];
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length] as T;
const rand = (n: number) => Math.floor(Math.random() * n);

/** A fresh, valid, domestic lead with 1–3 vehicles and a ship date 1–60 days ahead. */
export function makeLead(externalId: string): LeadInput {
  const first = pick(FIRST_NAMES, rand(1000));
  const last = pick(LAST_NAMES, rand(1000));
  const origin = rand(ZIPS.length);
  const destination = (origin + 1 + rand(ZIPS.length - 1)) % ZIPS.length;
  const ship = new Date(Date.now() + (1 + rand(60)) * 86_400_000).toISOString().slice(0, 10);
  const count = 1 + rand(3);
  return {
    externalId,
    firstName: first,
    lastName: last,
    email: `${first}.${last}.${rand(1_000_000_000)}@example.com`.toLowerCase(),
    // Real area codes (libphonenumber refuses unassigned ones), any exchange and line.
    phoneNumber: `+1 (${pick(AREA_CODES, rand(1000))}) ${200 + rand(800)}-${String(rand(10_000)).padStart(4, "0")}`,
    originZip: pick(ZIPS, origin).zip,
    destinationZip: pick(ZIPS, destination).zip,
    estimatedShipDate: ship,
    shipVia: pick(DOMESTIC_SHIP_VIA, rand(30)),
    ...(rand(4) === 0 && { companyName: `${last} Logistics LLC` }),
    vehicles: Array.from({ length: count }, () => {
      const v = pick(VEHICLES, rand(1000));
      const tariff = 600 + rand(1400);
      return { ...v, year: 2008 + rand(18), tariff, deposit: Math.round(tariff * 0.15), vehicleRun: rand(10) > 0 };
    }),
  };
}

/** The REST body (snake_case JSON) of a lead. */
export function restBody(l: LeadInput): string {
  return JSON.stringify({
    external_id: l.externalId,
    first_name: l.firstName,
    last_name: l.lastName,
    email: l.email,
    phone_number: l.phoneNumber,
    origin_zip: l.originZip,
    destination_zip: l.destinationZip,
    estimated_ship_date: l.estimatedShipDate,
    overseas_type: "DOMESTIC",
    ship_via: l.shipVia,
    ...(l.companyName !== undefined && { company_name: l.companyName }),
    vehicles: l.vehicles.map((v) => ({
      year: v.year,
      make: v.make,
      model: v.model,
      type: v.type,
      tariff: v.tariff,
      deposit: v.deposit,
      vehicle_run: v.vehicleRun,
    })),
  });
}

/** The same lead as a gRPC CreateLeadRequest. */
export function grpcRequest(l: LeadInput): MessageInitShape<typeof CreateLeadRequestSchema> {
  return {
    externalId: l.externalId,
    firstName: l.firstName,
    lastName: l.lastName,
    email: l.email,
    phoneNumber: l.phoneNumber,
    originZip: l.originZip,
    destinationZip: l.destinationZip,
    estimatedShipDate: l.estimatedShipDate,
    overseasType: OverseasType.DOMESTIC,
    shipVia: ShipVia[l.shipVia],
    ...(l.companyName !== undefined && { companyName: l.companyName }),
    vehicles: l.vehicles.map((v) => ({
      year: v.year,
      make: v.make,
      model: v.model,
      type: VehicleType[v.type],
      tariff: BigInt(v.tariff),
      deposit: BigInt(v.deposit),
      vehicleRun: v.vehicleRun,
    })),
  };
}
