/**
 * The ledger's use cases for every edge: a provider's balance, lines and monthly statements (its
 * own book: a test key reads the test book), administrators' payouts and adjustments (audited,
 * announced as events, each one transaction with an idempotency key), every provider's payables
 * and the trial balance. Nothing here edits a posted transaction: a correction is a new one.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import { Fields, type RawId } from "../fields.ts";
import { type Page, pageOf, readPageRequest } from "../paging.ts";
import { providerId as readProviderId } from "../providers/provider.service.ts";
import * as repo from "./money.repository.ts";
import {
  type AccountType,
  type Adjustment,
  adjustmentJson,
  type Balance,
  type BalanceTransaction,
  BOOK_MODES,
  type Book,
  MAX_AMOUNT_CENTS,
  MAX_SERIES_DAYS,
  type Payable,
  type Payout,
  type PurchasesPerDay,
  payoutJson,
  type Statement,
  type StatementSummary,
  TRANSACTION_TYPES,
  type TransactionType,
  type TrialBalance,
  type TypeTotals,
  zeroTotals,
} from "./money.ts";
import { dayWindow, isMonth, monthOf, periodOf, shiftMonth, statusAt } from "./statement.ts";
import { readCents } from "./terms.ts";

export interface LedgerServiceDeps {
  readonly db: Kysely<Database>;
  /** LEDGER_CURRENCY. */
  readonly currency: string;
  /** BUSINESS_TIMEZONE: statement months. */
  readonly zone: string;
  readonly now?: () => Date;
  /** Called after a payout.created or adjustment.created event is stored (wakes the webhook worker). */
  readonly onEvent?: (type: "payout.created" | "adjustment.created") => void;
}

export const LINE_PAGE = { defaultSize: 20, maxSize: 100 } as const;
export const STATEMENT_PAGE = { defaultSize: 12, maxSize: 60 } as const;
export const PAYABLES_PAGE = { defaultSize: 50, maxSize: 500 } as const;
/** A per-day series spans this many days unless asked otherwise. */
export const SERIES_DAYS = 30;
/** A statement's CSV is read in pages of this many lines. */
const LINES_CHUNK = 2000;

export interface LineQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly type?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly externalId?: string | undefined;
}

export interface PayoutResult {
  readonly payout: Payout;
  /** The reference was already recorded with this amount and time: nothing new was posted. */
  readonly replayed: boolean;
}

export interface AdjustmentResult {
  readonly adjustment: Adjustment;
  readonly replayed: boolean;
}

export type LedgerService = ReturnType<typeof createLedgerService>;

const cursorOf = (publicId: string) => Buffer.from(publicId).toString("base64url");
const LINE_ID = /^btx_[0-9a-f]{32}$/;
const MONTH_TOKEN = /^\d{4}-(0[1-9]|1[0-2])$/;

function providerNotFound(id: number): DomainError {
  return new DomainError("not_found", `no provider with id ${id}`, { code: "provider_not_found" });
}

/** `mode` of an administrator's request: live (default) or test, named when it is neither. */
function livemodeOf(f: Fields, mode: string | undefined): boolean {
  return (f.oneOf({ mode }, "mode", BOOK_MODES, false) ?? "live") === "live";
}

export function createLedgerService(deps: LedgerServiceDeps) {
  const { db, currency, zone } = deps;
  const now = deps.now ?? (() => new Date());

  async function bookOf(rawId: RawId, mode: string | undefined): Promise<Book> {
    const f = new Fields();
    const livemode = livemodeOf(f, mode);
    throwIfViolations(f.violations);
    const providerId = readProviderId(rawId);
    if ((await repo.readTerms(db, providerId)) === null) throw providerNotFound(providerId);
    return { providerId, livemode };
  }

  async function balance(book: Book): Promise<Balance> {
    const b = await repo.balances(db, book);
    return {
      currency,
      pendingCents: b.pending ?? 0,
      availableCents: b.available ?? 0,
      paidOutCents: b.payouts ?? 0,
      asOf: now(),
      livemode: book.livemode,
    };
  }

  async function lines(book: Book, q: LineQuery): Promise<Page<BalanceTransaction>> {
    const f = new Fields();
    const { size } = readPageRequest(f, { pageSize: q.pageSize }, LINE_PAGE);
    const type = f.oneOf({ type: q.type }, "type", TRANSACTION_TYPES, false) as TransactionType | undefined;
    const createdAfter = f.instant(q.createdAfter, "created_after");
    const createdBefore = f.instant(q.createdBefore, "created_before");
    const externalId =
      q.externalId === ""
        ? undefined
        : f.text({ external_id: q.externalId }, "external_id", { max: 128, noControl: true });
    let before: repo.LinePosition | undefined;
    if (q.pageToken !== undefined && q.pageToken !== "") {
      const id = /^[A-Za-z0-9_-]+$/.test(q.pageToken) ? Buffer.from(q.pageToken, "base64url").toString("utf8") : "";
      before = LINE_ID.test(id) ? await repo.linePosition(db, book, id) : undefined;
      if (before === undefined) f.add("page_token", "invalid_format", "page_token is not a token this service issued");
    }
    throwIfViolations(f.violations);
    const rows = await repo.listLines(db, book, { type, createdAfter, createdBefore, externalId, before }, size + 1);
    const items = rows.slice(0, size).map(({ position: _, ...line }) => line);
    const last = items.at(-1);
    return { items, nextPageToken: rows.length > size && last ? cursorOf(last.id) : "" };
  }

  function readMonth(month: string): string {
    const f = new Fields();
    if (!isMonth(month)) f.add("month", "invalid_format", "month must be YYYY-MM (2026-11)");
    else if (month > monthOf(now(), zone)) {
      f.add("month", "out_of_range", `month ${month} is in the future; the current month is ${monthOf(now(), zone)}`);
    }
    throwIfViolations(f.violations);
    return month;
  }

  async function statement(book: Book, month: string): Promise<Statement> {
    const period = periodOf(readMonth(month), zone);
    const [opening, totals] = await Promise.all([
      repo.balancesAt(db, book, [period.start]),
      repo.periodTotals(db, book, period.start, period.end),
    ]);
    const account = (name: "pending" | "available") => {
      const t = zeroTotals();
      for (const r of totals) if (r.account === name) t[r.type] += r.cents;
      const openingCents = opening.find((o) => o.account === name)?.cents ?? 0;
      const moved = Object.values(t).reduce((a, b) => a + b, 0);
      return { openingCents, closingCents: openingCents + moved, totals: t as TypeTotals };
    };
    const pending = account("pending");
    const available = account("available");
    const all = zeroTotals();
    for (const r of totals) all[r.type] += r.cents;
    return {
      month: period.month,
      status: statusAt(period, now()),
      livemode: book.livemode,
      currency,
      timezone: zone,
      periodStart: period.start,
      periodEnd: period.end,
      closesAt: period.closesAt,
      openingCents: pending.openingCents + available.openingCents,
      closingCents: pending.closingCents + available.closingCents,
      totals: all,
      pending,
      available,
      lineCount: totals.reduce((n, r) => n + r.lines, 0),
    };
  }

  async function statements(
    book: Book,
    q: { pageSize?: number | undefined; pageToken?: string | undefined },
  ): Promise<Page<StatementSummary>> {
    const f = new Fields();
    const { size } = readPageRequest(f, { pageSize: q.pageSize }, STATEMENT_PAGE);
    let from = monthOf(now(), zone);
    if (q.pageToken !== undefined && q.pageToken !== "") {
      const m = /^[A-Za-z0-9_-]+$/.test(q.pageToken) ? Buffer.from(q.pageToken, "base64url").toString("utf8") : "";
      if (MONTH_TOKEN.test(m) && m <= from) from = shiftMonth(m, -1);
      else f.add("page_token", "invalid_format", "page_token is not a token this service issued");
    }
    throwIfViolations(f.violations);
    // From the current month back to the book's first line (only the current month when none).
    const first = await repo.firstLineAt(db, book);
    const oldest = first === null ? monthOf(now(), zone) : monthOf(first, zone);
    const months: string[] = [];
    for (let m = from; m >= oldest && months.length <= size; m = shiftMonth(m, -1)) months.push(m);
    const page = months.slice(0, size);
    const periods = page.map((m) => periodOf(m, zone));
    const at = await repo.balancesAt(db, book, [...new Set(periods.flatMap((p) => [p.start, p.end]))]);
    const sumAt = (d: Date) => at.filter((r) => r.at.getTime() === d.getTime()).reduce((n, r) => n + r.cents, 0);
    const items = periods.map((p) => ({
      month: p.month,
      status: statusAt(p, now()),
      periodStart: p.start,
      periodEnd: p.end,
      closesAt: p.closesAt,
      currency,
      openingCents: sumAt(p.start),
      closingCents: sumAt(p.end),
    }));
    const last = page.at(-1);
    return { items, nextPageToken: months.length > size && last ? Buffer.from(last).toString("base64url") : "" };
  }

  /** Every line of the month, oldest first, a page at a time (a statement's CSV and PDF). */
  async function* statementLines(book: Book, month: string): AsyncGenerator<BalanceTransaction[]> {
    const period = periodOf(readMonth(month), zone);
    let after: repo.LinePosition | undefined;
    for (;;) {
      const rows = await repo.periodLines(db, book, period.start, period.end, after, LINES_CHUNK);
      if (rows.length === 0) return;
      yield rows.map(({ position: _, ...line }) => line);
      after = rows.at(-1)?.position;
      if (rows.length < LINES_CHUNK) return;
    }
  }

  /** Before and after of the book's balance around a post in `trx` (the audit's "before" and "after"). */
  async function balancesAround(
    trx: Kysely<Database>,
    book: Book,
    legs: ReadonlyArray<{ account: AccountType; cents: number }>,
  ) {
    const after = await repo.balances(trx, book);
    const view = (b: Partial<Record<AccountType, number>>) => ({
      pending_cents: b.pending ?? 0,
      available_cents: b.available ?? 0,
      paid_out_cents: b.payouts ?? 0,
    });
    const before = { ...after };
    for (const leg of legs) before[leg.account] = (before[leg.account] ?? 0) - leg.cents;
    return { before: view(before), after: view(after) };
  }

  /** A payout's body, every bad member named (invalid_argument), or its values. */
  function readPayout(input: unknown) {
    const body = bodyOf(input);
    const f = new Fields();
    unknownMembers(f, body, ["amount_cents", "reference", "paid_at", "mode"]);
    const livemode = livemodeOf(f, body.mode as string | undefined);
    const cents = amountOf(f, body, { min: 1, max: MAX_AMOUNT_CENTS });
    const reference = f.text(body, "reference", { max: 128, required: true, noControl: true });
    const paidAtText = f.text(body, "paid_at", { max: 40, required: true });
    const paidAt = paidAtText === undefined ? undefined : new Date(paidAtText);
    if (paidAt !== undefined && (Number.isNaN(paidAt.getTime()) || !RFC3339.test(paidAtText ?? ""))) {
      f.add("paid_at", "invalid_format", "paid_at must be an RFC 3339 date-time");
    } else if (paidAt !== undefined && paidAt.getTime() > now().getTime() + 60_000) {
      f.add("paid_at", "out_of_range", "paid_at must not be in the future");
    }
    throwIfViolations(f.violations);
    return { livemode, cents: cents as number, reference: reference as string, paidAt: paidAt as Date };
  }

  /** An adjustment's body, every bad member named (invalid_argument), or its values. */
  function readAdjustment(input: unknown) {
    const body = bodyOf(input);
    const f = new Fields();
    unknownMembers(f, body, ["amount_cents", "reason", "lead_id", "reference", "mode"]);
    const livemode = livemodeOf(f, body.mode as string | undefined);
    const cents = amountOf(f, body, { min: -MAX_AMOUNT_CENTS, max: MAX_AMOUNT_CENTS });
    if (cents === 0) f.add("amount_cents", "out_of_range", "amount_cents must not be 0");
    const reason = f.text(body, "reason", { max: 500, required: true });
    const reference = f.text(body, "reference", { max: 128, noControl: true });
    const leadId = body.lead_id === undefined || body.lead_id === null ? undefined : f.id(body, "lead_id");
    throwIfViolations(f.violations);
    return { livemode, cents: cents as number, reason: reason as string, reference, leadId };
  }

  /** `days` of a per-day series: 1 to MAX_SERIES_DAYS, SERIES_DAYS when absent; named when wrong. */
  function readDays(f: Fields, days: number | string | undefined): number {
    if (days === undefined || days === "") return SERIES_DAYS;
    const n = typeof days === "string" && /^\d{1,6}$/.test(days) ? Number(days) : days;
    return f.integer({ days: n }, "days", 1, MAX_SERIES_DAYS) ?? SERIES_DAYS;
  }

  /** Purchases per business day over the last `days` days (today included), zero-filled. */
  async function perDay(scope: Book | { livemode: boolean }, days: number): Promise<PurchasesPerDay> {
    const w = dayWindow(now(), zone, days);
    const rows = await repo.purchasesPerDay(db, scope, zone, w.start, w.end);
    const byDay = new Map(rows.map((r) => [r.day, r]));
    const series = w.days.map((date) => {
      const r = byDay.get(date);
      return { date, amountCents: r?.cents ?? 0, leads: r?.leads ?? 0 };
    });
    return {
      livemode: scope.livemode,
      currency,
      timezone: zone,
      from: w.days[0] as string,
      to: w.days.at(-1) as string,
      days: series,
      totalCents: series.reduce((n, d) => n + d.amountCents, 0),
      totalLeads: series.reduce((n, d) => n + d.leads, 0),
    };
  }

  return {
    balance,
    lines,
    statement,
    statements,
    statementLines,
    providerName: (book: Book) => repo.providerName(db, book.providerId),

    /** What the book's leads earned per business day over the last `days` days (the portal's chart). */
    async earnings(book: Book, days: number | string | undefined): Promise<PurchasesPerDay> {
      const f = new Fields();
      const n = readDays(f, days);
      throwIfViolations(f.violations);
      return perDay(book, n);
    },

    /** What the broker spent on every provider's leads per business day, in one book (the dashboard's chart). */
    async spend(q: { mode?: string | undefined; days?: number | string | undefined }): Promise<PurchasesPerDay> {
      const f = new Fields();
      const livemode = livemodeOf(f, q.mode);
      const n = readDays(f, q.days);
      throwIfViolations(f.violations);
      return perDay({ livemode }, n);
    },

    adminBalance: async (rawId: RawId, mode: string | undefined) => balance(await bookOf(rawId, mode)),
    adminLines: async (rawId: RawId, mode: string | undefined, q: LineQuery) => lines(await bookOf(rawId, mode), q),

    /**
     * Records a payout: debit the provider's available balance, credit the broker's payouts. At
     * most the available balance (409 insufficient_balance otherwise, nothing posted). The
     * reference is the idempotency key per provider and book: a retry with the same amount and
     * time answers the payout already recorded (`replayed`), posting nothing; the same reference
     * with other values is 409 reference_reused.
     */
    payoutViolations: (input: unknown) => violationsOf(() => readPayout(input)),
    adjustmentViolations: (input: unknown) => violationsOf(() => readAdjustment(input)),

    async createPayout(actor: string, rawId: RawId, input: unknown): Promise<PayoutResult> {
      const { livemode, cents, reference, paidAt } = readPayout(input);
      const providerId = readProviderId(rawId);
      const book = { providerId, livemode };
      const key = `payout:${providerId}:${livemode ? "live" : "test"}:${reference}`;
      const legs = [
        { account: "available", cents: -cents },
        { account: "payouts", cents },
      ] as const;
      const result = await db.transaction().execute(async (trx) => {
        if ((await repo.readTerms(trx, providerId)) === null) throw providerNotFound(providerId);
        const posted = await repo.post(trx, {
          book,
          type: "payout",
          key,
          publicId: `po_${randomUUID().replaceAll("-", "")}`,
          at: now(),
          currency,
          legs,
          lead: null,
          reference,
          description: `Payout ${reference}`,
          details: { paid_at: paidAt.toISOString() },
          createdBy: actor,
          noOverdraft: "available",
        });
        if (posted.outcome === "insufficient") {
          const available = (await repo.balances(trx, book)).available ?? 0;
          throw new DomainError(
            "failed_precondition",
            `amount_cents ${cents} is more than the available balance (${available})`,
            {
              code: "insufficient_balance",
              violations: [
                {
                  field: "amount_cents",
                  code: "insufficient_balance",
                  message: `amount_cents must be at most the available balance, ${available}`,
                },
              ],
            },
          );
        }
        const stored = (await repo.transactionByKey(trx, key)) as repo.StoredTransaction;
        const payout = toPayout(stored);
        if (posted.outcome === "exists") {
          if (payout.amountCents !== cents || payout.paidAt.getTime() !== paidAt.getTime()) {
            throw referenceReused(`payout ${payout.id}`);
          }
          return { payout, replayed: true };
        }
        const around = await balancesAround(trx, book, legs);
        await recordAudit(trx, {
          actor,
          action: "payout.created",
          targetType: "provider",
          targetId: String(providerId),
          details: { provider_id: providerId, livemode, payout: payoutJson(payout), ...around },
        });
        await repo.insertMoneyEvent(trx, {
          eventId: newEventId(),
          providerId,
          livemode,
          type: "payout.created",
          data: { payout: payoutJson(payout) },
        });
        return { payout, replayed: false };
      });
      if (!result.replayed) deps.onEvent?.("payout.created");
      return result;
    },

    /**
     * Records a correction: a signed amount credited to (or taken from) the provider's available
     * balance against the broker's lead expense, with a reason the provider sees, optionally about
     * one of its leads. A correction never edits anything: it is a new transaction. With a
     * `reference`, a retry posts nothing again (as a payout's).
     */
    async createAdjustment(actor: string, rawId: RawId, input: unknown): Promise<AdjustmentResult> {
      const { livemode, cents, reason, reference, leadId } = readAdjustment(input);
      const providerId = readProviderId(rawId);
      const book = { providerId, livemode };
      const key =
        reference === undefined
          ? `adjustment:${randomUUID()}`
          : `adjustment:${providerId}:${livemode ? "live" : "test"}:${reference}`;
      const legs = [
        { account: "lead_expense", cents: -cents },
        { account: "available", cents },
      ] as const;
      const result = await db.transaction().execute(async (trx) => {
        if ((await repo.readTerms(trx, providerId)) === null) throw providerNotFound(providerId);
        const lead = leadId === undefined ? null : await repo.leadOfBook(trx, book, leadId);
        if (lead === undefined) {
          const book = livemode ? "live" : "test";
          throwIfViolations([
            {
              field: "lead_id",
              code: "not_found",
              message: `lead_id ${leadId} is not one of the provider's ${book} leads`,
            },
          ]);
        }
        const posted = await repo.post(trx, {
          book,
          type: "adjustment",
          key,
          publicId: `adj_${randomUUID().replaceAll("-", "")}`,
          at: now(),
          currency,
          legs,
          lead: lead ?? null,
          reference: reference ?? null,
          description: reason,
          details: { amount_cents: cents },
          createdBy: actor,
          noOverdraft: null,
        });
        const adjustment = toAdjustment((await repo.transactionByKey(trx, key)) as repo.StoredTransaction);
        if (posted.outcome === "exists") {
          if (adjustment.amountCents !== cents || adjustment.reason !== reason || adjustment.lead?.id !== lead?.id) {
            throw referenceReused(`adjustment ${adjustment.id}`);
          }
          return { adjustment, replayed: true };
        }
        const around = await balancesAround(trx, book, legs);
        await recordAudit(trx, {
          actor,
          action: "adjustment.created",
          targetType: "provider",
          targetId: String(providerId),
          details: { provider_id: providerId, livemode, adjustment: adjustmentJson(adjustment), ...around },
        });
        await repo.insertMoneyEvent(trx, {
          eventId: newEventId(),
          providerId,
          livemode,
          type: "adjustment.created",
          data: { adjustment: adjustmentJson(adjustment) },
        });
        return { adjustment, replayed: false };
      });
      if (!result.replayed) deps.onEvent?.("adjustment.created");
      return result;
    },

    /** Every provider's pending, available and paid-out money in one book, by provider id. */
    async payables(q: { mode?: string | undefined; pageSize?: number | undefined; pageToken?: string | undefined }) {
      const f = new Fields();
      const livemode = livemodeOf(f, q.mode);
      const page = readPageRequest(f, q, PAYABLES_PAGE);
      throwIfViolations(f.violations);
      const rows = await repo.payables(db, livemode, page.afterId ?? 0, page.size + 1);
      return pageOf(rows, page.size, (p: Payable) => p.providerId);
    },

    /** Every payable of one book, for a CSV (one row per provider with a book: bounded). */
    async allPayables(mode: string | undefined): Promise<Payable[]> {
      const f = new Fields();
      const livemode = livemodeOf(f, mode);
      throwIfViolations(f.violations);
      const out: Payable[] = [];
      for (let after = 0; ; ) {
        const rows = await repo.payables(db, livemode, after, 1000);
        out.push(...rows);
        if (rows.length < 1000) return out;
        after = (rows.at(-1) as Payable).providerId;
      }
    },

    /** Each book's accounts added up by type; every total is 0 while every transaction balances. */
    async trialBalance(): Promise<TrialBalance> {
      const rows = await repo.accountTotals(db);
      const books = [true, false].map((livemode) => {
        const accounts = { pending: 0, available: 0, lead_expense: 0, payouts: 0 };
        for (const r of rows) if (r.livemode === livemode) accounts[r.type] += r.cents;
        return { livemode, accounts, totalCents: Object.values(accounts).reduce((a, b) => a + b, 0) };
      });
      return { currency, asOf: now(), books, totalCents: books.reduce((n, b) => n + b.totalCents, 0) };
    },
  };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

function bodyOf(input: unknown): Record<string, unknown> {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throwIfViolations([{ field: "body", code: "invalid_type", message: "the body must be a JSON object" }]);
  }
  return input as Record<string, unknown>;
}

function unknownMembers(f: Fields, body: Record<string, unknown>, known: readonly string[]) {
  for (const k of Object.keys(body)) {
    if (!known.includes(k)) f.add(k, "unknown_field", `${k} is not a member (${known.join(", ")})`);
  }
}

function amountOf(f: Fields, body: Record<string, unknown>, bounds: { min: number; max: number }): number | undefined {
  if (body.amount_cents === undefined || body.amount_cents === null) {
    f.add("amount_cents", "required", "amount_cents is required");
    return undefined;
  }
  return readCents(f, "amount_cents", body.amount_cents, bounds);
}

/** The violations `check` throws (none: it passed). */
function violationsOf(check: () => unknown) {
  try {
    check();
    return [];
  } catch (err) {
    if (err instanceof DomainError) return [...err.violations];
    throw err;
  }
}

function referenceReused(what: string): DomainError {
  const message = `reference was already used for ${what} with other values`;
  return new DomainError("failed_precondition", message, {
    code: "reference_reused",
    violations: [{ field: "reference", code: "duplicate", message }],
  });
}

function toPayout(t: repo.StoredTransaction): Payout {
  return {
    id: t.publicId,
    providerId: t.providerId,
    livemode: t.livemode,
    amountCents: t.amountCents,
    currency: t.currency,
    reference: t.reference ?? "",
    paidAt: new Date(String(t.details.paid_at)),
    createdAt: t.createdAt,
    balanceTransaction: t.availableLine ?? "",
  };
}

function toAdjustment(t: repo.StoredTransaction): Adjustment {
  return {
    id: t.publicId,
    providerId: t.providerId,
    livemode: t.livemode,
    amountCents: Number(t.details.amount_cents),
    currency: t.currency,
    reason: t.description,
    lead: t.lead,
    reference: t.reference,
    createdAt: t.createdAt,
    balanceTransaction: t.availableLine ?? "",
  };
}
