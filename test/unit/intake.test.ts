/**
 * The intake rules and checks on their own (make mutation mutates src/intake/*.ts against these):
 * the contact checks, the rules document's parser, every criterion of the rule table at its
 * bounds, the broker's calendar, and the duplicate check's SQL half (intake_guard) on a real
 * in-memory PGlite.
 */
import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { businessToday, capWindow, daysUntil, scheduleState, secondsUntil } from "../../src/intake/business-time.ts";
import { checkPhone, emailMatchKey, isDisposableEmail, isValidVin, vinCheckDigit } from "../../src/intake/contact.ts";
import { createIntakeService } from "../../src/intake/intake.service.ts";
import {
  capReached,
  duplicateLead,
  intakeClosed,
  intakePaused,
  outsideCriteria,
} from "../../src/intake/intake-errors.ts";
import {
  canonicalRules,
  DEFAULT_INTAKE_RULES,
  type IntakeRules,
  minutesOf,
  parseIntakeRules,
  STATE_CODES,
  withDefaults,
} from "../../src/intake/intake-rules.ts";
import { intakePipeline } from "../../src/intake/pipeline.ts";
import { CRITERIA_CODES, criteriaBreaches, INTAKE_RULES_TABLE } from "../../src/intake/rule-table.ts";
import { duplicateFromRow } from "../../src/leads/lead.repository.ts";
import { isBillable, type NewLead, providerDuplicate } from "../../src/leads/lead.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

const NY = "America/New_York";

describe("contact checks", () => {
  it.each([
    ["(212) 555-0142", "+12125550142"],
    ["+44 20 7946 0958", "+442079460958"],
    ["212.555.0142", "+12125550142"],
  ])("reads %s as %s", (text, e164) => {
    expect(checkPhone(text)).toEqual({ e164 });
  });
  it.each([
    ["123-456-7890", "is not a valid phone number"],
    ["555 0100", "is not a valid phone number"],
    ["800-555-1234", "is a toll-free number, not the shipper's own number"],
    ["900-555-1234", "is a premium-rate number, not the shipper's own number"],
    ["+61 1300 123 456", "is a shared-cost number, not the shipper's own number"],
    ["+44 7640 123456", "is a pager number, not the shipper's own number"],
    ["+44 55 1234 5678", "is a universal access number, not the shipper's own number"],
    ["+44 300 123 4567", "is a universal access number, not the shipper's own number"],
  ])("refuses %s: %s", (text, problem) => {
    expect(checkPhone(text)).toEqual({ problem });
  });

  it("compares an email case-insensitively, local part included", () => {
    expect(emailMatchKey("Jane.Doe@Example.COM")).toBe("jane.doe@example.com");
  });
  it("knows disposable domains from the maintained list, whatever their case", () => {
    expect(isDisposableEmail("x@mailinator.com")).toBe(true);
    expect(isDisposableEmail("x@MAILINATOR.com")).toBe(true);
    expect(isDisposableEmail("x@example.com")).toBe(false);
    expect(isDisposableEmail("mailinator.com@example.com")).toBe(false);
    expect(isDisposableEmail("x@inbox.mailinator.com")).toBe(true);
    expect(isDisposableEmail("x@mailinator.com.example.org")).toBe(false);
    expect(isDisposableEmail("x@com")).toBe(false);
  });

  it.each(["1HGCM82633A004352", "11111111111111111", "1M8GDM9AXKP042788", "5YJSA1DG9DFP14705"])(
    "accepts the VIN %s (its check digit holds)",
    (vin) => {
      expect(isValidVin(vin)).toBe(true);
    },
  );
  it.each([
    ["a wrong check digit", "1HGCM82633A004353"],
    ["an O", "1HGCM82633A00435O"],
    ["an I", "1HGCM8263IA004352"],
    ["a Q", "1HGCM8263QA004352"],
    ["16 characters", "1HGCM82633A00435"],
    ["18 characters", "1HGCM82633A0043521"],
    ["lower case", "1hgcm82633a004352"],
  ])("refuses a VIN with %s", (_what, vin) => {
    expect(isValidVin(vin)).toBe(false);
  });
  it("computes the check digit, X for 10, and nothing for characters a VIN cannot hold", () => {
    expect(vinCheckDigit("1M8GDM9A_KP042788")).toBeUndefined();
    expect(vinCheckDigit("1M8GDM9AXKP042788")).toBe("X");
    expect(vinCheckDigit("1HGCM82633A004352")).toBe("3");
  });
});

describe("the intake rules document", () => {
  it("defaults to no restriction", () => {
    expect(parseIntakeRules({})).toEqual({ rules: DEFAULT_INTAKE_RULES, violations: [] });
    expect(withDefaults(null)).toEqual(DEFAULT_INTAKE_RULES);
    expect(withDefaults({ caps: { day: 5 } }).caps).toEqual({ day: 5, week: null, month: null });
  });

  it("reads a full document as sent", () => {
    const doc = {
      paused: true,
      paused_reason: "Holidays",
      origin_states: ["FL", "GA"],
      destination_states: ["TX"],
      overseas_types: ["DOMESTIC"],
      ship_via: ["OPEN", "ENCLOSED"],
      vehicle_types: ["CAR"],
      max_vehicles: 1,
      require_destination_zip: true,
      ship_date_min_days: 2,
      ship_date_max_days: 2,
      reject_disposable_email: true,
      consent_required: true,
      duplicate_policy: "reject",
      caps: { day: 1, week: 10_000_000, month: 3 },
      schedule: {
        sun: [
          { open: "20:00", close: "24:00" },
          { open: "00:00", close: "06:00" },
        ],
      },
    };
    const { rules, violations } = parseIntakeRules(doc);
    expect(violations).toEqual([]);
    expect(rules).toEqual({
      ...doc,
      schedule: {
        sun: [
          { open: "00:00", close: "06:00" },
          { open: "20:00", close: "24:00" },
        ],
      },
    });
  });

  it.each([
    [{ body: 1 }, "body"],
    [{ caps: { day: 0 } }, "caps.day", "caps.day must be a positive integer (at most 10000000), or null for no cap"],
    [{ caps: { week: 10_000_001 } }, "caps.week"],
    [{ caps: { month: 2.5 } }, "caps.month"],
    [{ caps: { month: "3" } }, "caps.month"],
    [{ caps: { year: 3 } }, "caps.year"],
    [{ caps: [1] }, "caps"],
    [{ origin_states: ["ZZ"] }, "origin_states[0]"],
    [{ origin_states: [] }, "origin_states"],
    [{ origin_states: "FL" }, "origin_states"],
    [{ destination_states: ["TX", "TX"] }, "destination_states[1]"],
    [{ vehicle_types: ["SPACESHIP"] }, "vehicle_types[0]"],
    [{ ship_via: ["open"] }, "ship_via[0]"],
    [{ overseas_types: ["OVERSEAS"] }, "overseas_types[0]"],
    [{ max_vehicles: 0 }, "max_vehicles"],
    [{ max_vehicles: 21 }, "max_vehicles"],
    [{ ship_date_min_days: -1 }, "ship_date_min_days"],
    [{ ship_date_max_days: 731 }, "ship_date_max_days"],
    [{ ship_date_min_days: 5, ship_date_max_days: 4 }, "ship_date_min_days"],
    [{ duplicate_policy: "ignore" }, "duplicate_policy"],
    [{ paused: "yes" }, "paused"],
    [{ paused_reason: "why" }, "paused_reason"],
    [{ paused: true, paused_reason: "x".repeat(501) }, "paused_reason"],
    [{ require_destination_zip: 1 }, "require_destination_zip"],
    [{ colour: "red" }, "colour"],
    [{ schedule: [] }, "schedule"],
    [{ schedule: {} }, "schedule"],
    [{ schedule: { mon: [] } }, "schedule"],
    [{ schedule: { monday: [{ open: "08:00", close: "09:00" }] } }, "schedule.monday"],
    [{ schedule: { mon: "08:00" } }, "schedule.mon"],
    [{ schedule: { mon: [{ open: "8:00", close: "09:00" }] } }, "schedule.mon[0].open"],
    [{ schedule: { mon: [{ open: "24:00", close: "24:00" }] } }, "schedule.mon[0].open"],
    [{ schedule: { mon: [{ open: "08:00", close: "24:01" }] } }, "schedule.mon[0].close"],
    [{ schedule: { mon: [{ open: "09:00", close: "09:00" }] } }, "schedule.mon[0].close"],
    [
      {
        schedule: {
          mon: [
            { open: "08:00", close: "12:00" },
            { open: "11:59", close: "13:00" },
          ],
        },
      },
      "schedule.mon[1]",
    ],
  ])("names the bad member of %j", (input, field, message?: string) => {
    const { rules, violations } = parseIntakeRules(input);
    expect(rules).toBeUndefined();
    expect(violations.map((v) => v.field)).toEqual([field]);
    if (message) expect(violations[0]?.message).toBe(message);
  });

  it.each([
    [1, "body", "invalid_type", "the intake rules must be a JSON object"],
    [null, "body", "invalid_type", "the intake rules must be a JSON object"],
    [[], "body", "invalid_type", "the intake rules must be a JSON object"],
    [{ caps: [1] }, "caps", "invalid_type", "caps must be an object of day, week and month"],
    [{ caps: { year: 3 } }, "caps.year", "unknown_field", "caps.year is not a cap window (day, week, month)"],
    [
      { origin_states: ["ZZ"] },
      "origin_states[0]",
      "invalid_enum",
      `origin_states[0] must be one of: ${STATE_CODES.join(", ")}`,
    ],
    [
      { origin_states: [] },
      "origin_states",
      "too_few_items",
      "origin_states must list at least one value, or be null for no restriction",
    ],
    [{ origin_states: "FL" }, "origin_states", "invalid_type", "origin_states must be null (no restriction) or a list"],
    [
      { destination_states: ["TX", "TX"] },
      "destination_states[1]",
      "duplicate",
      "destination_states[1] TX is listed twice",
    ],
    [{ max_vehicles: 0 }, "max_vehicles", "out_of_range", "max_vehicles must be from 1 to 20"],
    [
      { ship_date_min_days: 5, ship_date_max_days: 4 },
      "ship_date_min_days",
      "out_of_range",
      "ship_date_min_days must not be above ship_date_max_days",
    ],
    [{ duplicate_policy: "x" }, "duplicate_policy", "invalid_enum", "duplicate_policy must be one of: flag, reject"],
    [{ paused: "yes" }, "paused", "invalid_type", "paused must be true or false"],
    [{ paused_reason: "why" }, "paused_reason", "invalid", "paused_reason is only kept while paused is true"],
    [{ colour: 1 }, "colour", "unknown_field", "colour is not an intake rule"],
    [{ schedule: [] }, "schedule", "invalid_type", "schedule must be null (always open) or an object of weekdays"],
    [
      { schedule: {} },
      "schedule",
      "too_few_items",
      "schedule must open at least once a week (to stop intake, set paused)",
    ],
    [
      { schedule: { monday: [] } },
      "schedule.monday",
      "unknown_field",
      "schedule.monday: days are mon, tue, wed, thu, fri, sat, sun",
    ],
    [{ schedule: { mon: "x" } }, "schedule.mon", "invalid_type", "schedule.mon must be a list of {open, close}"],
    [
      { schedule: { mon: [{ open: "09:00", close: "09:00" }] } },
      "schedule.mon[0].close",
      "out_of_range",
      "schedule.mon[0].close must be after its open (09:00)",
    ],
    [
      {
        schedule: {
          mon: [
            { open: "08:00", close: "12:00" },
            { open: "11:00", close: "13:00" },
          ],
        },
      },
      "schedule.mon[1]",
      "overlap",
      "schedule.mon[1] overlaps another opening of mon",
    ],
  ])("words the refusal of %j", (input, field, code, message) => {
    expect(parseIntakeRules(input).violations).toEqual([{ field, code, message }]);
  });

  it("refuses an unknown member of an opening, and ignores what a GET answers beside the rules", () => {
    expect(parseIntakeRules({ schedule: { mon: [{ open: "08:00", close: "09:00", x: 1 }] } }).violations).toEqual([
      { field: "schedule.mon[0].x", code: "unknown_field", message: "schedule.mon[0].x is not open or close" },
    ]);
    const roundTrip = parseIntakeRules({ ...DEFAULT_INTAKE_RULES, version: 3, updated_at: null, cap_usage: {} });
    expect(roundTrip).toEqual({ rules: DEFAULT_INTAKE_RULES, violations: [] });
  });

  it("tells a change from a repeat whatever the order of keys", () => {
    const a = withDefaults({ caps: { week: 5, day: 1 }, origin_states: ["FL"] });
    const b = withDefaults({ origin_states: ["FL"], caps: { day: 1, week: 5 } });
    expect(canonicalRules(a)).toBe(canonicalRules(b));
    expect(canonicalRules(a)).not.toBe(canonicalRules(withDefaults({ caps: { week: 5, day: 2 } })));
    expect(canonicalRules(a)).not.toBe(canonicalRules({ ...a, origin_states: ["GA"] }));
  });

  it("words bad opening times with their bounds", () => {
    expect(parseIntakeRules({ schedule: { mon: [{ open: "8:00", close: "9:00" }] } }).violations).toEqual([
      {
        field: "schedule.mon[0].open",
        code: "invalid_format",
        message: "schedule.mon[0].open must be a time HH:MM (00:00–23:59)",
      },
      {
        field: "schedule.mon[0].close",
        code: "invalid_format",
        message: "schedule.mon[0].close must be a time HH:MM (00:01–24:00)",
      },
    ]);
  });

  it("accepts openings that touch, and the whole day", () => {
    const { violations } = parseIntakeRules({
      schedule: {
        mon: [
          { open: "08:00", close: "12:00" },
          { open: "12:00", close: "13:00" },
        ],
        tue: [{ open: "00:00", close: "24:00" }],
      },
    });
    expect(violations).toEqual([]);
    expect(minutesOf("24:00")).toBe(1440);
    expect(minutesOf("07:45")).toBe(465);
  });
});

const car = {
  year: 2020,
  make: "Ford",
  model: "F-150",
  type: "CAR" as const,
  tariff: 1,
  deposit: 0,
  vehicleRun: null,
  vin: null,
};
const lead: NewLead = {
  externalId: "x",
  firstName: "A",
  lastName: "B",
  email: "a@example.com",
  phoneNumber: "(212) 555-0142",
  phoneE164: "+12125550142",
  companyName: null,
  noteFromShipper: null,
  estimatedShipDate: "2026-12-20",
  overseasType: "DOMESTIC",
  shipVia: "OPEN",
  origin: { zip: "33101", city: "Miami", stateCode: "FL", stateId: 10 },
  destination: { zip: "75201", city: "Dallas", stateCode: "TX", stateId: 44 },
  vehicles: [car],
  subId: null,
  sourceUrl: null,
  consent: null,
};
const rules = (patch: Partial<IntakeRules>): IntakeRules => ({ ...DEFAULT_INTAKE_RULES, ...patch });
const ctx = { shipDateInDays: 10, disposableEmail: false };
const codes = (l: NewLead, r: IntakeRules, c = ctx) => criteriaBreaches(l, r, c).map((b) => `${b.field}:${b.code}`);

describe("the intake pipeline (src/intake/pipeline.ts)", () => {
  const stages = intakePipeline({
    validate: () => ({ lead: undefined, violations: [], warnings: [], warningsTruncated: 0 }),
    rulesNow: async () => ({ rules: withDefaults({}), at: new Date() }),
    checkOpen: () => {},
    checkCriteria: () => {},
    guardFor: () => ({ matchPhone: true, matchEmail: true, windowDays: 30, rejectDuplicates: false, caps: [] }),
  });

  it("runs its stages in order, intake_guard last and in the database", () => {
    expect(stages.map((s) => s.name)).toEqual(["fields", "sandbox", "pause_and_schedule", "criteria", "intake_guard"]);
    expect(stages.filter((s) => s.runsIn === "database").map((s) => s.name)).toEqual(["intake_guard"]);
  });

  it("names every rule of the rule table in a stage, and only those, in the table's order", () => {
    const named = stages.flatMap((s) => s.rules);
    expect(named.sort()).toEqual(INTAKE_RULES_TABLE.map((r) => r.code).sort());
    // A criterion (a row with a check) is the criteria stage's; disposable_email is also a warning of the fields'.
    const stageOf = (row: (typeof INTAKE_RULES_TABLE)[number]) =>
      stages.findIndex((s) => s.rules.includes(row.code) && (s.name === "criteria") === (row.check !== undefined));
    const order = INTAKE_RULES_TABLE.map(stageOf);
    expect(order).not.toContain(-1);
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe("the criteria of the rule table", () => {
  it("restrict nothing by default", () => {
    expect(codes({ ...lead, vehicles: Array.from({ length: 20 }, () => car) }, DEFAULT_INTAKE_RULES)).toEqual([]);
    expect(codes(lead, DEFAULT_INTAKE_RULES, { shipDateInDays: -1, disposableEmail: true })).toEqual([]);
  });

  it.each([
    [{ origin_states: ["GA"] }, lead, "origin_zip:origin_state_not_accepted"],
    [{ destination_states: ["CA"] }, lead, "destination_zip:destination_state_not_accepted"],
    [{ overseas_types: ["FOREIGN"] }, lead, "overseas_type:overseas_type_not_accepted"],
    [{ ship_via: ["ENCLOSED"] }, lead, "ship_via:ship_via_not_accepted"],
    [{ vehicle_types: ["SUV"] }, lead, "vehicles[0].type:vehicle_type_not_accepted"],
    [{ max_vehicles: 1 }, { ...lead, vehicles: [car, car] }, "vehicles:too_many_vehicles"],
    [{ require_destination_zip: true }, { ...lead, destination: null }, "destination_zip:destination_zip_required"],
    [{ consent_required: true }, lead, "consent:consent_required"],
  ] as const)("%j refuses what it should", (patch, l, expected) => {
    expect(codes(l as NewLead, rules(patch as Partial<IntakeRules>))).toEqual([expected]);
  });

  it.each([
    [{ origin_states: ["GA", "FL"] }, lead],
    [{ destination_states: ["TX"] }, lead],
    [{ destination_states: ["CA"] }, { ...lead, destination: null }],
    [{ overseas_types: ["DOMESTIC"] }, lead],
    [{ ship_via: ["OPEN"] }, lead],
    [{ vehicle_types: ["CAR"] }, lead],
    [{ max_vehicles: 2 }, { ...lead, vehicles: [car, car] }],
    [{ require_destination_zip: true }, lead],
    [{ consent_required: true }, { ...lead, consent: { trustedFormCertUrl: "u", jornayaLeadId: null } }],
    [{ consent_required: true }, { ...lead, consent: { trustedFormCertUrl: null, jornayaLeadId: "j" } }],
  ] as const)("%j lets through what it should", (patch, l) => {
    expect(codes(l as NewLead, rules(patch as Partial<IntakeRules>))).toEqual([]);
  });

  it.each([
    [{ origin_states: ["GA", "AL"] }, lead, "origin state FL is not accepted; accepted: GA, AL"],
    [{ destination_states: ["CA", "NV"] }, lead, "destination state TX is not accepted; accepted: CA, NV"],
    [{ overseas_types: ["FOREIGN"] }, lead, "overseas_type DOMESTIC is not accepted; accepted: FOREIGN"],
    [{ ship_via: ["ENCLOSED", "DRIVE_AWAY"] }, lead, "ship_via OPEN is not accepted; accepted: ENCLOSED, DRIVE_AWAY"],
    [{ vehicle_types: ["SUV", "VAN"] }, lead, "vehicles[0].type CAR is not accepted; accepted: SUV, VAN"],
    [{ require_destination_zip: true }, { ...lead, destination: null }, "destination_zip is required"],
    [{ consent_required: true }, lead, "consent with a trusted_form_cert_url or a jornaya_lead_id is required"],
  ] as const)("words %j's refusal", (patch, l, message) => {
    expect(criteriaBreaches(l as NewLead, rules(patch as Partial<IntakeRules>), ctx).map((b) => b.message)).toEqual([
      message,
    ]);
  });

  it("words the ship-date and disposable-email refusals", () => {
    const r = rules({ ship_date_min_days: 3, ship_date_max_days: 30, reject_disposable_email: true });
    const near = criteriaBreaches(lead, r, { shipDateInDays: 1, disposableEmail: true }).map((b) => b.message);
    expect(near).toEqual([
      "estimated_ship_date must be at least 3 days from today",
      "email uses a disposable address domain, which is not accepted",
    ]);
    expect(criteriaBreaches(lead, r, { shipDateInDays: 31, disposableEmail: false }).map((b) => b.message)).toEqual([
      "estimated_ship_date must be at most 30 days from today",
    ]);
  });

  it("judges the ship date at its bounds", () => {
    const r = rules({ ship_date_min_days: 3, ship_date_max_days: 30 });
    expect(codes(lead, r, { ...ctx, shipDateInDays: 3 })).toEqual([]);
    expect(codes(lead, r, { ...ctx, shipDateInDays: 30 })).toEqual([]);
    expect(codes(lead, r, { ...ctx, shipDateInDays: 2 })).toEqual(["estimated_ship_date:ship_date_too_soon"]);
    expect(codes(lead, r, { ...ctx, shipDateInDays: 31 })).toEqual(["estimated_ship_date:ship_date_too_far"]);
    expect(codes(lead, DEFAULT_INTAKE_RULES, { ...ctx, shipDateInDays: 366 })).toEqual([
      "estimated_ship_date:ship_date_too_far",
    ]);
  });

  it("refuses a disposable email only when the rules say so", () => {
    const c = { ...ctx, disposableEmail: true };
    expect(codes(lead, rules({ reject_disposable_email: true }), c)).toEqual(["email:disposable_email"]);
    expect(codes(lead, rules({ reject_disposable_email: true }), ctx)).toEqual([]);
  });

  it("lists every broken rule, one per vehicle, in table order, with sentences naming the values", () => {
    const r = rules({ origin_states: ["GA"], vehicle_types: ["SUV"], max_vehicles: 1 });
    const breaches = criteriaBreaches({ ...lead, vehicles: [car, { ...car, type: "VAN" }] }, r, ctx);
    expect(breaches.map((b) => `${b.field}:${b.code}`)).toEqual([
      "origin_zip:origin_state_not_accepted",
      "vehicles[0].type:vehicle_type_not_accepted",
      "vehicles[1].type:vehicle_type_not_accepted",
      "vehicles:too_many_vehicles",
    ]);
    expect(breaches[0]?.message).toBe("origin state FL is not accepted; accepted: GA");
    expect(breaches[2]?.message).toBe("vehicles[1].type VAN is not accepted; accepted: SUV");
    expect(breaches[3]?.message).toBe("2 vehicles are more than the 1 accepted");
  });

  it("has one code per criterion and a description for every row", () => {
    expect(CRITERIA_CODES).toEqual([
      "origin_state_not_accepted",
      "destination_state_not_accepted",
      "overseas_type_not_accepted",
      "ship_via_not_accepted",
      "vehicle_type_not_accepted",
      "too_many_vehicles",
      "destination_zip_required",
      "ship_date_too_soon",
      "ship_date_too_far",
      "disposable_email",
      "consent_required",
    ]);
    for (const row of INTAKE_RULES_TABLE) expect(row.description.length).toBeGreaterThan(20);
  });
});

describe("the broker's calendar (America/New_York)", () => {
  it("knows today and how many days away a date is", () => {
    const evening = new Date("2026-11-26T03:00:00Z"); // 22:00 on the 25th in New York
    expect(businessToday(evening, NY)).toBe("2026-11-25");
    expect(daysUntil("2026-11-24", evening, NY)).toBe(-1);
    expect(daysUntil("2026-11-25", evening, NY)).toBe(0);
    expect(daysUntil("2026-12-25", evening, NY)).toBe(30);
  });

  it("names the day of any instant in any zone as Intl does, at a day's first and last millisecond too", () => {
    // The day is remembered per zone (src/intake/business-time.ts): instants in any order, around
    // midnight, across daylight-saving changes (New York, Lord Howe's half hour, Havana's and
    // Santiago's at midnight, Nepal's quarter hour) must still get their own day.
    const zones = [
      NY,
      "UTC",
      "Australia/Lord_Howe",
      "America/Havana",
      "America/Santiago",
      "Asia/Kathmandu",
      "America/St_Johns",
    ];
    const formats = new Map(
      zones.map((z) => [
        z,
        new Intl.DateTimeFormat("en-CA", { timeZone: z, year: "numeric", month: "2-digit", day: "2-digit" }),
      ]),
    );
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) }),
      // Around a day's edge in UTC-4/-5 (New York) and the others': whole hours ± 1 ms.
      fc
        .tuple(fc.integer({ min: 0, max: 30 * 24 }), fc.constantFrom(-1, 0, 1))
        .map(([h, d]) => Date.UTC(2026, 2, 1) + h * 3_600_000 + d),
    );
    const dayOf = (zone: string, t: number) => formats.get(zone)?.format(t);
    // Time going forward a minute at a time (every zone's date changes on one), each minute and
    // the millisecond before it, through the spring and autumn changes of both hemispheres, and
    // St John's autumn of 2010, when its clocks went back at 00:01 (02:31 UTC, not a quarter hour).
    for (const zone of zones) {
      for (const [from, to] of [
        [Date.UTC(2026, 2, 6), Date.UTC(2026, 2, 10)],
        [Date.UTC(2026, 3, 2), Date.UTC(2026, 3, 7)],
        [Date.UTC(2026, 8, 4), Date.UTC(2026, 8, 8)],
        [Date.UTC(2026, 9, 1), Date.UTC(2026, 9, 6)],
        [Date.UTC(2026, 10, 1), Date.UTC(2026, 10, 3)],
        [Date.UTC(2010, 10, 6), Date.UTC(2010, 10, 8)],
      ] as const) {
        for (let t = from; t < to; t += 60_000) {
          for (const at of [t - 1, t]) {
            if (businessToday(new Date(at), zone) !== dayOf(zone, at)) {
              expect(businessToday(new Date(at), zone), `${zone} ${new Date(at).toISOString()}`).toBe(dayOf(zone, at));
            }
          }
        }
      }
    }
    // And instants in any order.
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...zones), instant), { minLength: 1, maxLength: 50 }), (calls) => {
        for (const [zone, t] of calls) {
          expect(businessToday(new Date(t), zone)).toBe(dayOf(zone, t));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("starts and resets the cap windows at midnight, on Monday and on the 1st", () => {
    const wednesday = new Date("2026-11-25T15:00:00Z");
    expect(capWindow("day", wednesday, NY)).toEqual({
      start: new Date("2026-11-25T05:00:00Z"),
      resetsAt: new Date("2026-11-26T05:00:00Z"),
    });
    expect(capWindow("week", wednesday, NY)).toEqual({
      start: new Date("2026-11-23T05:00:00Z"),
      resetsAt: new Date("2026-11-30T05:00:00Z"),
    });
    expect(capWindow("month", wednesday, NY)).toEqual({
      start: new Date("2026-11-01T04:00:00Z"), // still daylight time on Nov 1 at midnight
      resetsAt: new Date("2026-12-01T05:00:00Z"),
    });
    const sunday = new Date("2026-11-29T23:00:00Z");
    expect(capWindow("week", sunday, NY).resetsAt).toEqual(new Date("2026-11-30T05:00:00Z"));
  });

  const weekdays = {
    mon: [{ open: "08:00", close: "20:00" }],
    tue: [{ open: "08:00", close: "20:00" }],
    wed: [{ open: "08:00", close: "20:00" }],
    thu: [{ open: "08:00", close: "20:00" }],
    fri: [{ open: "08:00", close: "20:00" }],
  };
  it("is open inside an opening and says when it closes; null is always open", () => {
    expect(scheduleState(null, new Date(), NY)).toEqual({ open: true, opensAt: null, closesAt: null });
    expect(scheduleState(weekdays, new Date("2026-11-25T13:00:00Z"), NY)).toEqual({
      open: true,
      opensAt: null,
      closesAt: new Date("2026-11-26T01:00:00Z"),
    });
    expect(scheduleState(weekdays, new Date("2026-11-26T01:00:00Z"), NY).open).toBe(false); // 20:00 sharp
    expect(scheduleState(weekdays, new Date("2026-11-25T12:59:59Z"), NY).open).toBe(false);
  });
  it("points a closed Saturday at Monday 08:00, across the weekend and a daylight-saving change", () => {
    expect(scheduleState(weekdays, new Date("2026-11-28T18:00:00Z"), NY)).toEqual({
      open: false,
      opensAt: new Date("2026-11-30T13:00:00Z"),
      closesAt: null,
    });
    // The weekend DST ends (Sunday 2026-11-01): Saturday 12:00 EDT → Monday 08:00 EST.
    expect(scheduleState(weekdays, new Date("2026-10-31T16:00:00Z"), NY).opensAt).toEqual(
      new Date("2026-11-02T13:00:00Z"),
    );
  });
  it("joins openings that meet across midnight, and says when a schedule never opens", () => {
    const night = { mon: [{ open: "20:00", close: "24:00" }], tue: [{ open: "00:00", close: "06:00" }] };
    expect(scheduleState(night, new Date("2026-11-24T04:00:00Z"), NY)).toEqual({
      open: true,
      opensAt: null,
      closesAt: new Date("2026-11-24T11:00:00Z"),
    });
    expect(scheduleState({}, new Date(), NY)).toEqual({ open: false, opensAt: null, closesAt: null });
    const day = [{ open: "00:00", close: "24:00" }];
    const always = { mon: day, tue: day, wed: day, thu: day, fri: day, sat: day, sun: day };
    expect(scheduleState(always, new Date("2026-11-25T15:00:00Z"), NY)).toEqual({
      open: true,
      opensAt: null,
      closesAt: null,
    });
  });
  it("rounds a wait up to whole seconds, at least one", () => {
    const now = new Date(0);
    expect(secondsUntil(new Date(1500), now)).toBe(2);
    expect(secondsUntil(new Date(0), now)).toBe(1);
    expect(secondsUntil(new Date(-5000), now)).toBe(1);
  });
});

describe("the intake refusals", () => {
  const now = new Date("2026-11-25T15:00:00Z");
  it("words each refusal for people", () => {
    expect(intakePaused(null).message).toBe("intake is paused for this provider");
    expect(intakeClosed(new Date("2026-11-30T13:00:00Z"), now).message).toBe(
      "intake is closed until 2026-11-30T13:00:00.000Z",
    );
    expect(intakeClosed(null, now).message).toBe("intake is closed: the schedule has no opening");
    expect(capReached("day", new Date("2026-11-26T05:00:00Z"), now).message).toBe(
      "the day cap of leads is reached; it resets at 2026-11-26T05:00:00.000Z",
    );
    const dup = duplicateLead({
      matchedOn: ["phone_number", "email"],
      firstSeenAt: now,
      sameProvider: false,
      original: null,
    });
    expect(dup.message).toBe(
      "the lead duplicates another provider's lead first seen on the business day starting 2026-11-25T15:00:00.000Z (same phone_number and email); nothing was stored",
    );
    expect(duplicateLead({ matchedOn: ["email"], firstSeenAt: now, sameProvider: true, original: null }).message).toBe(
      "the lead duplicates one first seen at 2026-11-25T15:00:00.000Z (same email); nothing was stored",
    );
    expect(dup.violations).toEqual([
      {
        field: "phone_number",
        code: "duplicate_lead",
        message: "phone_number matches a lead created within the duplicate window",
      },
      { field: "email", code: "duplicate_lead", message: "email matches a lead created within the duplicate window" },
    ]);
    expect(dup.duplicate?.matchedOn).toEqual(["phone_number", "email"]);
    expect(intakeClosed(null, now).opensAt).toBeNull();
    expect(capReached("day", new Date("2026-11-26T05:00:00Z"), now).resetsAt).toEqual(new Date("2026-11-26T05:00:00Z"));
  });

  it("words each refusal with its code, kind and extras", () => {
    expect(intakePaused("Holidays")).toMatchObject({
      kind: "rate_limited",
      code: "intake_paused",
      pausedReason: "Holidays",
    });
    expect(intakePaused("Holidays").message).toBe("intake is paused for this provider: Holidays");
    expect(intakePaused(null).retryAfterSeconds).toBeUndefined();
    const closed = intakeClosed(new Date("2026-11-25T15:01:00Z"), now);
    expect(closed).toMatchObject({ code: "intake_closed", retryAfterSeconds: 60 });
    expect(intakeClosed(null, now).retryAfterSeconds).toBeUndefined();
    const cap = capReached("week", new Date("2026-11-30T05:00:00Z"), now);
    expect(cap).toMatchObject({
      kind: "rate_limited",
      code: "cap_reached",
      window: "week",
      retryAfterSeconds: 396_000,
    });
    const outside = outsideCriteria([{ field: "f", code: "c", message: "m" }]);
    expect(outside).toMatchObject({ kind: "invalid_argument", code: "outside_criteria", message: "m" });
    expect(outside.violations).toEqual([{ field: "f", code: "c", message: "m" }]);
    expect(
      outsideCriteria([
        { field: "a", code: "x", message: "1" },
        { field: "b", code: "y", message: "2" },
      ]).message,
    ).toBe("the lead breaks 2 intake rules: x, y");
    const dup = duplicateLead({ matchedOn: ["email"], firstSeenAt: now, sameProvider: false, original: null });
    expect(dup).toMatchObject({ kind: "invalid_argument", code: "duplicate_lead" });
    expect(dup.violations.map((v) => v.field)).toEqual(["email"]);
  });
});

describe("what a provider is shown of a duplicate", () => {
  const original = { id: 7, providerId: 3, orderNumber: "LP-X", externalId: "theirs" };
  it("names the original only when it is the provider's own", () => {
    const other = { matchedOn: ["phone_number"], firstSeenAt: new Date(0), sameProvider: false, original };
    expect(providerDuplicate(other, NY).original).toBeNull();
    expect(providerDuplicate({ ...other, sameProvider: true }, NY).original).toEqual(original);
    expect(isBillable({ duplicate: null })).toBe(true);
    expect(isBillable({ duplicate: other })).toBe(false);
  });
  it("dates another provider's original to the start of its business day, the provider's own to the millisecond", () => {
    // 2026-11-25 01:30 UTC is still the 24th in New York (EST, UTC−5) and already the 25th in Tokyo.
    const seen = new Date("2026-11-25T01:30:12.345Z");
    const other = { matchedOn: ["email"], firstSeenAt: seen, sameProvider: false, original };
    expect(providerDuplicate(other, NY)).toEqual({
      ...other,
      firstSeenAt: new Date("2026-11-24T05:00:00Z"),
      original: null,
    });
    expect(providerDuplicate(other, "Asia/Tokyo").firstSeenAt).toEqual(new Date("2026-11-24T15:00:00Z"));
    expect(providerDuplicate(other, "UTC").firstSeenAt).toEqual(new Date("2026-11-25T00:00:00Z"));
    // A day of summer time in New York starts at 04:00 UTC.
    const july = { ...other, firstSeenAt: new Date("2026-07-04T23:59:59.999Z") };
    expect(providerDuplicate(july, NY).firstSeenAt).toEqual(new Date("2026-07-04T04:00:00Z"));
    const own = { ...other, sameProvider: true };
    expect(providerDuplicate(own, NY)).toEqual(own);
    // The stored record is not changed: administrators still read it exactly.
    expect(other.firstSeenAt).toEqual(seen);
  });

  it("reads intake_guard's record", () => {
    expect(duplicateFromRow(null)).toBeNull();
    expect(
      duplicateFromRow({
        matched_on: ["email"],
        first_seen_at: "2026-11-25T15:00:00Z",
        same_provider: true,
        original: { id: 7, provider_id: 3, order_number: "LP-X", external_id: "theirs" },
      }),
    ).toEqual({ matchedOn: ["email"], firstSeenAt: new Date("2026-11-25T15:00:00Z"), sameProvider: true, original });
  });
});

describe("intake_guard (the duplicate check's SQL half, on PGlite)", () => {
  let handle: DatabaseHandle;
  const guard = async (p: {
    provider: number;
    livemode?: boolean;
    externalId?: string;
    phone?: string | null;
    email?: string | null;
    windowDays?: number;
    reject?: boolean;
    caps?: Array<[string, Date, number]>;
  }) => {
    const caps = p.caps ?? [];
    const { rows } = await sql<{
      refusal: string | null;
      cap_windows: string[] | null;
      duplicate: Record<string, unknown> | null;
    }>`select * from intake_guard(${p.provider}::bigint, ${p.livemode ?? true}::boolean, ${p.externalId ?? "new"}::text,
        ${p.phone ?? null}::text, ${p.email ?? null}::text, ${p.windowDays ?? 30}::integer, ${p.reject ?? false}::boolean,
        ${caps.map((c) => c[0])}::text[], ${caps.map((c) => c[1])}::timestamptz[], ${caps.map((c) => c[2])}::integer[])`.execute(
      handle.db,
    );
    return rows[0] as NonNullable<(typeof rows)[0]>;
  };
  const insert = (provider: number, ext: string, phone: string, email: string, daysAgo: number, livemode = true) =>
    sql`insert into leads (provider_id, livemode, external_id, state, lead_status, first_name, last_name, email,
         phone_number, phone_e164, email_match, estimated_ship_date, overseas_type, ship_via, origin_zip, origin_city,
         origin_state_id, origin_state_code, created_at, updated_at, state_changed_at)
       values (${provider}::bigint, ${livemode}::boolean, ${ext}, 'LEAD', 'LEAD', 'A', 'B', ${email}, ${phone}, ${phone},
         ${email}, '2026-12-01', 'DOMESTIC', 'OPEN', '10001', 'NY', 33, 'NY',
         now() - make_interval(days => ${daysAgo}::integer), now(), now())`.execute(handle.db);

  beforeAll(async () => {
    handle = await openUnitDatabase();
    await sql`insert into providers (name, rate_limit_per_minute, rate_limit_per_day, created_at, updated_at)
      values ('one', 60, 2000, now(), now()), ('two', 60, 2000, now(), now())`.execute(handle.db);
    await insert(1, "old", "+12125550100", "old@example.com", 40);
    await insert(1, "first", "+12125550101", "first@example.com", 10);
    await insert(2, "second", "+12125550101", "second@example.com", 5);
    await insert(2, "mailer", "+12125550199", "first@example.com", 12);
    await insert(1, "test-one", "+12125550102", "t@example.com", 1, false);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("finds nothing for new keys, or beyond the window", async () => {
    expect(await guard({ provider: 2, phone: "+12125550177", email: "n@example.com" })).toEqual({
      refusal: null,
      cap_windows: null,
      duplicate: null,
    });
    expect((await guard({ provider: 2, phone: "+12125550100" })).duplicate).toBeNull();
    expect((await guard({ provider: 2, phone: "+12125550100", windowDays: 41 })).duplicate).not.toBeNull();
  });

  it("names the earliest match in the window and every field that matched", async () => {
    const found = await guard({ provider: 2, phone: "+12125550101", email: "first@example.com" });
    expect(found?.refusal).toBeNull();
    expect(found?.duplicate).toMatchObject({
      matched_on: ["phone_number", "email"],
      same_provider: true,
      original: { provider_id: 2, external_id: "mailer" }, // by email 12 days ago, before "first" (10)
    });
    const other = await guard({ provider: 2, phone: "+12125550101" });
    expect(other?.duplicate).toMatchObject({
      same_provider: false,
      original: { provider_id: 1, external_id: "first" },
    });
    const byPhone = await guard({ provider: 1, phone: "+12125550101" });
    expect(byPhone?.duplicate).toMatchObject({ matched_on: ["phone_number"], same_provider: true });
    expect(byPhone.duplicate).toMatchObject({ original: { external_id: "first" } });
  });

  it("never matches a lead against the provider's own lead with the same external_id", async () => {
    expect((await guard({ provider: 1, externalId: "first", phone: "+12125550101" })).duplicate).toMatchObject({
      original: { external_id: "second" },
    });
    expect(
      (await guard({ provider: 1, externalId: "old", phone: "+12125550100", windowDays: 60 })).duplicate,
    ).toBeNull();
  });

  it("refuses under reject, and keeps test leads to their own provider", async () => {
    expect((await guard({ provider: 2, phone: "+12125550101", reject: true }))?.refusal).toBe("duplicate");
    expect((await guard({ provider: 2, livemode: false, phone: "+12125550102" })).duplicate).toBeNull();
    expect((await guard({ provider: 1, livemode: false, phone: "+12125550102" })).duplicate).not.toBeNull();
    expect((await guard({ provider: 1, livemode: false, phone: "+12125550101" })).duplicate).toBeNull();
  });

  it("reports each full cap window, counting the provider's leads of the mode since its start", async () => {
    const since = new Date(Date.now() - 11 * 86_400_000);
    expect(await guard({ provider: 1, caps: [["month", since, 1]] })).toMatchObject({
      refusal: "cap_reached",
      cap_windows: ["month"],
    });
    expect((await guard({ provider: 1, caps: [["month", since, 2]] })).refusal).toBeNull();
    expect((await guard({ provider: 1, livemode: false, caps: [["day", since, 1]] })).cap_windows).toEqual(["day"]);
    expect(
      (
        await guard({
          provider: 2,
          caps: [
            ["day", new Date(Date.now() - 86_400_000), 5],
            ["week", since, 1],
            ["month", new Date(Date.now() - 30 * 86_400_000), 2],
          ],
        })
      ).cap_windows,
    ).toEqual(["week", "month"]);
  });
});

describe("cap_reached's window when several caps are full", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openUnitDatabase();
  });
  afterAll(async () => {
    await handle?.close();
  });
  const at = (iso: string) =>
    createIntakeService({
      db: handle.db,
      settings: { zone: "America/New_York", duplicateWindowDays: 30, duplicateMatch: ["phone"] },
      now: () => new Date(iso),
    });

  it("names the window that resets last, and the longer of two that reset together", () => {
    // A Wednesday in New York: the day resets tonight, the week on Monday, the month on the 1st.
    const wednesday = at("2026-11-25T17:00:00Z");
    expect(wednesday.capReached(["day", "week"])).toMatchObject({ window: "week" });
    expect(wednesday.capReached(["day", "week", "month"])).toMatchObject({ window: "month" });
    // Sunday noon in New York: the day and the ISO week both reset at Monday's midnight there;
    // the week is named.
    const sunday = at("2026-11-29T17:00:00Z");
    expect(sunday.capReached(["day", "week"])).toMatchObject({
      window: "week",
      resetsAt: new Date("2026-11-30T05:00:00Z"),
    });
    // 31 May 2026 is a Sunday and a month's last day: all three reset together; the month is named.
    expect(at("2026-05-31T16:00:00Z").capReached(["day", "week", "month"])).toMatchObject({
      window: "month",
      resetsAt: new Date("2026-06-01T04:00:00Z"),
    });
    // Sunday 23:30 in New York is Monday 04:30 UTC: still the New York week.
    expect(at("2026-11-30T04:30:00Z").capReached(["day", "week"])).toMatchObject({ window: "week" });
  });
});
