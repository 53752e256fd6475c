/**
 * The ledger as providers and administrators see it: balances, lines (balance transactions),
 * statements, payouts and adjustments. Types and pure rules only (no I/O, no clock).
 */
import type { LeadOwner } from "../leads/lead.ts";
import { canonicalTerms, type Terms, type VersionedTerms } from "./terms.ts";

export const TRANSACTION_TYPES = ["lead_purchase", "settlement", "return", "adjustment", "payout"] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

/** The provider's own accounts: what its balance, lines and statements show. */
export const PROVIDER_ACCOUNTS = ["pending", "available"] as const;
export type ProviderAccount = (typeof PROVIDER_ACCOUNTS)[number];

/** Every account of a provider's book: its own two, and the broker's two for it. */
export const ACCOUNT_TYPES = ["pending", "available", "lead_expense", "payouts"] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** The largest payout or adjustment: $1,000,000,000. */
export const MAX_AMOUNT_CENTS = 100_000_000_000;

export const BOOK_MODES = ["live", "test"] as const;

/** A provider's book: its id and mode (live money and test money never mix). */
export type Book = LeadOwner;

export interface Balance {
  readonly currency: string;
  readonly pendingCents: number;
  readonly availableCents: number;
  readonly paidOutCents: number;
  readonly asOf: Date;
  readonly livemode: boolean;
}

export interface LedgerLead {
  readonly id: number;
  readonly externalId: string;
  readonly orderNumber: string;
}

/** One line of a provider's ledger: an entry on its pending or available account. */
export interface BalanceTransaction {
  /** btx_ + 32 hex digits (random: it counts nothing). */
  readonly id: string;
  readonly type: TransactionType;
  /** Signed, from the provider's view. */
  readonly amountCents: number;
  readonly currency: string;
  readonly balanceAfterCents: number;
  readonly account: ProviderAccount;
  readonly createdAt: Date;
  readonly description: string;
  readonly lead: LedgerLead | null;
  readonly reference: string | null;
}

export type TypeTotals = Readonly<Record<TransactionType, number>>;

export const zeroTotals = (): Record<TransactionType, number> => ({
  lead_purchase: 0,
  settlement: 0,
  return: 0,
  adjustment: 0,
  payout: 0,
});

export interface StatementAccount {
  readonly openingCents: number;
  readonly closingCents: number;
  readonly totals: TypeTotals;
}

export interface Statement {
  readonly month: string;
  readonly status: "open" | "closed";
  readonly livemode: boolean;
  readonly currency: string;
  readonly timezone: string;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly closesAt: Date;
  readonly openingCents: number;
  readonly closingCents: number;
  readonly totals: TypeTotals;
  readonly pending: StatementAccount;
  readonly available: StatementAccount;
  readonly lineCount: number;
}

export interface StatementSummary {
  readonly month: string;
  readonly status: "open" | "closed";
  readonly periodStart: Date;
  readonly periodEnd: Date;
  readonly closesAt: Date;
  readonly currency: string;
  readonly openingCents: number;
  readonly closingCents: number;
}

export interface Payout {
  readonly id: string;
  readonly providerId: number;
  readonly livemode: boolean;
  readonly amountCents: number;
  readonly currency: string;
  readonly reference: string;
  readonly paidAt: Date;
  readonly createdAt: Date;
  readonly balanceTransaction: string;
}

export interface Adjustment {
  readonly id: string;
  readonly providerId: number;
  readonly livemode: boolean;
  /** Signed: positive credits the provider's available balance. */
  readonly amountCents: number;
  readonly currency: string;
  readonly reason: string;
  readonly lead: LedgerLead | null;
  readonly reference: string | null;
  readonly createdAt: Date;
  readonly balanceTransaction: string;
}

export interface Payable {
  readonly providerId: number;
  readonly providerName: string;
  readonly livemode: boolean;
  readonly currency: string;
  readonly pendingCents: number;
  readonly availableCents: number;
  readonly paidOutCents: number;
}

export interface TrialBalanceBook {
  readonly livemode: boolean;
  readonly accounts: Readonly<Record<AccountType, number>>;
  readonly totalCents: number;
}

export interface TrialBalance {
  readonly currency: string;
  readonly asOf: Date;
  readonly books: readonly TrialBalanceBook[];
  /** Every account of every book added up: 0 while every transaction balances. */
  readonly totalCents: number;
}

/** Purchases per calendar day in the broker's time zone: a provider's earnings, or the broker's spend. */
export interface PurchasesPerDay {
  readonly livemode: boolean;
  readonly currency: string;
  readonly timezone: string;
  /** The first and the last day (today), `YYYY-MM-DD`. */
  readonly from: string;
  readonly to: string;
  /** Every day of the window, oldest first; a day without a purchase is there with zeros. */
  readonly days: ReadonlyArray<{ readonly date: string; readonly amountCents: number; readonly leads: number }>;
  readonly totalCents: number;
  readonly totalLeads: number;
}

/** How many days a per-day series may span. */
export const MAX_SERIES_DAYS = 366;

// ---- the published forms of events (the outbox keeps them as the API shows them) ----

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function ledgerLeadJson(l: LedgerLead | null) {
  return l && { id: l.id, external_id: l.externalId, order_number: l.orderNumber };
}

/** The terms with their revision, as the API shows them (the document is already snake_case). */
export function versionedTermsJson(v: VersionedTerms) {
  return { ...v.terms, version: v.version, effective_at: iso(v.effectiveAt) };
}

export function payoutJson(p: Payout) {
  return {
    id: p.id,
    provider_id: p.providerId,
    livemode: p.livemode,
    amount_cents: p.amountCents,
    currency: p.currency,
    reference: p.reference,
    paid_at: p.paidAt.toISOString(),
    created_at: p.createdAt.toISOString(),
    balance_transaction: p.balanceTransaction,
  };
}

export function adjustmentJson(a: Adjustment) {
  return {
    id: a.id,
    provider_id: a.providerId,
    livemode: a.livemode,
    amount_cents: a.amountCents,
    currency: a.currency,
    reason: a.reason,
    lead: ledgerLeadJson(a.lead),
    reference: a.reference,
    created_at: a.createdAt.toISOString(),
    balance_transaction: a.balanceTransaction,
  };
}

/** Whether two terms documents say the same (a PUT of the same terms changes nothing). */
export function sameTerms(a: Terms, b: Terms): boolean {
  return canonicalTerms(a) === canonicalTerms(b);
}

/** Dollars and cents for people ("$1,234.56", "-$5.00"), in the ledger's currency. */
export function formatMoney(cents: number, currency: string): string {
  return new Intl.NumberFormat("en-US", { style: "currency", currency }).format(cents / 100);
}
