/**
 * Money's pure parts on their own: every row of the price-condition table matching and not
 * matching at its edges, the first rule winning and extra vehicles added whatever matched, the
 * terms parser (defaults, every bad member named, whole cents only), and statement months in the
 * broker's time zone across daylight-saving changes.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.ts";
import type { NewLead, Vehicle } from "../../src/leads/lead.ts";
import { periodOf, shiftMonth, statusAt } from "../../src/money/statement.ts";
import {
  canonicalTerms,
  defaultTerms,
  PRICE_CONDITIONS,
  parseTerms,
  priceOf,
  ruleMatches,
  whenInWords,
} from "../../src/money/terms.ts";

const vehicle = (over: Partial<Vehicle> = {}): Vehicle => ({
  year: 2020,
  make: "Ford",
  model: "F-150",
  type: "PICKUP",
  tariff: 1000,
  deposit: 100,
  vehicleRun: true,
  vin: null,
  ...over,
});
const place = (stateCode: string) => ({ zip: "00000", city: "X", stateCode, stateId: 1 });
const lead = (over: Partial<NewLead> = {}): NewLead => ({
  externalId: "x",
  firstName: "A",
  lastName: "B",
  email: "a@example.com",
  phoneNumber: "+1 212 555 0100",
  phoneE164: "+12125550100",
  companyName: null,
  noteFromShipper: null,
  estimatedShipDate: "2027-01-01",
  overseasType: "DOMESTIC",
  shipVia: "OPEN",
  origin: place("CA"),
  destination: place("NY"),
  vehicles: [vehicle()],
  subId: "fb-spring",
  sourceUrl: null,
  consent: null,
  ...over,
});

describe("the price-condition table", () => {
  const cases: Record<string, Array<[unknown, NewLead, boolean]>> = {
    sub_id: [
      ["fb-", lead(), true],
      ["fb-spring", lead(), true],
      ["fb-", lead({ subId: "fb" }), false],
      ["fb", lead(), false],
      ["fb-spring", lead({ subId: null }), false],
    ],
    origin_states: [
      [["CA", "NY"], lead(), true],
      [["TX"], lead(), false],
    ],
    destination_states: [
      [["NY"], lead(), true],
      [["CA"], lead(), false],
      [["NY"], lead({ destination: null }), false],
    ],
    overseas_type: [
      ["DOMESTIC", lead(), true],
      ["FOREIGN", lead(), false],
    ],
    ship_via: [
      ["OPEN", lead(), true],
      ["ENCLOSED", lead(), false],
    ],
    vehicle_type: [
      ["PICKUP", lead({ vehicles: [vehicle(), vehicle()] }), true],
      ["PICKUP", lead({ vehicles: [vehicle(), vehicle({ type: "CAR" })] }), false],
    ],
    min_vehicles: [
      [2, lead({ vehicles: [vehicle(), vehicle()] }), true],
      [2, lead(), false],
    ],
    vehicle_run: [
      [true, lead(), true],
      [true, lead({ vehicles: [vehicle(), vehicle({ vehicleRun: false })] }), false],
      [false, lead({ vehicles: [vehicle({ vehicleRun: false })] }), true],
      [false, lead({ vehicles: [vehicle({ vehicleRun: null })] }), false],
      [true, lead({ vehicles: [vehicle({ vehicleRun: null })] }), false],
    ],
  };

  it("has a row for every condition, each tested here", () => {
    expect(PRICE_CONDITIONS.map((c) => c.member).sort()).toEqual(Object.keys(cases).sort());
  });

  it.each(PRICE_CONDITIONS.map((c) => [c.member, c] as const))("%s matches as its row says", (member, c) => {
    for (const [value, l, expected] of cases[member] ?? []) {
      expect(c.matches(l, value), `${member} ${JSON.stringify(value)}`).toBe(expected);
      expect(ruleMatches({ [member]: value }, l)).toBe(expected);
    }
  });

  it("matches a rule only when every condition does, and says it in words", () => {
    expect(ruleMatches({ sub_id: "fb-", origin_states: ["CA"] }, lead())).toBe(true);
    expect(ruleMatches({ sub_id: "fb-", origin_states: ["TX"] }, lead())).toBe(false);
    expect(whenInWords({ overseas_type: "FOREIGN", sub_id: "fb-" })).toBe(
      "sub_id starts with fb- and overseas_type is FOREIGN",
    );
  });
});

describe("the price of a lead", () => {
  const terms = {
    ...defaultTerms("USD"),
    default_price_cents: 1500,
    extra_vehicle_cents: 500,
    price_rules: [
      { when: { sub_id: "fb-", overseas_type: "FOREIGN" as const }, price_cents: 2500 },
      { when: { origin_states: ["CA", "NY"], min_vehicles: 2 }, price_cents: 2000 },
      { when: { origin_states: ["CA"] }, price_cents: 1700 },
    ],
  };
  it("takes the first rule that matches, else the default, and adds every vehicle after the first", () => {
    expect(priceOf(terms, lead({ origin: place("TX") }))).toEqual({
      amountCents: 1500,
      baseCents: 1500,
      extraVehiclesCents: 0,
      rule: "default_price_cents",
    });
    expect(priceOf(terms, lead({ vehicles: [vehicle(), vehicle(), vehicle()] }))).toMatchObject({
      amountCents: 3000,
      rule: "price_rules[1]",
    });
    expect(priceOf(terms, lead())).toMatchObject({ amountCents: 1700, rule: "price_rules[2]" });
    expect(
      priceOf(terms, lead({ overseasType: "FOREIGN", shipVia: "SHARED", vehicles: [vehicle(), vehicle()] })),
    ).toMatchObject({ amountCents: 3000, baseCents: 2500, extraVehiclesCents: 500, rule: "price_rules[0]" });
  });
});

describe("reading a terms document", () => {
  it("gives every member left out its default", () => {
    const { terms, violations } = parseTerms({}, "USD");
    expect(violations).toEqual([]);
    expect(terms).toEqual(defaultTerms("USD"));
    expect(parseTerms({ settlement_days: 0, returns: { window_hours: 24 } }, "USD").terms).toMatchObject({
      settlement_days: 0,
      returns: { window_hours: 24, max_rate: 0.15, contest_hours: 48 },
    });
  });

  it("names every bad member, amounts in whole cents only", () => {
    const { terms, violations } = parseTerms(
      {
        currency: "usd",
        default_price_cents: 10.5,
        extra_vehicle_cents: 10_000_001,
        price_rules: [
          { when: { origin_states: ["CA", "XX"], min_vehicles: 21, vehicle_run: "yes" }, price_cents: "12" },
          { when: { sub_id: "has space" }, price_cents: 1, note: "x" },
          "rule",
        ],
        settlement_days: 366,
        returns: { reasons: [], auto_approve: ["other"], contest_hours: 0, extra: 1 },
      },
      "USD",
    );
    expect(terms).toBeUndefined();
    expect(violations.map((v) => v.field)).toEqual([
      "currency",
      "default_price_cents",
      "extra_vehicle_cents",
      "price_rules[0].when.origin_states[1]",
      "price_rules[0].when.min_vehicles",
      "price_rules[0].when.vehicle_run",
      "price_rules[0].price_cents",
      "price_rules[1].note",
      "price_rules[1].when.sub_id",
      "price_rules[2]",
      "settlement_days",
      "returns.extra",
      "returns.reasons",
      "returns.auto_approve[0]",
      "returns.contest_hours",
    ]);
    expect(violations[1]?.message).toBe("default_price_cents must be a whole number of cents (10.5 is not)");
  });

  it("compares documents whatever the order of their keys", () => {
    const a = parseTerms({ default_price_cents: 5, settlement_days: 3 }, "USD").terms;
    const b = parseTerms({ settlement_days: 3, default_price_cents: 5 }, "USD").terms;
    expect(a && b && canonicalTerms(a) === canonicalTerms(b)).toBe(true);
  });
});

describe("statement months", () => {
  it("run from the first to the first in the broker's time zone, across daylight saving", () => {
    const march = periodOf("2026-03", "America/New_York");
    expect(march.start.toISOString()).toBe("2026-03-01T05:00:00.000Z");
    expect(march.end.toISOString()).toBe("2026-04-01T04:00:00.000Z");
    expect(march.closesAt.toISOString()).toBe("2026-04-01T04:05:00.000Z");
    expect(shiftMonth("2026-01", -1)).toBe("2025-12");
    expect(shiftMonth("2026-12", 1)).toBe("2027-01");
    expect(statusAt(march, new Date("2026-04-01T04:04:59Z"))).toBe("open");
    expect(statusAt(march, new Date("2026-04-01T04:05:00Z"))).toBe("closed");
  });
});

describe("money's configuration", () => {
  it("defaults to USD, a settlement run and a returns run a minute and pricing on; lists every bad variable at once", () => {
    expect(loadConfig({}).money).toEqual({
      currency: "USD",
      settlementIntervalMs: 60_000,
      returnsIntervalMs: 60_000,
      enabled: true,
    });
    expect(loadConfig({ LEDGER_CURRENCY: "eur", LEDGER_ENABLED: "false" }).money).toMatchObject({
      currency: "EUR",
      enabled: false,
    });
    let problems: readonly string[] = [];
    try {
      loadConfig({
        LEDGER_CURRENCY: "JPY",
        SETTLEMENT_INTERVAL_SECONDS: "0",
        RETURNS_INTERVAL_SECONDS: "90000",
        LEDGER_ENABLED: "maybe",
      });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems).toEqual([
      'LEDGER_CURRENCY must be an ISO 4217 code of a currency with cents, such as USD (got "JPY")',
      'SETTLEMENT_INTERVAL_SECONDS must be an integer from 1 to 86400 (got "0")',
      'RETURNS_INTERVAL_SECONDS must be an integer from 1 to 86400 (got "90000")',
      'LEDGER_ENABLED must be true or false (got "maybe")',
    ]);
  });
});
