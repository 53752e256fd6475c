/**
 * Money on every screen of both apps: amounts from whole cents in the ledger's currency, and a
 * provider's commercial terms in words (the back office's Terms panel and the portal's Earnings
 * page say them the same way). A price rule's conditions read as the service words them in its
 * published terms (src/money/terms.ts whenInWords; test/unit/money-format.test.ts holds the two
 * together).
 */

const formats = new Map<string, Intl.NumberFormat>();

/** Whole cents as money in its currency: 150000 USD → "$1,500.00", -250 → "-$2.50"; "—" when unknown. */
export function cents(amount: number | null | undefined, currency = "USD"): string {
  if (amount === null || amount === undefined || !Number.isFinite(amount)) return "—";
  let format = formats.get(currency);
  if (format === undefined) {
    format = new Intl.NumberFormat("en-US", { style: "currency", currency });
    formats.set(currency, format);
  }
  return format.format(amount / 100);
}

/** A price rule's conditions, as the API names them. */
export interface RuleWhen {
  sub_id?: string;
  origin_states?: string[];
  destination_states?: string[];
  overseas_type?: string;
  ship_via?: string;
  vehicle_type?: string;
  min_vehicles?: number;
  vehicle_run?: boolean;
}

const oneOf = (codes: readonly string[]) => (codes.length === 1 ? codes[0] : `one of ${codes.join(", ")}`);

/** Each condition in words, in the order the service tries them. */
const WORDS: { [K in keyof RuleWhen]-?: (v: NonNullable<RuleWhen[K]>) => string } = {
  sub_id: (v) => (v.endsWith("-") ? `sub_id starts with ${v}` : `sub_id is ${v}`),
  origin_states: (v) => `the origin is in ${oneOf(v)}`,
  destination_states: (v) => `the destination is in ${oneOf(v)}`,
  overseas_type: (v) => `overseas_type is ${v}`,
  ship_via: (v) => `ship_via is ${v}`,
  vehicle_type: (v) => `every vehicle is a ${v}`,
  min_vehicles: (v) => `at least ${v} vehicles`,
  vehicle_run: (v) => (v ? "every vehicle runs" : "no vehicle runs"),
};

/** A rule's conditions in words: "sub_id starts with fb- and overseas_type is FOREIGN". */
export function whenWords(when: RuleWhen): string {
  return (Object.keys(WORDS) as (keyof RuleWhen)[])
    .filter((k) => when[k] !== undefined && when[k] !== null)
    .map((k) => (WORDS[k] as (v: unknown) => string)(when[k]))
    .join(" and ");
}

/** The terms a sentence list is made of (the API's VersionedTerms or PublishedTerms). */
export interface TermsLike {
  currency: string;
  default_price_cents: number;
  extra_vehicle_cents: number;
  price_rules: { when: RuleWhen; price_cents: number; description?: string }[];
  settlement_days: number;
  returns: { window_hours?: number; max_rate?: number; contest_hours?: number };
}

const days = (n: number) => (n === 1 ? "1 day" : `${n} days`);
const hours = (n: number) => (n === 1 ? "1 hour" : `${n} hours`);

/** What a provider earns, when it is paid and what it may return, one sentence each. */
export function termsSentences(t: TermsLike): { prices: string[]; settlement: string; returns: string } {
  const rules = t.price_rules.map(
    (r, i) =>
      `Rule ${i + 1}: when ${r.description ?? whenWords(r.when)}, a lead earns ${cents(r.price_cents, t.currency)}.`,
  );
  const base =
    t.price_rules.length === 0
      ? `Every lead earns ${cents(t.default_price_cents, t.currency)}.`
      : `A lead no rule matches earns ${cents(t.default_price_cents, t.currency)}; the first rule that matches sets the price.`;
  const extra =
    t.extra_vehicle_cents > 0
      ? [`Each vehicle after the first adds ${cents(t.extra_vehicle_cents, t.currency)}.`]
      : ["Extra vehicles add nothing."];
  const settlement =
    t.settlement_days === 0
      ? "Earnings become available at once (the next settlement run) after a lead is accepted."
      : `Earnings are pending for ${days(t.settlement_days)} after a lead is accepted, then available to be paid out.`;
  const r = t.returns;
  const returns = `A lead may be returned within ${hours(r.window_hours ?? 72)} of acceptance, up to ${Math.round(
    (r.max_rate ?? 0.15) * 100,
  )}% of a month's billable leads; a return may be contested within ${hours(r.contest_hours ?? 48)}.`;
  return { prices: [base, ...rules, ...extra], settlement, returns };
}

/** A ledger line's type in words. */
export const LINE_TYPES: Record<string, string> = {
  lead_purchase: "Lead purchase",
  settlement: "Settlement",
  return: "Return",
  adjustment: "Adjustment",
  payout: "Payout",
};
