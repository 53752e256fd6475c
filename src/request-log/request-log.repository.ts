/** All SQL about the request log and its daily outcome counts. */
import { CompiledQuery, type Kysely, sql } from "kysely";
import { customPlan } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import type { FieldViolation } from "../errors.ts";
import type { LeadOwner } from "../leads/lead.ts";
import type { Outcome, RequestLogEntry, StoredRequestLogEntry } from "./request-log.ts";

type Db = Kysely<Database>;

/** One day's create-lead requests of a provider, mode, sub-source and outcome code ('' = accepted). */
export interface OutcomeCount {
  readonly providerId: number;
  readonly livemode: boolean;
  readonly day: string;
  readonly subId: string;
  readonly code: string;
  readonly requests: number;
}

/**
 * A string as Postgres's JSON parser takes it into text: a lone UTF-16 surrogate (which a client
 * can send as `\ud800` in any JSON string) and NUL (`\u0000`, which no Postgres text holds)
 * become U+FFFD, so a batch is never refused for them and what is shown back is what was stored.
 */
function clean(s: string): string {
  const w = s.toWellFormed();
  return w.includes("\0") ? w.replaceAll("\0", "\ufffd") : w;
}

/** Every string of a value cleaned (clean), in keys and values alike. */
function wellFormed(v: unknown): unknown {
  if (typeof v === "string") return clean(v);
  if (Array.isArray(v)) return v.map(wellFormed);
  if (v !== null && typeof v === "object" && !(v instanceof Date)) {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(o)) {
      const key = clean(k);
      const value = wellFormed(o[k]);
      // A key `__proto__` is defined, not assigned (which would set the prototype), so it stays a key.
      if (key === "__proto__")
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }
  return v;
}

/** A text field, cleaned (clean). */
export const text = (v: string | null): string | null => (typeof v === "string" ? clean(v) : null);

/** What the writer keeps of an entry's body (request-log.mask.ts), and what it knows of the rest. */
export interface StoredBody {
  readonly body: unknown;
  readonly truncated: boolean;
  readonly bytes: number | null;
  readonly sha256: string | null;
}

/** A refusal's detail and field errors are the service's own, but bounded all the same. */
const MAX_DETAIL = 1000;
const MAX_ERRORS = 50;
const cutText = (s: string | null, max: number) => (s !== null && s.length > max ? `${s.slice(0, max)}…` : s);

/**
 * An entry as one JSON object of request_log's columns, its body as the writer keeps it. Made
 * when the entry is recorded (after its answer was sent): the queue holds one string per entry
 * rather than an entry object with twenty fields and the parsed body, which would outlive a few
 * young-generation collections and be copied into the old generation with every request.
 */
export function entryRow(e: RequestLogEntry, stored: StoredBody): string {
  const row = JSON.stringify({
    request_id: text(e.requestId),
    created_at: e.createdAt.toISOString(),
    provider_id: e.providerId,
    livemode: e.livemode,
    operation: text(e.operation),
    protocol: e.protocol,
    status: e.status,
    rpc_code: e.rpcCode,
    outcome: e.outcome,
    code: text(e.code),
    detail: text(cutText(e.detail, MAX_DETAIL)),
    errors: e.errors.length > 0 ? wellFormed(e.errors.slice(0, MAX_ERRORS)) : null,
    external_id: text(e.externalId),
    lead_id: e.leadId,
    // JSON has no NaN or Infinity (stringify writes null); Postgres's real takes them as text.
    duration_ms: Number.isFinite(e.durationMs) ? e.durationMs : String(e.durationMs),
    client_ip: text(e.clientIp),
    key_hint: text(e.keyHint),
    user_agent: text(e.userAgent),
    request_body_bytes: stored.bytes,
    request_body_sha256: stored.sha256,
    request_body_truncated: stored.truncated,
  });
  return stored.body === null || stored.body === undefined
    ? row
    : `${row.slice(0, -1)},"request_body":${JSON.stringify(wellFormed(stored.body))}}`;
}

/** The columns a row fills (entry_id is the table's default). */
const ENTRY_COLUMNS = [
  "request_id",
  "created_at",
  "provider_id",
  "livemode",
  "operation",
  "protocol",
  "status",
  "rpc_code",
  "outcome",
  "code",
  "detail",
  "errors",
  "external_id",
  "lead_id",
  "duration_ms",
  "client_ip",
  "key_hint",
  "user_agent",
  "request_body",
  "request_body_bytes",
  "request_body_sha256",
  "request_body_truncated",
].join(", ");

/**
 * A batch goes in as one JSON array of rows, read by `json_populate_recordset`: one parameter
 * whatever the batch's size, so one prepared statement, and the rows are parsed by Postgres
 * rather than escaped by the client into nineteen text arrays, one per column, for an `unnest`
 * (as it was before). A VALUES list made a text per batch size, each prepared on every connection
 * (5.7 MiB of texts in a heap snapshot).
 */
const INSERT_ENTRIES = `insert into request_log (${ENTRY_COLUMNS}) select ${ENTRY_COLUMNS} from json_populate_recordset(null::request_log, $1::json)`;

/** Requests of one minute, provider (0: none), mode, outcome code and (answered reads) operation counted instead of listed. */
export interface Tally {
  readonly minute: Date;
  readonly providerId: number;
  readonly mode: "live" | "test" | "none";
  readonly outcome: string;
  readonly code: string;
  /** '' but for answered reads: the route or RPC method. */
  readonly operation: string;
  readonly requests: number;
}

/**
 * Stores a batch of rows (entryRow), adds its create-lead outcomes to the daily counts and its
 * unlisted requests to the tallies, in one transaction: the counts never include an entry the log
 * lost, or miss one it kept.
 */
export async function insertEntries(
  db: Db,
  rows: readonly string[],
  counts: readonly OutcomeCount[],
  tallies: readonly Tally[] = [],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (rows.length > 0) await trx.executeQuery(CompiledQuery.raw(INSERT_ENTRIES, [`[${rows.join(",")}]`]));
    if (tallies.length > 0) {
      // Sorted by key by the caller, so two instances adding to the same rows lock them in order.
      await trx
        .insertInto("request_log_tallies")
        .values(
          tallies.map((t) => ({
            minute: t.minute,
            provider_id: t.providerId,
            mode: t.mode,
            outcome: t.outcome,
            code: t.code,
            operation: t.operation,
            requests: t.requests,
          })),
        )
        .onConflict((oc) =>
          oc
            .columns(["minute", "provider_id", "mode", "outcome", "code", "operation"])
            .doUpdateSet({ requests: sql<number>`request_log_tallies.requests + excluded.requests` }),
        )
        .execute();
    }
    if (counts.length === 0) return;
    // Sorted by key, so two instances adding to the same rows lock them in the same order.
    await trx
      .insertInto("request_outcomes_daily")
      .values(
        counts.map((c) => ({
          provider_id: c.providerId,
          livemode: c.livemode,
          day: c.day,
          sub_id: c.subId,
          code: c.code,
          requests: c.requests,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["provider_id", "livemode", "day", "sub_id", "code"])
          .doUpdateSet({ requests: sql<number>`request_outcomes_daily.requests + excluded.requests` }),
      )
      .execute();
  });
}

export interface EntryFilter {
  readonly outcome?: Outcome | undefined;
  readonly code?: string | undefined;
  readonly status?: number | undefined;
  readonly externalId?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  /** Entries after this one in the list's order (newest first). */
  readonly after?: { readonly createdAt: Date; readonly entryId: string } | undefined;
}

export interface AdminEntryFilter extends EntryFilter {
  readonly providerId?: number | undefined;
  readonly livemode?: boolean | undefined;
  readonly requestId?: string | undefined;
  readonly clientIp?: string | undefined;
}

const COLUMNS = [
  "entry_id",
  "request_id",
  "created_at",
  "provider_id",
  "livemode",
  "operation",
  "protocol",
  "status",
  "rpc_code",
  "outcome",
  "code",
  "detail",
  "errors",
  "external_id",
  "lead_id",
  "duration_ms",
  "client_ip",
  "key_hint",
  "user_agent",
  "request_body",
  "request_body_bytes",
  "request_body_sha256",
  "request_body_truncated",
] as const;

type Row = {
  entry_id: string;
  request_id: string;
  created_at: Date;
  provider_id: number | string | null;
  livemode: boolean | null;
  operation: string;
  protocol: string;
  status: number;
  rpc_code: string | null;
  outcome: string;
  code: string | null;
  detail: string | null;
  errors: unknown;
  external_id: string | null;
  lead_id: number | string | null;
  duration_ms: number;
  client_ip: string | null;
  key_hint: string | null;
  user_agent: string | null;
  request_body: unknown;
  request_body_bytes: number | null;
  request_body_sha256: string | null;
  request_body_truncated: boolean;
};

function entryOf(row: Row): StoredRequestLogEntry {
  return {
    entryId: row.entry_id,
    requestId: row.request_id,
    createdAt: row.created_at,
    providerId: row.provider_id === null ? null : Number(row.provider_id),
    livemode: row.livemode,
    operation: row.operation,
    protocol: row.protocol,
    status: row.status,
    rpcCode: row.rpc_code,
    outcome: row.outcome as Outcome,
    code: row.code,
    detail: row.detail,
    errors: (row.errors as FieldViolation[] | null) ?? [],
    externalId: row.external_id,
    leadId: row.lead_id === null ? null : Number(row.lead_id),
    durationMs: row.duration_ms,
    clientIp: row.client_ip,
    keyHint: row.key_hint,
    userAgent: row.user_agent,
    requestBody: row.request_body ?? null,
    requestBodyBytes: row.request_body_bytes,
    requestBodySha256: row.request_body_sha256,
    requestBodyTruncated: row.request_body_truncated,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: one filter builder serves the provider's and the admin's query
function applyFilter(query: any, f: EntryFilter): any {
  let q = query;
  if (f.outcome !== undefined) q = q.where("outcome", "=", f.outcome);
  if (f.code !== undefined) q = q.where("code", "=", f.code);
  if (f.status !== undefined) q = q.where("status", "=", f.status);
  if (f.externalId !== undefined) q = q.where("external_id", "=", f.externalId);
  if (f.createdAfter !== undefined) q = q.where("created_at", ">", f.createdAfter);
  if (f.createdBefore !== undefined) q = q.where("created_at", "<", f.createdBefore);
  if (f.after !== undefined) {
    const { createdAt, entryId } = f.after;
    q = q.where(sql`(created_at, entry_id)`, "<", sql`(${createdAt}, ${entryId}::uuid)`);
  }
  return q.orderBy("created_at", "desc").orderBy("entry_id", "desc");
}

/**
 * A provider-and-mode query with the filter, ordered and limited, so that only refusals asked for
 * can use request_log_provider_refused_idx: the planner must be able to prove that the partial
 * index (status >= 400) holds every row wanted, in a generic plan too. A status of 400 or more: the
 * statement is sent unnamed, planned for its value (a constant in the text would make a prepared
 * statement per status and fill the process's list of them). An outcome other than accepted: its
 * equivalent (outcomeOf: accepted ⇔ status < 400, migration 0017's CHECK) as a constant, whose
 * estimate beside the outcome migration 0016's statistics make right (beside a status filter it
 * would be a second clause on the same column, and halve the estimate again).
 */
// biome-ignore lint/suspicious/noExplicitAny: the provider's and the admin's query builders
function refusals(query: any, filter: EntryFilter, limit: number): any {
  const refusedStatus = filter.status !== undefined && filter.status >= 400;
  let q = query;
  if (!refusedStatus && filter.outcome !== undefined && filter.outcome !== "accepted") {
    q = q.where(sql<boolean>`status >= 400`);
  }
  q = applyFilter(q, filter).limit(limit);
  return refusedStatus ? customPlan(q) : q;
}

/** One page of a provider's own entries of one mode, newest first (request_log_provider_idx, or request_log_provider_refused_idx for refusals). */
export async function listProviderEntries(
  db: Db,
  owner: LeadOwner,
  filter: EntryFilter,
  limit: number,
): Promise<StoredRequestLogEntry[]> {
  const base = db
    .selectFrom("request_log")
    .select(COLUMNS)
    .where("provider_id", "=", owner.providerId)
    .where("livemode", "=", owner.livemode);
  const rows: Row[] = await refusals(base, filter, limit).execute();
  return rows.map(entryOf);
}

/** The newest entry with this request id among a provider's own of one mode. */
export async function findProviderEntry(
  db: Db,
  owner: LeadOwner,
  requestId: string,
): Promise<StoredRequestLogEntry | undefined> {
  const row = await db
    .selectFrom("request_log")
    .select(COLUMNS)
    .where("request_id", "=", requestId)
    .where("provider_id", "=", owner.providerId)
    .where("livemode", "=", owner.livemode)
    .orderBy("created_at", "desc")
    .orderBy("entry_id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row && entryOf(row as Row);
}

/**
 * One page of every provider's entries, newest first. A provider's entries of both modes are read
 * as two index ranges merged (request_log_provider_idx is by provider and mode), not sorted whole.
 */
export async function listEntries(db: Db, filter: AdminEntryFilter, limit: number): Promise<StoredRequestLogEntry[]> {
  const one = (livemode: boolean | undefined) => {
    let q = db.selectFrom("request_log").select(COLUMNS);
    if (filter.providerId !== undefined) q = q.where("provider_id", "=", filter.providerId);
    if (livemode !== undefined) q = q.where("livemode", "=", livemode);
    if (filter.requestId !== undefined) q = q.where("request_id", "=", filter.requestId);
    if (filter.clientIp !== undefined) q = q.where("client_ip", "=", filter.clientIp);
    // A provider and a mode: the provider's own index, or its refusals' (as listProviderEntries).
    // Otherwise planned for its values: a status below 400 and one of 400 or more have each
    // their partial index, which a generic plan could not choose between.
    return filter.providerId !== undefined && livemode !== undefined
      ? refusals(q, filter, limit)
      : customPlan(applyFilter(q, filter).limit(limit));
  };
  if (filter.providerId !== undefined && filter.livemode === undefined) {
    const [live, test] = await Promise.all([one(true).execute(), one(false).execute()]);
    const rows = [...(live as Row[]), ...(test as Row[])].sort(
      (a, b) =>
        b.created_at.getTime() - a.created_at.getTime() ||
        (a.entry_id < b.entry_id ? 1 : a.entry_id > b.entry_id ? -1 : 0),
    );
    return rows.slice(0, limit).map(entryOf);
  }
  const rows: Row[] = await one(filter.livemode).execute();
  return rows.map(entryOf);
}

/** The newest entry with this request id, whoever sent it. */
export async function findEntry(db: Db, requestId: string): Promise<StoredRequestLogEntry | undefined> {
  const row = await db
    .selectFrom("request_log")
    .select(COLUMNS)
    .where("request_id", "=", requestId)
    .orderBy("created_at", "desc")
    .orderBy("entry_id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row && entryOf(row as Row);
}

/** Deletes up to `batch` entries older than `before` (oldest first, by request_log_created_idx); how many it deleted. */
export async function deleteEntriesBefore(db: Db, before: Date, batch: number): Promise<number> {
  const result = await sql`
    delete from request_log where ctid = any(array(
      select ctid from request_log where created_at < ${before} order by created_at limit ${batch}))`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes the tallies older than `before` (a few rows a minute at most); how many it deleted. */
export async function deleteTalliesBefore(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom("request_log_tallies").where("minute", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface TallyFilter {
  readonly providerId?: number | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  /** Tallies after this one in the list's order (newest minute first, then provider, mode, outcome, code, operation). */
  readonly after?: Omit<Tally, "requests"> | undefined;
}

/** One page of the tallies, newest minute first (the primary key, read backwards). */
export async function listTallies(db: Db, filter: TallyFilter, limit: number): Promise<Tally[]> {
  let q = db.selectFrom("request_log_tallies").selectAll();
  if (filter.providerId !== undefined) q = q.where("provider_id", "=", filter.providerId);
  if (filter.createdAfter !== undefined) q = q.where("minute", ">", filter.createdAfter);
  if (filter.createdBefore !== undefined) q = q.where("minute", "<", filter.createdBefore);
  if (filter.after !== undefined) {
    const a = filter.after;
    q = q.where(
      sql`(minute, provider_id, mode, outcome, code, operation)`,
      "<",
      sql`(${a.minute}, ${a.providerId}, ${a.mode}, ${a.outcome}, ${a.code}, ${a.operation})`,
    );
  }
  const rows = await q
    .orderBy("minute", "desc")
    .orderBy("provider_id", "desc")
    .orderBy("mode", "desc")
    .orderBy("outcome", "desc")
    .orderBy("code", "desc")
    .orderBy("operation", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    minute: r.minute,
    providerId: Number(r.provider_id),
    mode: r.mode,
    outcome: r.outcome,
    code: r.code,
    operation: r.operation,
    requests: Number(r.requests),
  }));
}
