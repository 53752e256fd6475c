/**
 * All SQL about terms and the ledger (tables and functions of migration 0019). Every write to the
 * ledger goes through `ledger_post()`; rows are mapped to money.ts types here.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { CUSTOM_PLAN_MARK } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import type {
  AccountType,
  BalanceTransaction,
  Book,
  LedgerLead,
  Payable,
  ProviderAccount,
  TransactionType,
} from "./money.ts";

type Db = Kysely<Database>;

/** Plan a statement for its values on each call (a provider with 200 lines or 2 million). */
const perCall = sql.raw(CUSTOM_PLAN_MARK);

// ---- terms ----

export interface StoredTerms {
  readonly version: number;
  readonly terms: unknown;
  readonly effectiveAt: Date;
}

/** The provider's latest terms (undefined: never set); null when there is no such provider. */
export async function readTerms(db: Db, providerId: number): Promise<StoredTerms | undefined | null> {
  const { rows } = await sql<{ version: number | null; terms: unknown; effective_at: Date | null }>`
    select t.version, t.terms, t.effective_at
    from providers p
    left join lateral (
      select version, terms, effective_at from provider_terms
      where provider_id = p.id order by version desc limit 1) t on true
    where p.id = ${providerId}::bigint`.execute(db);
  const row = rows[0];
  if (row === undefined) return null;
  if (row.version === null || row.effective_at === null) return undefined;
  return { version: row.version, terms: row.terms, effectiveAt: new Date(row.effective_at) };
}

/** A new version of the provider's terms, in the caller's transaction; when it takes effect. */
export async function insertTerms(
  db: Db,
  providerId: number,
  version: number,
  terms: unknown,
  actor: string,
): Promise<Date> {
  const { rows } = await sql<{ effective_at: Date }>`
    insert into provider_terms (provider_id, version, terms, created_by)
    values (${providerId}::bigint, ${version}::integer, ${JSON.stringify(terms)}::jsonb, ${actor})
    returning effective_at`.execute(db);
  return new Date((rows[0] as { effective_at: Date }).effective_at);
}

/** An event of no lead (terms.changed, payout.created, adjustment.created), its data as published. */
export async function insertMoneyEvent(
  db: Db,
  e: { eventId: string; providerId: number; livemode: boolean; type: string; data: unknown },
): Promise<void> {
  await db
    .insertInto("lead_events")
    .values({
      event_id: e.eventId,
      provider_id: e.providerId,
      livemode: e.livemode,
      lead_id: null,
      type: e.type,
      data: JSON.stringify(e.data),
    })
    .execute();
}

/** The provider's name (a statement's heading). */
export async function providerName(db: Db, providerId: number): Promise<string> {
  const row = await db.selectFrom("providers").select("name").where("id", "=", providerId).executeTakeFirst();
  return row?.name ?? "";
}

// ---- posting ----

export interface Post {
  readonly book: Book;
  readonly type: TransactionType;
  readonly key: string;
  readonly publicId: string;
  readonly at: Date;
  readonly currency: string;
  /** The legs: account and signed amount; they sum to zero. */
  readonly legs: ReadonlyArray<{ readonly account: AccountType; readonly cents: number }>;
  readonly lead: LedgerLead | null;
  readonly reference: string | null;
  readonly description: string;
  readonly details: Readonly<Record<string, unknown>>;
  readonly createdBy: string;
  /** Refuse (`insufficient`) when this account would go below zero. */
  readonly noOverdraft: AccountType | null;
}

export type PostOutcome = "posted" | "exists" | "insufficient";

export async function post(db: Db, p: Post): Promise<{ transactionId: number | null; outcome: PostOutcome }> {
  const { rows } = await sql<{ txn_id: number | null; outcome: PostOutcome }>`
    select txn_id, outcome from ledger_post(
      ${p.book.providerId}::bigint, ${p.book.livemode}::boolean, ${p.type}::text, ${p.key}::text, ${p.publicId}::text,
      ${p.at}::timestamptz, ${p.currency}::text, ${p.legs.map((l) => l.account)}::text[],
      ${p.legs.map((l) => l.cents)}::bigint[], ${p.lead?.id ?? null}::bigint, ${p.lead?.externalId ?? null}::text,
      ${p.lead?.orderNumber ?? null}::text, ${p.reference}::text, ${p.description}::text,
      ${JSON.stringify(p.details)}::jsonb, ${p.createdBy}::text, ${p.noOverdraft}::text)`.execute(db);
  const row = rows[0] as { txn_id: number | null; outcome: PostOutcome };
  return { transactionId: row.txn_id, outcome: row.outcome };
}

export interface StoredTransaction {
  readonly id: number;
  readonly publicId: string;
  readonly providerId: number;
  readonly livemode: boolean;
  readonly type: TransactionType;
  readonly amountCents: number;
  readonly currency: string;
  readonly lead: LedgerLead | null;
  readonly reference: string | null;
  readonly description: string;
  readonly details: Record<string, unknown>;
  readonly createdAt: Date;
  /** The public id of its line on the provider's available account (payouts and adjustments). */
  readonly availableLine: string | null;
}

/** The transaction posted under an idempotency key, with its line on the available account. */
export async function transactionByKey(db: Db, key: string): Promise<StoredTransaction | undefined> {
  const { rows } = await sql<{
    id: number;
    public_id: string;
    provider_id: number;
    livemode: boolean;
    type: TransactionType;
    amount_cents: number;
    currency: string;
    lead_id: number | null;
    lead_external_id: string | null;
    lead_order_number: string | null;
    reference: string | null;
    description: string;
    details: Record<string, unknown>;
    created_at: Date;
    line: string | null;
  }>`
    select t.*, (select e.public_id from ledger_entries e
                 where e.transaction_id = t.id and e.account_type = 'available' limit 1) as line
    from ledger_transactions t where t.idempotency_key = ${key}`.execute(db);
  const r = rows[0];
  return (
    r && {
      id: r.id,
      publicId: r.public_id,
      providerId: r.provider_id,
      livemode: r.livemode,
      type: r.type,
      amountCents: Number(r.amount_cents),
      currency: r.currency,
      lead: leadOf(r),
      reference: r.reference,
      description: r.description,
      details: r.details ?? {},
      createdAt: new Date(r.created_at),
      availableLine: r.line,
    }
  );
}

function leadOf(r: {
  lead_id: number | null;
  lead_external_id: string | null;
  lead_order_number: string | null;
}): LedgerLead | null {
  return r.lead_id === null
    ? null
    : { id: Number(r.lead_id), externalId: r.lead_external_id ?? "", orderNumber: r.lead_order_number ?? "" };
}

/** The provider's lead of this book by id (what an adjustment may name). */
export async function leadOfBook(db: Db, book: Book, leadId: number): Promise<LedgerLead | undefined> {
  const row = await db
    .selectFrom("leads")
    .select(["id", "external_id", "order_number"])
    .where("id", "=", leadId)
    .where("provider_id", "=", book.providerId)
    .where("livemode", "=", book.livemode)
    .executeTakeFirst();
  return row && { id: row.id, externalId: row.external_id, orderNumber: row.order_number };
}

// ---- reading ----

/** The book's account balances (accounts never posted to are absent) and their currency. */
export async function balances(db: Db, book: Book): Promise<Partial<Record<AccountType, number>>> {
  const { rows } = await sql<{ type: AccountType; balance: number }>`
    select type, balance from ledger_accounts
    where provider_id = ${book.providerId}::bigint and livemode = ${book.livemode}::boolean`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.type, Number(r.balance)]));
}

export interface LineFilter {
  readonly type?: TransactionType | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly externalId?: string | undefined;
  /** Lines after this one in the list's order (newest first: older than it). */
  readonly before?: LinePosition | undefined;
}

export interface LinePosition {
  readonly createdAt: Date;
  readonly id: number;
}

interface LineRow {
  id: number;
  public_id: string;
  type: TransactionType;
  amount_cents: number;
  currency: string;
  balance_after_cents: number;
  account_type: ProviderAccount;
  created_at: Date;
  description: string;
  lead_id: number | null;
  lead_external_id: string | null;
  lead_order_number: string | null;
  reference: string | null;
}

const LINE_COLUMNS = sql`id, public_id, type, amount_cents, currency, balance_after_cents, account_type, created_at,
  description, lead_id, lead_external_id, lead_order_number, reference`;

/** The book's own lines (pending and available): the partial indexes' predicate, always. */
function ownLines(book: Book): RawBuilder<unknown> {
  return sql`provider_id = ${book.providerId}::bigint and livemode = ${book.livemode}::boolean
    and account_type in ('pending', 'available')`;
}

export function toLine(r: LineRow): BalanceTransaction & { position: LinePosition } {
  const createdAt = new Date(r.created_at);
  return {
    id: r.public_id,
    type: r.type,
    amountCents: Number(r.amount_cents),
    currency: r.currency,
    balanceAfterCents: Number(r.balance_after_cents),
    account: r.account_type,
    createdAt,
    description: r.description,
    lead: leadOf(r),
    reference: r.reference,
    position: { createdAt, id: Number(r.id) },
  };
}

/**
 * A position's time as the database keeps it: microseconds, which a Date (milliseconds) would cut,
 * so two lines of one transaction (a settlement's) on either side of a page's end could be lost.
 */
const positionTime = (p: LinePosition) => sql`(select e.created_at from ledger_entries e where e.id = ${p.id}::bigint)`;

/** One page of the book's lines, newest first. */
export async function listLines(db: Db, book: Book, f: LineFilter, limit: number) {
  const where = [ownLines(book)];
  if (f.type !== undefined) where.push(sql`type = ${f.type}`);
  if (f.createdAfter !== undefined) where.push(sql`created_at > ${f.createdAfter}::timestamptz`);
  if (f.createdBefore !== undefined) where.push(sql`created_at < ${f.createdBefore}::timestamptz`);
  if (f.externalId !== undefined) where.push(sql`lead_external_id = ${f.externalId}`);
  if (f.before !== undefined) {
    where.push(sql`(created_at, id) < (${positionTime(f.before)}, ${f.before.id}::bigint)`);
  }
  const { rows } = await sql<LineRow>`
    select ${LINE_COLUMNS} from ledger_entries where ${sql.join(where, sql` and `)}
    order by created_at desc, id desc limit ${limit}::integer ${perCall}`.execute(db);
  return rows.map(toLine);
}

/** Where the line with this public id is in the book's list (undefined: not this book's line). */
export async function linePosition(db: Db, book: Book, publicId: string): Promise<LinePosition | undefined> {
  const { rows } = await sql<{ created_at: Date; id: number }>`
    select created_at, id from ledger_entries where public_id = ${publicId} and ${ownLines(book)}`.execute(db);
  const r = rows[0];
  return r && { createdAt: new Date(r.created_at), id: Number(r.id) };
}

/** The time of the book's first line, or null. */
export async function firstLineAt(db: Db, book: Book): Promise<Date | null> {
  const { rows } = await sql<{ created_at: Date }>`
    select created_at from ledger_entries where ${ownLines(book)} order by created_at, id limit 1`.execute(db);
  return rows[0] ? new Date(rows[0].created_at) : null;
}

/**
 * Each of the book's two accounts' balance at each instant: the balance after its last line
 * before it (0 before the first). One index probe per account and instant.
 */
export async function balancesAt(
  db: Db,
  book: Book,
  instants: readonly Date[],
): Promise<Array<{ account: ProviderAccount; at: Date; cents: number }>> {
  if (instants.length === 0) return [];
  const { rows } = await sql<{ type: ProviderAccount; at: Date; balance: number | null }>`
    select a.type, b.at, (
      select e.balance_after_cents from ledger_entries e
      where e.account_id = a.id and e.created_at < b.at
      order by e.created_at desc, e.id desc limit 1) as balance
    from ledger_accounts a cross join unnest(${instants.map((d) => d.toISOString())}::timestamptz[]) as b(at)
    where a.provider_id = ${book.providerId}::bigint and a.livemode = ${book.livemode}::boolean
      and a.type in ('pending', 'available')`.execute(db);
  return rows.map((r) => ({ account: r.type, at: new Date(r.at), cents: Number(r.balance ?? 0) }));
}

/** The book's lines in [start, end) added up per account and type. */
export async function periodTotals(db: Db, book: Book, start: Date, end: Date) {
  const { rows } = await sql<{ account_type: ProviderAccount; type: TransactionType; cents: number; lines: number }>`
    select account_type, type, sum(amount_cents)::bigint as cents, count(*)::integer as lines
    from ledger_entries
    where ${ownLines(book)} and created_at >= ${start}::timestamptz and created_at < ${end}::timestamptz
    group by account_type, type ${perCall}`.execute(db);
  return rows.map((r) => ({ account: r.account_type, type: r.type, cents: Number(r.cents), lines: r.lines }));
}

/** Lines in [start, end), oldest first, after `after` (keyset), at most `limit`. */
export async function periodLines(
  db: Db,
  book: Book,
  start: Date,
  end: Date,
  after: LinePosition | undefined,
  limit: number,
) {
  const { rows } = await sql<LineRow>`
    select ${LINE_COLUMNS} from ledger_entries
    where ${ownLines(book)} and created_at >= ${start}::timestamptz and created_at < ${end}::timestamptz
      ${after === undefined ? sql`` : sql`and (created_at, id) > (${positionTime(after)}, ${after.id}::bigint)`}
    order by created_at, id limit ${limit}::integer ${perCall}`.execute(db);
  return rows.map(toLine);
}

// ---- jobs and the back office ----

/** Settles up to `limit` purchases due at `now` (one transaction); how many it settled. */
export async function settleDue(db: Db, now: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ settled: number }>`
    select ledger_settle_due(${now}::timestamptz, ${limit}::integer) as settled`.execute(db);
  return rows[0]?.settled ?? 0;
}

/** Every provider's balances in one mode, by provider id, after `afterProviderId`. */
export async function payables(db: Db, livemode: boolean, afterProviderId: number, limit: number): Promise<Payable[]> {
  const { rows } = await sql<{
    provider_id: number;
    name: string;
    currency: string;
    pending: number | null;
    available: number | null;
    payouts: number | null;
  }>`
    select a.provider_id, p.name, min(a.currency) as currency,
      sum(a.balance) filter (where a.type = 'pending') as pending,
      sum(a.balance) filter (where a.type = 'available') as available,
      sum(a.balance) filter (where a.type = 'payouts') as payouts
    from ledger_accounts a join providers p on p.id = a.provider_id
    where a.livemode = ${livemode}::boolean and a.provider_id > ${afterProviderId}::bigint
    group by a.provider_id, p.name
    order by a.provider_id limit ${limit}::integer`.execute(db);
  return rows.map((r) => ({
    providerId: Number(r.provider_id),
    providerName: r.name,
    livemode,
    currency: r.currency,
    pendingCents: Number(r.pending ?? 0),
    availableCents: Number(r.available ?? 0),
    paidOutCents: Number(r.payouts ?? 0),
  }));
}

/**
 * Purchases per calendar day in `zone` within [start, end): the pending lines of type
 * lead_purchase (one per purchased lead), of one provider's book, or of every provider's book of
 * one mode. Days without a purchase are absent.
 */
export async function purchasesPerDay(
  db: Db,
  scope: Book | { readonly livemode: boolean },
  zone: string,
  start: Date,
  end: Date,
): Promise<Array<{ day: string; cents: number; leads: number }>> {
  // One provider: its own lines' partial index (provider, mode, type, time); every provider: the
  // purchases' index by mode and time (db/indexes.ts).
  const who =
    "providerId" in scope
      ? sql`provider_id = ${scope.providerId}::bigint and livemode = ${scope.livemode}::boolean
          and account_type in ('pending', 'available') and type = 'lead_purchase'`
      : sql`livemode = ${scope.livemode}::boolean and type = 'lead_purchase' and account_type = 'pending'`;
  // Grouped by the business day as a date (a cast per row), formatted once per day: to_char on
  // every row cost nearly half the time at 200k rows.
  const { rows } = await sql<{ day: string; cents: number; leads: number }>`
    select to_char(d.day, 'YYYY-MM-DD') as day, d.cents, d.leads from (
      select (created_at at time zone ${zone})::date as day,
        sum(amount_cents)::bigint as cents, count(*)::integer as leads
      from ledger_entries
      where ${who} and created_at >= ${start}::timestamptz and created_at < ${end}::timestamptz
      group by 1) d ${perCall}`.execute(db);
  return rows.map((r) => ({ day: r.day, cents: Number(r.cents), leads: Number(r.leads) }));
}

/** The sum of every account's balance, per mode and account type. */
export async function accountTotals(db: Db) {
  const { rows } = await sql<{ livemode: boolean; type: AccountType; cents: number }>`
    select livemode, type, sum(balance)::bigint as cents from ledger_accounts group by livemode, type`.execute(db);
  return rows.map((r) => ({ livemode: r.livemode, type: r.type, cents: Number(r.cents) }));
}
