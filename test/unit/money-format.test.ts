/**
 * The UI kit's money (ui/src/money.ts): amounts from whole cents in their currency, rounding
 * nothing away, and a provider's terms in words, each rule's conditions worded exactly as the
 * service publishes them (src/money/terms.ts whenInWords), so the back office and the portal say
 * what the API says.
 */
import { describe, expect, it } from "vitest";
import { PRICE_CONDITIONS, type PriceRuleWhen, whenInWords } from "../../src/money/terms.ts";
import { cents, type RuleWhen, termsSentences, whenWords } from "../../ui/src/money.ts";

describe("cents", () => {
  it("writes whole cents as money with the currency's sign, separators and two decimals", () => {
    expect(cents(0)).toBe("$0.00");
    expect(cents(1)).toBe("$0.01");
    expect(cents(1500)).toBe("$15.00");
    expect(cents(123_456_789)).toBe("$1,234,567.89");
    expect(cents(-250)).toBe("-$2.50");
    expect(cents(100_000_000_000)).toBe("$1,000,000,000.00");
    expect(cents(1500, "EUR")).toBe("€15.00");
    expect(cents(1500, "CAD")).toBe("CA$15.00");
  });

  it("shows an unknown amount as a dash, never as $0.00", () => {
    expect(cents(null)).toBe("—");
    expect(cents(undefined)).toBe("—");
    expect(cents(Number.NaN)).toBe("—");
  });
});

describe("terms in words", () => {
  const examples: RuleWhen[] = [
    { sub_id: "fb-" },
    { sub_id: "fb-spring" },
    { origin_states: ["CA"] },
    { origin_states: ["CA", "NY"], min_vehicles: 2 },
    { destination_states: ["TX", "FL"] },
    { overseas_type: "FOREIGN", ship_via: "CONTAINER_20FT" },
    { vehicle_type: "SUV", vehicle_run: true },
    { vehicle_run: false },
    {
      sub_id: "fb-",
      origin_states: ["CA"],
      destination_states: ["NY"],
      overseas_type: "DOMESTIC",
      ship_via: "OPEN",
      vehicle_type: "CAR",
      min_vehicles: 3,
      vehicle_run: true,
    },
  ];

  it.each(examples)("words %j as the service publishes it", (when) => {
    expect(whenWords(when)).toBe(whenInWords(when as PriceRuleWhen));
  });

  it("knows every condition the service prices by", () => {
    const every = Object.fromEntries(
      PRICE_CONDITIONS.map((c) => [c.member, examples[8]?.[c.member as keyof RuleWhen]]),
    );
    expect(Object.keys(every).sort()).toEqual(Object.keys(examples[8] ?? {}).sort());
    expect(whenWords(every)).toBe(whenInWords(every as PriceRuleWhen));
  });

  it("says the prices, the settlement and the returns one sentence each", () => {
    const words = termsSentences({
      currency: "USD",
      default_price_cents: 1500,
      extra_vehicle_cents: 500,
      price_rules: [{ when: { sub_id: "fb-", overseas_type: "FOREIGN" }, price_cents: 2500 }],
      settlement_days: 7,
      returns: { window_hours: 72, max_rate: 0.15, contest_hours: 48 },
    });
    expect(words.prices).toEqual([
      "A lead no rule matches earns $15.00; the first rule that matches sets the price.",
      "Rule 1: when sub_id starts with fb- and overseas_type is FOREIGN, a lead earns $25.00.",
      "Each vehicle after the first adds $5.00.",
    ]);
    expect(words.settlement).toBe(
      "Earnings are pending for 7 days after a lead is accepted, then available to be paid out.",
    );
    expect(words.returns).toBe(
      "A lead may be returned within 72 hours of acceptance, up to 15% of a month's billable leads; a return may be contested within 48 hours.",
    );
    const plain = termsSentences({
      currency: "USD",
      default_price_cents: 0,
      extra_vehicle_cents: 0,
      price_rules: [],
      settlement_days: 1,
      returns: {},
    });
    expect(plain.prices).toEqual(["Every lead earns $0.00.", "Extra vehicles add nothing."]);
    expect(plain.settlement).toContain("pending for 1 day after");
  });
});
