/**
 * Money over REST: providers read their terms (ETag), quote a lead, read their balance, lines and
 * statements (JSON, CSV, PDF); administrators set terms, read any provider's balance and lines,
 * record payouts and corrections, and read the payables and the trial balance. JSON ↔ the money
 * services; one mapping per shape, shared by every route that answers it.
 */
import etag from "etag";
import { type Response, Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { matches } from "../intake/intake.rest.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { actorOf as actor, operation, providerOf } from "../rest/typed.ts";
import { csvField } from "../stats/stats.rest.ts";
import type { LedgerService, LineQuery } from "./ledger.service.ts";
import {
  adjustmentJson,
  type Balance,
  type BalanceTransaction,
  type Book,
  ledgerLeadJson,
  type Payable,
  type PurchasesPerDay,
  payoutJson,
  type Statement,
  type StatementAccount,
  type StatementSummary,
  type TrialBalance,
  type TypeTotals,
  versionedTermsJson,
} from "./money.ts";
import { MAX_PDF_LINES, statementPdf } from "./statement.pdf.ts";
import type { PreviewQuote, Quote, TermsService } from "./terms.service.ts";
import { PRICE_CONDITIONS, type VersionedTerms, whenInWords } from "./terms.ts";

type Json = components["schemas"];

export function termsJson(v: VersionedTerms): Json["VersionedTerms"] {
  return versionedTermsJson(v) as Json["VersionedTerms"];
}

export function publishedTermsJson(v: VersionedTerms, livemode: boolean): Json["PublishedTerms"] {
  return {
    ...termsJson(v),
    price_rules: v.terms.price_rules.map((r) => ({ ...(r as Json["PriceRule"]), description: whenInWords(r.when) })),
    livemode,
    conditions: PRICE_CONDITIONS.map((c) => ({ member: c.member, holds: c.holds, description: c.description })),
  };
}

/** A price with its parts, as every quote shows it. */
function priceJson(q: Quote | PreviewQuote) {
  return {
    amount_cents: q.amountCents,
    currency: q.currency,
    rule: q.rule,
    terms_version: q.termsVersion,
    base_cents: q.baseCents,
    extra_vehicles_cents: q.extraVehiclesCents,
  };
}

export function quoteJson(q: Quote): Json["Quote"] {
  return { ...priceJson(q), terms_version: q.termsVersion, livemode: q.livemode };
}

function previewQuoteJson(q: PreviewQuote): Json["ProviderQuote"] {
  return { ...priceJson(q), draft: q.draft };
}

export function balanceJson(b: Balance): Json["Balance"] {
  return {
    currency: b.currency,
    pending_cents: b.pendingCents,
    available_cents: b.availableCents,
    paid_out_cents: b.paidOutCents,
    as_of: b.asOf.toISOString(),
    livemode: b.livemode,
  };
}

export function lineJson(l: BalanceTransaction): Json["BalanceTransaction"] {
  return {
    id: l.id,
    type: l.type,
    amount_cents: l.amountCents,
    currency: l.currency,
    balance_after_cents: l.balanceAfterCents,
    account: l.account,
    created_at: l.createdAt.toISOString(),
    description: l.description,
    lead: ledgerLeadJson(l.lead),
    reference: l.reference,
  };
}

const totalsJson = (t: TypeTotals): Json["StatementTotals"] => ({ ...t });
const accountJson = (a: StatementAccount): Json["StatementAccount"] => ({
  opening_balance_cents: a.openingCents,
  closing_balance_cents: a.closingCents,
  totals: totalsJson(a.totals),
});

export function statementJson(s: Statement): Json["Statement"] {
  return {
    month: s.month,
    status: s.status,
    livemode: s.livemode,
    currency: s.currency,
    timezone: s.timezone,
    period_start: s.periodStart.toISOString(),
    period_end: s.periodEnd.toISOString(),
    closes_at: s.closesAt.toISOString(),
    opening_balance_cents: s.openingCents,
    closing_balance_cents: s.closingCents,
    totals: totalsJson(s.totals),
    accounts: { pending: accountJson(s.pending), available: accountJson(s.available) },
    line_count: s.lineCount,
  };
}

export function statementSummaryJson(s: StatementSummary): Json["StatementSummary"] {
  return {
    month: s.month,
    status: s.status,
    period_start: s.periodStart.toISOString(),
    period_end: s.periodEnd.toISOString(),
    closes_at: s.closesAt.toISOString(),
    currency: s.currency,
    opening_balance_cents: s.openingCents,
    closing_balance_cents: s.closingCents,
  };
}

function payableJson(p: Payable): Json["Payable"] {
  return {
    provider_id: p.providerId,
    provider_name: p.providerName,
    livemode: p.livemode,
    currency: p.currency,
    pending_cents: p.pendingCents,
    available_cents: p.availableCents,
    paid_out_cents: p.paidOutCents,
  };
}

function trialBalanceJson(t: TrialBalance): Json["TrialBalance"] {
  return {
    currency: t.currency,
    as_of: t.asOf.toISOString(),
    books: t.books.map((b) => ({ livemode: b.livemode, accounts: { ...b.accounts }, total_cents: b.totalCents as 0 })),
    total_cents: t.totalCents as 0,
  };
}

const csvLine = (fields: readonly unknown[]) => `${fields.map(csvField).join(",")}\r\n`;

/** The CSV of a statement's lines: a header row, then one row per line, oldest first. */
export const STATEMENT_CSV_HEADER = [
  "id",
  "created_at",
  "type",
  "account",
  "amount_cents",
  "balance_after_cents",
  "currency",
  "description",
  "lead_id",
  "external_id",
  "order_number",
  "reference",
];

function lineCsv(l: BalanceTransaction): string {
  return csvLine([
    l.id,
    l.createdAt.toISOString(),
    l.type,
    l.account,
    l.amountCents,
    l.balanceAfterCents,
    l.currency,
    l.description,
    l.lead?.id ?? "",
    l.lead?.externalId ?? "",
    l.lead?.orderNumber ?? "",
    l.reference ?? "",
  ]);
}

const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));

/** What a statement is made from: one book's months, lines and provider name. */
export interface StatementReader {
  readonly livemode: boolean;
  statement(month: string): Promise<Statement>;
  statementLines(month: string): AsyncGenerator<BalanceTransaction[]>;
  providerName(): Promise<string>;
}

/** The ledger's statements of one book. */
export function statementReader(ledger: LedgerService, book: Book): StatementReader {
  return {
    livemode: book.livemode,
    statement: (month) => ledger.statement(book, month),
    statementLines: (month) => ledger.statementLines(book, month),
    providerName: () => ledger.providerName(book),
  };
}

/** A statement in the format asked for: JSON, every line as CSV, or one PDF document. */
export async function sendStatement(
  res: Response,
  reader: StatementReader,
  month: string,
  format: string | undefined,
): Promise<void> {
  const s = await reader.statement(month);
  const name = `statement-${s.month}${reader.livemode ? "" : "-test"}`;
  if (format === "csv") {
    res.type("text/csv; charset=utf-8; header=present").attachment(`${name}.csv`);
    res.write(csvLine(STATEMENT_CSV_HEADER));
    for await (const page of reader.statementLines(month)) res.write(page.map(lineCsv).join(""));
    res.end();
    return;
  }
  if (format === "pdf") {
    const lines: BalanceTransaction[] = [];
    for await (const page of reader.statementLines(month)) {
      lines.push(...page);
      if (lines.length >= MAX_PDF_LINES) break;
    }
    const pdf = await statementPdf(s, await reader.providerName(), lines.slice(0, MAX_PDF_LINES), s.lineCount);
    res.type("application/pdf").attachment(`${name}.pdf`).send(pdf);
    return;
  }
  res.json(statementJson(s));
}

/** A per-day series of purchases: a provider's earnings or the broker's spend. */
export function perDayJson(p: PurchasesPerDay): Json["PurchasesPerDay"] {
  return {
    livemode: p.livemode,
    currency: p.currency,
    timezone: p.timezone,
    from: p.from,
    to: p.to,
    days: p.days.map((d) => ({ date: d.date, amount_cents: d.amountCents, leads: d.leads })),
    total_cents: p.totalCents,
    total_leads: p.totalLeads,
  };
}

/** The line filters of a list request (the Public API's, the portal's and the administrators'). */
export function lineQueryOf(q: {
  page_size?: number;
  page_token?: string;
  type?: string;
  created_after?: string;
  created_before?: string;
  external_id?: string;
}): LineQuery {
  return {
    pageSize: q.page_size,
    pageToken: q.page_token,
    type: q.type,
    createdAfter: date(q.created_after),
    createdBefore: date(q.created_before),
    externalId: q.external_id,
  };
}

export function moneyRoutes(terms: TermsService, ledger: LedgerService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  const P = "/api/v1/public";
  const M = "/api/v1/lead_providers/:id";

  router.get(
    `${P}/terms/`,
    operation("getPublishedTerms", async (req, res) => {
      const owner = providerOf(res);
      const body = JSON.stringify(publishedTermsJson(await terms.published(owner), owner.livemode));
      const tag = etag(body, { weak: true });
      res.setHeader("ETag", tag);
      res.setHeader("Cache-Control", "private, no-cache");
      if (matches(req.get("if-none-match"), tag)) {
        res.status(304).end();
        return;
      }
      res.type("application/json").send(body as never);
    }),
  );
  router.post(
    `${P}/terms/quote/`,
    operation("quoteLead", async (req, res) => {
      res.json(quoteJson(await terms.quote(providerOf(res), req.body)));
    }),
  );
  router.get(
    `${P}/balance/`,
    operation("getBalance", async (_req, res) => {
      res.json(balanceJson(await ledger.balance(providerOf(res))));
    }),
  );
  router.get(
    `${P}/balance_transactions/`,
    operation("listBalanceTransactions", async (req, res) => {
      const page = await ledger.lines(providerOf(res), lineQueryOf(req.query));
      res.json(cursorPageJson(req, page, lineJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}/statements/`,
    operation("listStatements", async (req, res) => {
      const page = await ledger.statements(providerOf(res), {
        pageSize: req.query.page_size,
        pageToken: req.query.page_token,
      });
      res.json(cursorPageJson(req, page, statementSummaryJson, publicBaseUrl));
    }),
  );
  router.get(
    `${P}/statements/:month/`,
    operation("getStatement", async (req, res) => {
      await sendStatement(res, statementReader(ledger, providerOf(res)), req.params.month, req.query.format);
    }),
  );

  router.get(
    `${M}/terms/`,
    operation("getTerms", async (req, res) => {
      res.json(termsJson(await terms.get(req.params.id)));
    }),
  );
  router.put(
    `${M}/terms/`,
    operation("setTerms", async (req, res) => {
      res.json(termsJson(await terms.set(actor(res), req.params.id, req.body)));
    }),
  );
  router.post(
    `${M}/terms/quote/`,
    operation("quoteProviderLead", async (req, res) => {
      res.json(previewQuoteJson(await terms.preview(req.params.id, req.body)));
    }),
  );
  router.get(
    `${M}/balance/`,
    operation("getProviderBalance", async (req, res) => {
      res.json(balanceJson(await ledger.adminBalance(req.params.id, req.query.mode)));
    }),
  );
  router.get(
    `${M}/balance_transactions/`,
    operation("listProviderBalanceTransactions", async (req, res) => {
      const page = await ledger.adminLines(req.params.id, req.query.mode, lineQueryOf(req.query));
      res.json(cursorPageJson(req, page, lineJson, publicBaseUrl));
    }),
  );
  router.post(
    `${M}/payouts/`,
    operation("createPayout", async (req, res) => {
      const { payout, replayed } = await ledger.createPayout(actor(res), req.params.id, req.body);
      res.status(replayed ? 200 : 201).json(payoutJson(payout));
    }),
  );
  router.post(
    `${M}/adjustments/`,
    operation("createAdjustment", async (req, res) => {
      const { adjustment, replayed } = await ledger.createAdjustment(actor(res), req.params.id, req.body);
      res.status(replayed ? 200 : 201).json(adjustmentJson(adjustment) as Json["Adjustment"]);
    }),
  );

  router.get(
    "/api/v1/admin/payables/",
    operation("listPayables", async (req, res) => {
      const q = req.query;
      if (q.format === "csv") {
        const rows = await ledger.allPayables(q.mode);
        const header = csvLine(Object.keys(payableJson(rows[0] ?? EMPTY_PAYABLE)));
        const body = rows.map((p) => csvLine(Object.values(payableJson(p)))).join("");
        res
          .type("text/csv; charset=utf-8; header=present")
          .attachment("payables.csv")
          .send((header + body) as never);
        return;
      }
      const page = await ledger.payables({ mode: q.mode, pageSize: q.page_size, pageToken: q.page_token });
      res.json(cursorPageJson(req, page, payableJson, publicBaseUrl));
    }),
  );
  router.get(
    "/api/v1/admin/ledger/spend/",
    operation("getLedgerSpend", async (req, res) => {
      res.json(perDayJson(await ledger.spend({ mode: req.query.mode, days: req.query.days })));
    }),
  );
  router.get(
    "/api/v1/admin/ledger/trial_balance/",
    operation("getTrialBalance", async (_req, res) => {
      res.json(trialBalanceJson(await ledger.trialBalance()));
    }),
  );

  return {
    router,
    explainers: {
      setTerms: (body) => terms.violations(body),
      createPayout: (body) => ledger.payoutViolations(body),
      createAdjustment: (body) => ledger.adjustmentViolations(body),
      quoteLead: (body) => terms.quoteViolations(body),
      quoteProviderLead: (body) => terms.previewViolations(body),
    },
  };
}

const EMPTY_PAYABLE: Payable = {
  providerId: 0,
  providerName: "",
  livemode: true,
  currency: "",
  pendingCents: 0,
  availableCents: 0,
  paidOutCents: 0,
};
