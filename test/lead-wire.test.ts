/**
 * gRPC's fast path writes GetLeadResponse and CreateLeadResponse by hand (rpc/lead-wire.ts):
 * its bytes must be exactly what protobuf-es's reflective toBinary makes of leadMessage, for any
 * lead: every optional part present or absent, empty and non-ASCII text, zero and large numbers.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CreateLeadResponseSchema,
  GetLeadResponseSchema,
} from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { createLeadResponseBytes, getLeadResponseBytes } from "../src/leads/fast/lead-wire.ts";
import { leadMessage } from "../src/leads/lead.rpc.ts";
import { LEAD_STATES, type Lead, OVERSEAS_TYPES, SHIP_VIAS, VEHICLE_TYPES } from "../src/leads/lead.ts";

const text = fc.oneof(fc.constant(""), fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 200 }));
const nullable = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null });
// Whole milliseconds from 1970 to 2100, as Postgres gives them back.
const date = fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms));
const id = fc.oneof(
  fc.constant(0),
  fc.integer({ min: 1, max: 2 ** 31 }),
  fc.maxSafeInteger().filter((n) => n > 0),
);
const place = fc.record({ zip: text, city: text, stateCode: text, stateId: fc.integer({ min: 0, max: 2 ** 31 - 1 }) });

const leadArb: fc.Arbitrary<Lead> = fc.record({
  id,
  providerId: id,
  livemode: fc.boolean(),
  orderNumber: text,
  state: fc.constantFrom(...LEAD_STATES),
  leadStatus: text,
  createdAt: date,
  updatedAt: date,
  stateChangedAt: date,
  externalId: text,
  firstName: text,
  lastName: text,
  email: text,
  phoneNumber: text,
  phoneE164: nullable(text),
  companyName: nullable(text),
  noteFromShipper: nullable(text),
  estimatedShipDate: text,
  overseasType: fc.constantFrom(...OVERSEAS_TYPES),
  shipVia: fc.constantFrom(...SHIP_VIAS),
  origin: place,
  destination: nullable(place),
  vehicles: fc.array(
    fc.record({
      year: fc.integer({ min: 0, max: 3000 }),
      make: text,
      model: text,
      type: fc.constantFrom(...VEHICLE_TYPES),
      tariff: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000_000 }), fc.maxSafeInteger()),
      deposit: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10_000_000 })),
      vehicleRun: nullable(fc.boolean()),
      vin: nullable(text),
    }),
    { maxLength: 4 },
  ),
  subId: nullable(text),
  sourceUrl: nullable(text),
  consent: nullable(
    fc.record({
      trustedFormCertUrl: nullable(text),
      jornayaLeadId: nullable(text),
      consentText: nullable(text),
      consentedAt: nullable(text),
      ipAddress: nullable(text),
      userAgent: nullable(text),
      pageUrl: nullable(text),
    }),
  ),
  history: fc.array(
    fc.record({
      fromState: nullable(fc.constantFrom(...LEAD_STATES)),
      toState: fc.constantFrom(...LEAD_STATES),
      leadStatus: text,
      changedAt: date,
      actor: text,
    }),
    { maxLength: 4 },
  ),
  duplicate: nullable(
    fc.record({
      matchedOn: fc.array(fc.constantFrom("phone", "email", ""), { maxLength: 3 }),
      firstSeenAt: date,
      sameProvider: fc.boolean(),
      original: nullable(fc.record({ id, providerId: id, orderNumber: text, externalId: text })),
    }),
  ),
  price: nullable(
    fc.record({
      amountCents: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 200_000_000 }), fc.maxSafeInteger()),
      currency: text,
      rule: text,
      termsVersion: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    }),
  ),
});

const warningArb = fc.array(
  fc.record({
    field: text,
    code: fc.constantFrom("unknown_field", "deprecated_field", "disposable_email") as fc.Arbitrary<
      "unknown_field" | "deprecated_field" | "disposable_email"
    >,
    message: text,
  }),
  { maxLength: 3 },
);

describe("the fast path's hand-written lead messages", () => {
  it("are GetLeadResponse's bytes as toBinary writes them, for any lead", () => {
    fc.assert(
      fc.property(leadArb, (lead) => {
        const expected = toBinary(GetLeadResponseSchema, create(GetLeadResponseSchema, { lead: leadMessage(lead) }));
        expect(Buffer.from(getLeadResponseBytes(lead)).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
      }),
      { numRuns: 500 },
    );
  });

  it("write what no lead of the service holds as toBinary does: negative numbers, times before 1970, long text", () => {
    const lead = fc.sample(leadArb, { numRuns: 1, seed: 25 })[0] as Lead;
    const odd: Lead = {
      ...lead,
      id: -5,
      createdAt: new Date(-1_576_800_000_123),
      updatedAt: new Date(-1),
      orderNumber: "x".repeat(130),
      leadStatus: "é".repeat(50),
      origin: { zip: "1", city: "c".repeat(300), stateCode: "CA", stateId: -7 },
      vehicles: [
        {
          year: -1,
          make: "m",
          model: "n",
          type: "CAR",
          tariff: -(2 ** 40) - 3,
          deposit: Number.MIN_SAFE_INTEGER,
          vehicleRun: false,
          vin: "",
        },
      ],
      price: { amountCents: -(2 ** 33) - 1, currency: "", rule: "r".repeat(140), termsVersion: -2 },
    };
    const expected = toBinary(GetLeadResponseSchema, create(GetLeadResponseSchema, { lead: leadMessage(odd) }));
    expect(Buffer.from(getLeadResponseBytes(odd)).toString("hex")).toBe(Buffer.from(expected).toString("hex"));
    // A lone surrogate (written as U+FFFD, as TextEncoder does), and a message past the first 4,096
    // bytes of the writer's buffer.
    const big: Lead = { ...odd, noteFromShipper: `a\ud800b${"€".repeat(2000)}`, firstName: "z".repeat(3000) };
    const bigExpected = toBinary(GetLeadResponseSchema, create(GetLeadResponseSchema, { lead: leadMessage(big) }));
    expect(bigExpected.length).toBeGreaterThan(9000);
    expect(Buffer.from(getLeadResponseBytes(big)).toString("hex")).toBe(Buffer.from(bigExpected).toString("hex"));
  });

  it("refuse what toBinary refuses (a fraction, an int32 out of range, an invalid date), and write the next lead whole", () => {
    const lead = fc.sample(leadArb, { numRuns: 1, seed: 26 })[0] as Lead;
    const vehicle = {
      year: 2020,
      make: "m",
      model: "n",
      type: "CAR" as const,
      tariff: 1,
      deposit: 0,
      vehicleRun: null,
      vin: null,
    };
    for (const bad of [
      { ...lead, vehicles: [{ ...vehicle, tariff: 1.5 }] },
      { ...lead, vehicles: [{ ...vehicle, year: 2 ** 31 }] },
      { ...lead, createdAt: new Date(Number.NaN) },
    ]) {
      expect(() =>
        toBinary(GetLeadResponseSchema, create(GetLeadResponseSchema, { lead: leadMessage(bad) })),
      ).toThrow();
      expect(() => getLeadResponseBytes(bad)).toThrow(/invalid int(32|64)/);
    }
    const expected = toBinary(GetLeadResponseSchema, create(GetLeadResponseSchema, { lead: leadMessage(lead) }));
    expect(Buffer.from(getLeadResponseBytes(lead)).equals(Buffer.from(expected))).toBe(true);
  });

  it("are CreateLeadResponse's bytes, warnings included, and read back as the same message", () => {
    fc.assert(
      fc.property(leadArb, warningArb, (lead, warnings) => {
        const message = create(CreateLeadResponseSchema, {
          lead: leadMessage(lead),
          warnings: warnings.map((w) => ({ ...w })),
        });
        const bytes = createLeadResponseBytes(lead, warnings);
        expect(Buffer.from(bytes).toString("hex")).toBe(
          Buffer.from(toBinary(CreateLeadResponseSchema, message)).toString("hex"),
        );
        expect(fromBinary(CreateLeadResponseSchema, bytes)).toEqual(message);
      }),
      { numRuns: 300 },
    );
  });

  it("frame a message as gRPC does (flags 0, length big-endian), and survive a lead they cannot write", () => {
    fc.assert(
      fc.property(leadArb, (lead) => {
        const plain = Buffer.from(getLeadResponseBytes(lead));
        const framed = Buffer.from(getLeadResponseBytes(lead, true));
        expect(framed[0]).toBe(0);
        expect(framed.readUInt32BE(1)).toBe(plain.length);
        expect(framed.subarray(5).equals(plain)).toBe(true);
        // A state the proto does not know throws mid-message; the next response is whole.
        expect(() => getLeadResponseBytes({ ...lead, state: "BOGUS" as never }, true)).toThrow(/BOGUS/);
        expect(Buffer.from(getLeadResponseBytes(lead)).equals(plain)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
