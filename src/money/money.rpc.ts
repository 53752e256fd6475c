/**
 * Money over Connect/gRPC: PublicLeadService.GetTerms, QuoteLead, GetBalance,
 * ListBalanceTransactions, ListStatements, GetStatement; ProviderService.GetTerms, SetTerms,
 * QuoteProviderLead, GetProviderBalance, ListProviderBalanceTransactions, CreatePayout, CreateAdjustment. Messages ↔
 * the money services (the same ones REST calls).
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Adjustment as AdjustmentMessage,
  AdjustmentSchema,
  type Balance as BalanceMessage,
  BalanceSchema,
  type BalanceTransaction as BalanceTransactionMessage,
  BalanceTransactionSchema,
  type Payout as PayoutMessage,
  PayoutSchema,
  type PriceRuleWhen as PriceRuleWhenMessage,
  type Statement as StatementMessage,
  StatementSchema,
  type Terms as TermsMessage,
  TermsSchema,
} from "../../generated/proto/leadprovider/v1/money_pb.ts";
import type { ProviderService } from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { throwIfViolations } from "../errors.ts";
import { createLeadInput } from "../leads/lead.rpc.ts";
import { actorOf, providerOf } from "../rpc/context.ts";
import { dateOf, optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { LedgerService, LineQuery } from "./ledger.service.ts";
import type {
  Adjustment,
  Balance,
  BalanceTransaction,
  LedgerLead,
  Payout,
  Statement,
  StatementAccount,
  TypeTotals,
} from "./money.ts";
import type { TermsService } from "./terms.service.ts";
import { PRICE_CONDITIONS, type PriceRuleWhen, type VersionedTerms, whenInWords } from "./terms.ts";

const list = (l: readonly string[] | undefined) => (l === undefined ? undefined : { values: [...l] });

function whenMessage(w: PriceRuleWhen) {
  return {
    subId: w.sub_id,
    originStates: list(w.origin_states),
    destinationStates: list(w.destination_states),
    overseasType: w.overseas_type,
    shipVia: w.ship_via,
    vehicleType: w.vehicle_type,
    minVehicles: w.min_vehicles,
    vehicleRun: w.vehicle_run,
  };
}

/** The terms as a message; `described` adds each rule's conditions in words (the published form). */
export function termsMessage(v: VersionedTerms, described = false): TermsMessage {
  const t = v.terms;
  return create(TermsSchema, {
    currency: t.currency,
    defaultPriceCents: BigInt(t.default_price_cents),
    extraVehicleCents: BigInt(t.extra_vehicle_cents),
    priceRules: t.price_rules.map((r) => ({
      when: whenMessage(r.when),
      priceCents: BigInt(r.price_cents),
      description: described ? whenInWords(r.when) : "",
    })),
    settlementDays: t.settlement_days,
    returns: {
      windowHours: t.returns.window_hours,
      maxRate: t.returns.max_rate,
      contestHours: t.returns.contest_hours,
      reasons: [...t.returns.reasons],
      autoApprove: [...t.returns.auto_approve],
    },
    version: v.version,
    effectiveAt: tsOpt(v.effectiveAt),
  });
}

function whenInput(w: PriceRuleWhenMessage | undefined): Record<string, unknown> | undefined {
  if (w === undefined) return undefined;
  return {
    sub_id: w.subId,
    origin_states: w.originStates?.values,
    destination_states: w.destinationStates?.values,
    overseas_type: w.overseasType,
    ship_via: w.shipVia,
    vehicle_type: w.vehicleType,
    min_vehicles: w.minVehicles,
    vehicle_run: w.vehicleRun,
  };
}

/** The message as the JSON-like document the terms parser reads (unset members: defaults). */
export function termsInput(m: TermsMessage): Record<string, unknown> {
  const r = m.returns;
  return {
    currency: optionalText(m.currency),
    default_price_cents: Number(m.defaultPriceCents),
    extra_vehicle_cents: Number(m.extraVehicleCents),
    price_rules: m.priceRules.map((rule) => ({ when: whenInput(rule.when), price_cents: Number(rule.priceCents) })),
    settlement_days: m.settlementDays,
    returns: r && {
      window_hours: r.windowHours,
      max_rate: r.maxRate,
      contest_hours: r.contestHours,
      reasons: r.reasons.length === 0 ? undefined : r.reasons,
      auto_approve: r.autoApprove,
    },
  };
}

const leadMessage = (l: LedgerLead | null) =>
  l === null ? undefined : { id: BigInt(l.id), externalId: l.externalId, orderNumber: l.orderNumber };

function balanceMessage(b: Balance): BalanceMessage {
  return create(BalanceSchema, {
    currency: b.currency,
    pendingCents: BigInt(b.pendingCents),
    availableCents: BigInt(b.availableCents),
    paidOutCents: BigInt(b.paidOutCents),
    asOf: ts(b.asOf),
    livemode: b.livemode,
  });
}

function lineMessage(l: BalanceTransaction): BalanceTransactionMessage {
  return create(BalanceTransactionSchema, {
    id: l.id,
    type: l.type,
    amountCents: BigInt(l.amountCents),
    currency: l.currency,
    balanceAfterCents: BigInt(l.balanceAfterCents),
    account: l.account,
    createdAt: ts(l.createdAt),
    description: l.description,
    lead: leadMessage(l.lead),
    ...(l.reference !== null && { reference: l.reference }),
  });
}

function totalsMessage(t: TypeTotals) {
  return {
    leadPurchaseCents: BigInt(t.lead_purchase),
    settlementCents: BigInt(t.settlement),
    returnCents: BigInt(t.return),
    adjustmentCents: BigInt(t.adjustment),
    payoutCents: BigInt(t.payout),
  };
}

const accountMessage = (a: StatementAccount) => ({
  openingBalanceCents: BigInt(a.openingCents),
  closingBalanceCents: BigInt(a.closingCents),
  totals: totalsMessage(a.totals),
});

function statementMessage(s: Statement): StatementMessage {
  return create(StatementSchema, {
    month: s.month,
    status: s.status,
    livemode: s.livemode,
    currency: s.currency,
    timezone: s.timezone,
    periodStart: ts(s.periodStart),
    periodEnd: ts(s.periodEnd),
    closesAt: ts(s.closesAt),
    openingBalanceCents: BigInt(s.openingCents),
    closingBalanceCents: BigInt(s.closingCents),
    totals: totalsMessage(s.totals),
    pending: accountMessage(s.pending),
    available: accountMessage(s.available),
    lineCount: BigInt(s.lineCount),
  });
}

function payoutMessage(p: Payout): PayoutMessage {
  return create(PayoutSchema, {
    id: p.id,
    providerId: BigInt(p.providerId),
    livemode: p.livemode,
    amountCents: BigInt(p.amountCents),
    currency: p.currency,
    reference: p.reference,
    paidAt: ts(p.paidAt),
    createdAt: ts(p.createdAt),
    balanceTransaction: p.balanceTransaction,
  });
}

function adjustmentMessage(a: Adjustment): AdjustmentMessage {
  return create(AdjustmentSchema, {
    id: a.id,
    providerId: BigInt(a.providerId),
    livemode: a.livemode,
    amountCents: BigInt(a.amountCents),
    currency: a.currency,
    reason: a.reason,
    lead: leadMessage(a.lead),
    ...(a.reference !== null && { reference: a.reference }),
    createdAt: ts(a.createdAt),
    balanceTransaction: a.balanceTransaction,
  });
}

interface LineRequest {
  pageSize: number;
  pageToken: string;
  type: string;
  createdAfter?: Parameters<typeof dateOf>[0];
  createdBefore?: Parameters<typeof dateOf>[0];
  externalId: string;
}

const lineQuery = (req: LineRequest): LineQuery => ({
  pageSize: req.pageSize || undefined,
  pageToken: req.pageToken || undefined,
  type: optionalText(req.type),
  createdAfter: dateOf(req.createdAfter),
  createdBefore: dateOf(req.createdBefore),
  externalId: optionalText(req.externalId),
});

export function createMoneyPublicRpc(
  terms: TermsService,
  ledger: LedgerService,
): Pick<
  ServiceImpl<typeof PublicLeadService>,
  "getTerms" | "quoteLead" | "getBalance" | "listBalanceTransactions" | "listStatements" | "getStatement"
> {
  return {
    async getTerms(_req, ctx) {
      const owner = providerOf(ctx);
      return {
        terms: {
          terms: termsMessage(await terms.published(owner), true),
          livemode: owner.livemode,
          conditions: PRICE_CONDITIONS.map((c) => ({ member: c.member, holds: c.holds, description: c.description })),
        },
      };
    },
    async quoteLead(req, ctx) {
      if (!req.lead) throwIfViolations([{ field: "lead", code: "required", message: "lead is required" }]);
      const q = await terms.quote(providerOf(ctx), createLeadInput(req.lead as NonNullable<typeof req.lead>));
      return {
        quote: {
          price: {
            amountCents: BigInt(q.amountCents),
            currency: q.currency,
            rule: q.rule,
            termsVersion: q.termsVersion,
          },
          baseCents: BigInt(q.baseCents),
          extraVehiclesCents: BigInt(q.extraVehiclesCents),
          livemode: q.livemode,
        },
      };
    },
    async getBalance(_req, ctx) {
      return { balance: balanceMessage(await ledger.balance(providerOf(ctx))) };
    },
    async listBalanceTransactions(req, ctx) {
      const page = await ledger.lines(providerOf(ctx), lineQuery(req));
      return { balanceTransactions: page.items.map(lineMessage), nextPageToken: page.nextPageToken };
    },
    async listStatements(req, ctx) {
      const page = await ledger.statements(providerOf(ctx), {
        pageSize: req.pageSize || undefined,
        pageToken: req.pageToken || undefined,
      });
      return {
        statements: page.items.map((s) => ({
          month: s.month,
          status: s.status,
          periodStart: ts(s.periodStart),
          periodEnd: ts(s.periodEnd),
          closesAt: ts(s.closesAt),
          currency: s.currency,
          openingBalanceCents: BigInt(s.openingCents),
          closingBalanceCents: BigInt(s.closingCents),
        })),
        nextPageToken: page.nextPageToken,
      };
    },
    async getStatement(req, ctx) {
      return { statement: statementMessage(await ledger.statement(providerOf(ctx), req.month)) };
    },
  };
}

export function createMoneyProviderRpc(
  terms: TermsService,
  ledger: LedgerService,
): Pick<
  ServiceImpl<typeof ProviderService>,
  | "getTerms"
  | "setTerms"
  | "quoteProviderLead"
  | "getProviderBalance"
  | "listProviderBalanceTransactions"
  | "createPayout"
  | "createAdjustment"
> {
  return {
    async getTerms(req) {
      return { terms: termsMessage(await terms.get(req.id)) };
    },
    async setTerms(req, ctx) {
      // Without `terms` a request would reset every member to its default: refuse it instead.
      if (!req.terms) throwIfViolations([{ field: "terms", code: "required", message: "terms is required" }]);
      return { terms: termsMessage(await terms.set(actorOf(ctx), req.id, termsInput(req.terms as TermsMessage))) };
    },
    async quoteProviderLead(req) {
      if (!req.lead) throwIfViolations([{ field: "lead", code: "required", message: "lead is required" }]);
      const q = await terms.preview(req.id, {
        lead: createLeadInput(req.lead as NonNullable<typeof req.lead>),
        ...(req.terms && { terms: termsInput(req.terms) }),
      });
      return {
        quote: {
          price: {
            amountCents: BigInt(q.amountCents),
            currency: q.currency,
            rule: q.rule,
            termsVersion: q.termsVersion ?? 0,
          },
          baseCents: BigInt(q.baseCents),
          extraVehiclesCents: BigInt(q.extraVehiclesCents),
          // The terms are the same for both books; a preview is of the live one.
          livemode: true,
        },
        draft: q.draft,
      };
    },
    async getProviderBalance(req) {
      return { balance: balanceMessage(await ledger.adminBalance(req.id, optionalText(req.mode))) };
    },
    async listProviderBalanceTransactions(req) {
      const page = await ledger.adminLines(req.id, optionalText(req.mode), lineQuery(req));
      return { balanceTransactions: page.items.map(lineMessage), nextPageToken: page.nextPageToken };
    },
    async createPayout(req, ctx) {
      const { payout, replayed } = await ledger.createPayout(actorOf(ctx), req.id, {
        amount_cents: Number(req.amountCents),
        reference: optionalText(req.reference),
        paid_at: dateOf(req.paidAt)?.toISOString(),
        mode: optionalText(req.mode),
      });
      return { payout: payoutMessage(payout), replayed };
    },
    async createAdjustment(req, ctx) {
      const { adjustment, replayed } = await ledger.createAdjustment(actorOf(ctx), req.id, {
        amount_cents: Number(req.amountCents),
        reason: optionalText(req.reason),
        lead_id: req.leadId,
        reference: optionalText(req.reference),
        mode: optionalText(req.mode),
      });
      return { adjustment: adjustmentMessage(adjustment), replayed };
    },
  };
}
