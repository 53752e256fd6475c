/**
 * All SQL about returns (table lead_returns, migration 0020), and the settlement queue's hold. The
 * ledger is written only through money/'s `post()` (ledger_post()).
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import type { Book } from "../money/money.ts";
import type { Contest, LeadReturn, ReturnReason, ReturnState } from "./returns.ts";

type Db = Kysely<Database>;

interface ReturnRow {
  id: string | number;
  public_id: string;
  lead_id: string | number;
  provider_id: string | number;
  livemode: boolean;
  lead_external_id: string;
  lead_order_number: string;
  state: ReturnState;
  reason: ReturnReason;
  note: string | null;
  amount_cents: string | number;
  currency: string;
  requested_at: Date | string;
  contest_deadline: Date | string;
  contest: StoredContest | string | null;
  decided_at: Date | string | null;
  decision_note: string | null;
}

interface StoredContest {
  statement: string;
  evidence: {
    consent_certificate_url: string | null;
    recording_url: string | null;
    attachments: { name: string; url: string }[];
  };
  contested_at: string;
  contested_by: string;
}

const date = (d: Date | string) => new Date(d);

function toReturn(r: ReturnRow): LeadReturn & { seq: number } {
  const c = typeof r.contest === "string" ? (JSON.parse(r.contest) as StoredContest) : r.contest;
  const contest: Contest | null =
    c === null
      ? null
      : {
          statement: c.statement,
          evidence: {
            consentCertificateUrl: c.evidence.consent_certificate_url,
            recordingUrl: c.evidence.recording_url,
            attachments: c.evidence.attachments,
          },
          contestedAt: new Date(c.contested_at),
        };
  return {
    seq: Number(r.id),
    id: r.public_id,
    lead: { id: Number(r.lead_id), externalId: r.lead_external_id, orderNumber: r.lead_order_number },
    providerId: Number(r.provider_id),
    livemode: r.livemode,
    state: r.state,
    reason: r.reason,
    note: r.note,
    requestedAt: date(r.requested_at),
    contestDeadline: date(r.contest_deadline),
    contest,
    decidedAt: r.decided_at === null ? null : date(r.decided_at),
    decisionNote: r.decision_note,
    amountCents: Number(r.amount_cents),
    currency: r.currency,
  };
}

const COLUMNS = sql.raw(`r.id, r.public_id, r.lead_id, r.provider_id, r.livemode, r.lead_external_id,
  r.lead_order_number, r.state, r.reason, r.note, r.amount_cents, r.currency, r.requested_at, r.contest_deadline,
  r.contest, r.decided_at, r.decision_note`);

/** Serializes every return of one provider (filing checks the monthly cap): a lock on its row. */
export async function lockProvider(db: Db, providerId: number): Promise<boolean> {
  const { rows } = await sql`select id from providers where id = ${providerId}::bigint for no key update`.execute(db);
  return rows.length > 0;
}

export interface ReturnableLead {
  readonly id: number;
  readonly providerId: number;
  readonly livemode: boolean;
  readonly externalId: string;
  readonly orderNumber: string;
  readonly acceptedAt: Date;
  readonly priceCents: number | null;
  readonly currency: string | null;
}

export async function leadById(db: Db, leadId: number): Promise<ReturnableLead | undefined> {
  const { rows } = await sql<{
    id: string | number;
    provider_id: string | number;
    livemode: boolean;
    external_id: string;
    order_number: string;
    created_at: Date | string;
    price_cents: string | number | null;
    price_currency: string | null;
  }>`select id, provider_id, livemode, external_id, order_number, created_at, price_cents, price_currency
     from leads where id = ${leadId}::bigint`.execute(db);
  const r = rows[0];
  return (
    r && {
      id: Number(r.id),
      providerId: Number(r.provider_id),
      livemode: r.livemode,
      externalId: r.external_id,
      orderNumber: r.order_number,
      acceptedAt: new Date(r.created_at),
      priceCents: r.price_cents === null ? null : Number(r.price_cents),
      currency: r.price_currency,
    }
  );
}

/** A provider's counted returns and billable leads in [start, end) of one book (the monthly cap). */
export async function monthCounts(db: Db, book: Book, start: Date, end: Date) {
  const { rows } = await sql<{ returns: string | number; billable: string | number }>`
    select
      (select count(*) from lead_returns r
       where r.provider_id = ${book.providerId}::bigint and r.livemode = ${book.livemode}
         and r.requested_at >= ${start}::timestamptz and r.requested_at < ${end}::timestamptz
         and r.state in ('requested', 'contested', 'approved')) as returns,
      (select count(*) from leads l
       where l.provider_id = ${book.providerId}::bigint and l.livemode = ${book.livemode}
         and l.created_at >= ${start}::timestamptz and l.created_at < ${end}::timestamptz
         and l.price_cents is not null) as billable`.execute(db);
  const r = rows[0] as { returns: string | number; billable: string | number };
  return { returns: Number(r.returns), billable: Number(r.billable) };
}

export async function returnOfLead(db: Db, leadId: number): Promise<LeadReturn | undefined> {
  const { rows } =
    await sql<ReturnRow>`select ${COLUMNS} from lead_returns r where r.lead_id = ${leadId}::bigint`.execute(db);
  return rows[0] && toReturn(rows[0]);
}

export interface NewReturn {
  readonly publicId: string;
  readonly lead: ReturnableLead;
  readonly reason: ReturnReason;
  readonly note: string | null;
  readonly amountCents: number;
  readonly currency: string;
  readonly requestedAt: Date;
  readonly requestedBy: string;
  readonly contestDeadline: Date;
}

export async function insertReturn(db: Db, n: NewReturn): Promise<LeadReturn> {
  const { rows } = await sql<ReturnRow>`
    insert into lead_returns as r (public_id, lead_id, provider_id, livemode, lead_external_id, lead_order_number,
      state, reason, note, amount_cents, currency, requested_at, requested_by, contest_deadline)
    values (${n.publicId}, ${n.lead.id}::bigint, ${n.lead.providerId}::bigint, ${n.lead.livemode},
      ${n.lead.externalId}, ${n.lead.orderNumber}, 'requested', ${n.reason}, ${n.note}, ${n.amountCents}::bigint,
      ${n.currency}, ${n.requestedAt}::timestamptz, ${n.requestedBy}, ${n.contestDeadline}::timestamptz)
    returning ${COLUMNS}`.execute(db);
  return toReturn(rows[0] as ReturnRow);
}

/** The return with this public id, locked for the caller's transaction when `lock`. */
export async function findReturn(db: Db, publicId: string, lock = false): Promise<LeadReturn | undefined> {
  const { rows } = await sql<ReturnRow>`
    select ${COLUMNS} from lead_returns r where r.public_id = ${publicId} ${sql.raw(lock ? "for update" : "")}`.execute(
    db,
  );
  return rows[0] && toReturn(rows[0]);
}

/** The book's return of the lead with this external_id, locked. */
export async function findOwnReturn(db: Db, book: Book, externalId: string): Promise<LeadReturn | undefined> {
  const { rows } = await sql<ReturnRow>`
    select ${COLUMNS} from lead_returns r
    where r.provider_id = ${book.providerId}::bigint and r.livemode = ${book.livemode}
      and r.lead_external_id = ${externalId}
    for update`.execute(db);
  return rows[0] && toReturn(rows[0]);
}

export async function setContest(db: Db, publicId: string, contest: StoredContest): Promise<LeadReturn> {
  const { rows } = await sql<ReturnRow>`
    update lead_returns r set state = 'contested', contest = ${JSON.stringify(contest)}::jsonb
    where r.public_id = ${publicId} returning ${COLUMNS}`.execute(db);
  return toReturn(rows[0] as ReturnRow);
}

export async function setDecision(
  db: Db,
  publicId: string,
  d: { state: ReturnState; at: Date; by: string; note: string | null },
): Promise<LeadReturn> {
  const { rows } = await sql<ReturnRow>`
    update lead_returns r set state = ${d.state}, decided_at = ${d.at}::timestamptz, decided_by = ${d.by},
      decision_note = ${d.note}
    where r.public_id = ${publicId} returning ${COLUMNS}`.execute(db);
  return toReturn(rows[0] as ReturnRow);
}

const purchaseOf = (leadId: number) => `lead:${leadId}:purchase`;

/** Holds (or releases) the lead's purchase on the settlement queue; false when it has settled already. */
export async function holdSettlement(db: Db, leadId: number, held: boolean): Promise<boolean> {
  const r = await sql`
    update ledger_settlement_queue q set held = ${held}
    where q.transaction_id = (select t.id from ledger_transactions t where t.idempotency_key = ${purchaseOf(leadId)})`.execute(
    db,
  );
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** Takes the lead's purchase off the settlement queue (it is returned): true when it was still there (pending). */
export async function unqueueSettlement(db: Db, leadId: number): Promise<boolean> {
  const r = await sql`
    delete from ledger_settlement_queue q
    where q.transaction_id = (select t.id from ledger_transactions t where t.idempotency_key = ${purchaseOf(leadId)})`.execute(
    db,
  );
  return Number(r.numAffectedRows ?? 0) > 0;
}

/** Whether the lead's purchase was ever posted (a lead stored with a price always has one). */
export async function purchasePosted(db: Db, leadId: number): Promise<boolean> {
  const { rows } = await sql`select 1 from ledger_transactions where idempotency_key = ${purchaseOf(leadId)}`.execute(
    db,
  );
  return rows.length > 0;
}

/** The oldest requested return whose contest deadline has passed, locked (SKIP LOCKED); its public id. */
export async function claimDue(db: Db, now: Date): Promise<string | undefined> {
  const { rows } = await sql<{ public_id: string }>`
    select r.public_id from lead_returns r
    where r.state = 'requested' and r.contest_deadline <= ${now}::timestamptz
    order by r.contest_deadline, r.id
    limit 1
    for update skip locked`.execute(db);
  return rows[0]?.public_id;
}

export interface ReturnFilter {
  readonly providerId?: number | undefined;
  readonly livemode?: boolean | undefined;
  readonly state?: ReturnState | undefined;
  readonly reason?: ReturnReason | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

function where(f: ReturnFilter) {
  const parts = [sql`true`];
  if (f.providerId !== undefined) parts.push(sql`r.provider_id = ${f.providerId}::bigint`);
  if (f.livemode !== undefined) parts.push(sql`r.livemode = ${f.livemode}`);
  if (f.state !== undefined) parts.push(sql`r.state = ${f.state}`);
  if (f.reason !== undefined) parts.push(sql`r.reason = ${f.reason}`);
  if (f.createdAfter !== undefined) parts.push(sql`r.requested_at > ${f.createdAfter}::timestamptz`);
  if (f.createdBefore !== undefined) parts.push(sql`r.requested_at < ${f.createdBefore}::timestamptz`);
  return sql.join(parts, sql` and `);
}

/** Newest first, after the return with internal id `beforeSeq` (a provider's list). */
export async function listNewest(db: Db, f: ReturnFilter, beforeSeq: number | undefined, limit: number) {
  const { rows } = await sql<ReturnRow>`
    select ${COLUMNS} from lead_returns r
    where ${where(f)} ${beforeSeq === undefined ? sql`` : sql`and r.id < ${beforeSeq}::bigint`}
    order by r.id desc limit ${limit}`.execute(db);
  return rows.map(toReturn);
}

/** By contest deadline, soonest first (the back office's queue), after (deadline, seq). */
export async function listByDeadline(
  db: Db,
  f: ReturnFilter,
  after: { deadline: Date; seq: number } | undefined,
  limit: number,
) {
  const { rows } = await sql<ReturnRow>`
    select ${COLUMNS} from lead_returns r
    where ${where(f)}
      ${after === undefined ? sql`` : sql`and (r.contest_deadline, r.id) > (${after.deadline}::timestamptz, ${after.seq}::bigint)`}
    order by r.contest_deadline, r.id limit ${limit}`.execute(db);
  return rows.map(toReturn);
}

/** The internal position of a return (a page token names its public id). */
export async function positionOf(db: Db, publicId: string, f: ReturnFilter) {
  const { rows } = await sql<{ id: string | number; contest_deadline: Date | string }>`
    select r.id, r.contest_deadline from lead_returns r where r.public_id = ${publicId} and ${where({
      providerId: f.providerId,
      livemode: f.livemode,
    })}`.execute(db);
  const r = rows[0];
  return r && { seq: Number(r.id), deadline: new Date(r.contest_deadline) };
}

/** A return event of the lead (data: the return as its provider sees it), in the caller's transaction. */
export async function insertReturnEvent(
  db: Db,
  e: { eventId: string; type: string; r: LeadReturn; data: unknown },
): Promise<void> {
  await sql`
    insert into lead_events (event_id, provider_id, livemode, lead_id, type, data)
    values (${e.eventId}, ${e.r.providerId}::bigint, ${e.r.livemode}, ${e.r.lead.id}::bigint, ${e.type},
      ${JSON.stringify(e.data)}::jsonb)`.execute(db);
}

export type { StoredContest };
