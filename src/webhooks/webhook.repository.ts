/** All SQL about webhook endpoints and deliveries (the outbox itself: events/event.repository.ts). */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import { eventPayload } from "../events/event.repository.ts";
import type { EventData } from "../events/event.ts";
import type { VersionedRules } from "../intake/intake-rules.ts";
import type { Lead } from "../leads/lead.ts";
import { chooseDeliveries, endpointsWithoutRoom, scanSize, scansTestDeliveries } from "./webhook.claim.ts";
import type { Delivery, DeliveryState, OutgoingEvent } from "./webhook.ts";

type Db = Kysely<Database>;

/** The NOTIFY channel that wakes the delivery workers of every instance. */
export const DELIVERY_CHANNEL = "webhook_deliveries";

/** Wakes every instance's workers (sent on its own, outside any writing transaction). */
export async function notifyWorkers(db: Db): Promise<void> {
  await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
}

export interface EndpointRow {
  readonly url: string | null;
  /** Subscribed event types; null: every type. */
  readonly eventTypes: readonly string[] | null;
  readonly secretCiphertext: string | null;
  readonly previousSecretCiphertext: string | null;
  readonly previousSecretExpiresAt: Date | null;
  readonly secretRotatedAt: Date | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
}

/** The provider's webhook URL and endpoint row; undefined when the provider does not exist. */
export async function findEndpoint(db: Db, providerId: number): Promise<EndpointRow | undefined> {
  const row = await db
    .selectFrom("providers as p")
    .leftJoin("webhook_endpoints as e", "e.provider_id", "p.id")
    .select([
      "p.webhook_url",
      "p.webhook_event_types",
      "e.secret_ciphertext",
      "e.previous_secret_ciphertext",
      "e.previous_secret_expires_at",
      "e.secret_rotated_at",
      "e.enabled",
      "e.disabled_reason",
    ])
    .where("p.id", "=", providerId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    url: row.webhook_url,
    eventTypes: row.webhook_event_types ?? null,
    secretCiphertext: row.secret_ciphertext,
    previousSecretCiphertext: row.previous_secret_ciphertext,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    secretRotatedAt: row.secret_rotated_at,
    enabled: row.enabled ?? true,
    disabledReason: row.disabled_reason,
  };
}

/** Gives the provider a signing secret unless it has one; true when it was created. */
export async function ensureEndpoint(db: Db, providerId: number, secretCiphertext: string): Promise<boolean> {
  const result = await db
    .insertInto("webhook_endpoints")
    .values({ provider_id: providerId, secret_ciphertext: secretCiphertext })
    .onConflict((oc) => oc.column("provider_id").doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Sends to the endpoint again (a new webhook_url was set). True when it had been disabled. */
export async function enableEndpoint(db: Db, providerId: number): Promise<boolean> {
  const result = await db
    .updateTable("webhook_endpoints")
    .set({ enabled: true, disabled_reason: null, disabled_at: null })
    .where("provider_id", "=", providerId)
    .where("enabled", "=", false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Stops sending to the endpoint: its pending deliveries become `disabled`. */
export async function disableEndpoint(db: Db, providerId: number, reason: string): Promise<void> {
  await db
    .updateTable("webhook_endpoints")
    .set({ enabled: false, disabled_reason: reason, disabled_at: sql<Date>`now()` })
    .where("provider_id", "=", providerId)
    .execute();
  await db
    .updateTable("webhook_deliveries")
    .set({ state: "disabled" })
    .where("provider_id", "=", providerId)
    .where("state", "=", "pending")
    .execute();
}

/** Replaces the secret; with an overlap the old one keeps signing until `previousExpiresAt`. */
export async function rotateSecret(
  db: Db,
  providerId: number,
  secretCiphertext: string,
  previousExpiresAt: Date | null,
): Promise<Date> {
  const row = await db
    .updateTable("webhook_endpoints")
    .set((eb) => ({
      previous_secret_ciphertext: previousExpiresAt === null ? null : eb.ref("secret_ciphertext"),
      previous_secret_expires_at: previousExpiresAt,
      secret_ciphertext: secretCiphertext,
      secret_rotated_at: sql<Date>`now()`,
    }))
    .where("provider_id", "=", providerId)
    .returning("secret_rotated_at")
    .executeTakeFirstOrThrow();
  return row.secret_rotated_at;
}

/** A delivery taken by a worker, with all it needs to send it. */
export interface ClaimedDelivery {
  readonly id: number;
  readonly providerId: number;
  /** False for a test lead's delivery. */
  readonly livemode: boolean;
  /** The attempt number this claim makes (1 for the first). */
  readonly attempt: number;
  readonly eventId: string;
  readonly type: string;
  readonly eventCreatedAt: Date;
  readonly lead: Lead | undefined;
  readonly intakeRules: VersionedRules | undefined;
  /** Money's events: the data as published. */
  readonly data: Readonly<Record<string, unknown>> | undefined;
  readonly url: string | null;
  readonly secretCiphertexts: readonly string[];
}

export interface ClaimLimits {
  /** Deliveries this claim may take. */
  readonly limit: number;
  /** Of which test-mode deliveries at most this many (the worker's free test slots). */
  readonly testLimit: number;
  /** Deliveries one endpoint (provider) may have in flight, across every instance. */
  readonly perEndpoint: number;
  readonly leaseMs: number;
}

interface ClaimedRow {
  readonly id: number;
  readonly provider_id: number;
  readonly livemode: boolean;
  readonly attempts: number;
  readonly event_id: string;
  readonly type: string;
  readonly event_created_at: Date;
  readonly data: EventData;
  readonly webhook_url: string | null;
  readonly secret_ciphertext: string | null;
  readonly previous_secret_ciphertext: string | null;
}

/** Advisory-lock key that serialises claims across instances (so the per-endpoint cap holds). */
const CLAIM_LOCK = 7_283_021;

/**
 * Takes due deliveries for this worker, fairly (the rules: webhook.claim.ts): each is leased (its
 * next attempt moved `leaseMs` ahead and `lease_expires_at` set), so a worker that dies
 * mid-delivery lets it come due again; a delivery waits while an earlier one of the same lead is
 * pending (being sent or retried), so a lead's events arrive in order. In one transaction under
 * an advisory lock, so two instances never both fill the same endpoint's free places: the
 * endpoints' in-flight counts are read, a bounded scan of the due rows of endpoints with room,
 * the choice, then the lease (SKIP LOCKED and the re-checked due condition keep a row from being
 * taken twice).
 */
export async function claimDue(db: Db, limits: ClaimLimits): Promise<ClaimedDelivery[]> {
  const { limit, perEndpoint, leaseMs } = limits;
  if (limit <= 0) return [];
  const result = await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    // Leased deliveries, whatever their state: one disabled mid-attempt is still being sent.
    const leased = await sql<{ provider_id: number; n: number }>`
      select provider_id, count(*)::int as n from webhook_deliveries
      where lease_expires_at is not null and lease_expires_at > clock_timestamp()
      group by provider_id`.execute(trx);
    const inFlight = new Map(leased.rows.map((r) => [Number(r.provider_id), Number(r.n)]));
    const full = endpointsWithoutRoom(inFlight, perEndpoint);
    const due = await sql<{ id: number; provider_id: number; livemode: boolean }>`
      select d.id, d.provider_id, d.livemode from webhook_deliveries d
      where d.state = 'pending' and d.next_attempt_at <= now()
        and (d.livemode or ${scansTestDeliveries(limits)}::boolean)
        and d.provider_id <> all(${full}::bigint[])
        and not exists (
          select 1 from webhook_deliveries earlier
          where earlier.lead_id = d.lead_id and earlier.state = 'pending' and earlier.id < d.id)
      order by d.next_attempt_at, d.id
      limit ${scanSize(limit)}`.execute(trx);
    const chosen = chooseDeliveries(
      due.rows.map((r) => ({ id: Number(r.id), providerId: Number(r.provider_id), livemode: r.livemode })),
      inFlight,
      limits,
    );
    if (chosen.length === 0) return [];
    const claimed = await sql<ClaimedRow>`
      with due as (
        select d.id from webhook_deliveries d
        where d.id = any(${chosen}::bigint[]) and d.state = 'pending' and d.next_attempt_at <= now()
        for update skip locked
      ),
      claimed as (
        update webhook_deliveries w
        -- clock_timestamp(): the lease runs from now, not from the start of the transaction
        -- (which may have waited for the claim lock).
        set attempts = w.attempts + 1, last_attempt_at = clock_timestamp(),
            next_attempt_at = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::double precision),
            lease_expires_at = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::double precision)
        from due where w.id = due.id
        returning w.id, w.provider_id, w.livemode, w.attempts, w.event_sequence
      )
      select c.id, c.provider_id, c.livemode, c.attempts, e.event_id, e.type, e.created_at as event_created_at, e.data,
             p.webhook_url, we.secret_ciphertext,
             case when we.previous_secret_expires_at > now() then we.previous_secret_ciphertext end
               as previous_secret_ciphertext
      from claimed c
      join lead_events e on e.id = c.event_sequence
      join providers p on p.id = c.provider_id
      left join webhook_endpoints we on we.provider_id = c.provider_id
      order by c.id`.execute(trx);
    return claimed.rows;
  });
  return result.map((r) => ({
    id: r.id,
    providerId: r.provider_id,
    livemode: r.livemode,
    attempt: r.attempts,
    eventId: r.event_id,
    type: r.type,
    eventCreatedAt: new Date(r.event_created_at),
    ...payloadOf(r.data),
    url: r.webhook_url,
    secretCiphertexts: [r.secret_ciphertext, r.previous_secret_ciphertext].filter((s): s is string => s !== null),
  }));
}

function payloadOf(data: EventData) {
  const { lead, intakeRules, data: published } = eventPayload(data);
  return { lead, intakeRules, data: published };
}

export interface AttemptLogEntry {
  readonly attempt: number;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly at: Date;
}

export interface TestSend {
  readonly eventId: string;
  readonly statusCode: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly at: Date;
}

export interface AttemptRecord {
  readonly state: DeliveryState;
  readonly statusCode: number | null;
  readonly error: string | null;
  /** When to try again (state pending); null otherwise. */
  readonly retryInMs: number | null;
  /** The attempt as sent, kept in webhook_attempts (absent when nothing was sent). */
  readonly sent?: { readonly providerId: number; readonly eventId: string; readonly latencyMs: number };
}

/**
 * Records an attempt's result, unless the delivery was claimed again or replayed since (the
 * attempt number no longer matches): a late answer never overwrites a newer one.
 */
export async function recordAttempt(db: Db, id: number, attempt: number, r: AttemptRecord): Promise<void> {
  const updated = await db
    .updateTable("webhook_deliveries")
    .set({
      state: r.state,
      last_status_code: r.statusCode,
      last_error: r.error,
      lease_expires_at: null,
      ...(r.state === "delivered" && { delivered_at: sql<Date>`now()` }),
      ...(r.retryInMs !== null && {
        next_attempt_at: sql<Date>`now() + make_interval(secs => ${r.retryInMs / 1000}::double precision)`,
      }),
    })
    .where("id", "=", id)
    .where("attempts", "=", attempt)
    .where("state", "=", "pending")
    .executeTakeFirst();
  if (r.sent && Number(updated.numUpdatedRows) > 0)
    await insertAttempt(db, { ...r.sent, deliveryId: id, attempt, statusCode: r.statusCode, error: r.error });
}

/** One attempt in webhook_attempts (deliveryId null: a webhook.test send). */
export async function insertAttempt(
  db: Db,
  a: {
    providerId: number;
    deliveryId: number | null;
    eventId: string;
    attempt: number;
    statusCode: number | null;
    latencyMs: number;
    error: string | null;
  },
): Promise<void> {
  await db
    .insertInto("webhook_attempts")
    .values({
      provider_id: a.providerId,
      delivery_id: a.deliveryId,
      event_id: a.eventId,
      attempt: a.attempt,
      status_code: a.statusCode,
      latency_ms: Math.round(a.latencyMs),
      error: a.error,
    })
    .execute();
}

/** A delivery's attempts, first to last. */
export async function listAttempts(db: Db, deliveryId: number): Promise<AttemptLogEntry[]> {
  const rows = await db
    .selectFrom("webhook_attempts")
    .select(["attempt", "status_code", "latency_ms", "error", "at"])
    .where("delivery_id", "=", deliveryId)
    .orderBy("attempt")
    .orderBy("id")
    .limit(100)
    .execute();
  return rows.map((r) => ({
    attempt: r.attempt,
    statusCode: r.status_code,
    latencyMs: r.latency_ms,
    error: r.error,
    at: r.at,
  }));
}

/** The provider's latest webhook.test sends, newest first. */
export async function listTestSends(db: Db, providerId: number, limit: number): Promise<TestSend[]> {
  const rows = await db
    .selectFrom("webhook_attempts")
    .select(["event_id", "status_code", "latency_ms", "error", "at"])
    .where("provider_id", "=", providerId)
    .where("delivery_id", "is", null)
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    eventId: r.event_id,
    statusCode: r.status_code,
    latencyMs: r.latency_ms,
    error: r.error,
    at: r.at,
  }));
}

/** Makes a pending delivery due now (unless an attempt is running: then when its lease ends). */
export async function retryNow(db: Db, id: number): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ next_attempt_at: sql<Date>`greatest(now(), coalesce(lease_expires_at, now()))` })
    .where("id", "=", id)
    .where("state", "=", "pending")
    .execute();
}

/**
 * When the next delivery that could be claimed is due (null: none pending). Deliveries waiting
 * behind an earlier one of the same lead are left out: they come due when that one finishes.
 */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const row = await sql<{ at: Date | null }>`
    select min(d.next_attempt_at) as at from webhook_deliveries d
    where d.state = 'pending' and not exists (
      select 1 from webhook_deliveries earlier
      where earlier.lead_id = d.lead_id and earlier.state = 'pending' and earlier.id < d.id)`.execute(db);
  const at = row.rows[0]?.at;
  return at === null || at === undefined ? null : new Date(at);
}

/** The retry queue for metrics: pending deliveries and the age of the oldest one's event. */
export async function queueStats(db: Db): Promise<{ pending: number; oldestAgeSeconds: number }> {
  const row = await sql<{ pending: number; oldest: number | null }>`
    select count(*)::integer as pending,
           extract(epoch from now() - min(e.created_at))::double precision as oldest
    from webhook_deliveries d join lead_events e on e.id = d.event_sequence
    where d.state = 'pending'`.execute(db);
  const r = row.rows[0];
  return { pending: r?.pending ?? 0, oldestAgeSeconds: r?.oldest ?? 0 };
}

function selectDeliveries(db: Db) {
  return db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("lead_events as e", "e.id", "d.event_sequence")
    .leftJoin("leads as l", "l.id", "d.lead_id")
    .select([
      "d.id",
      "d.provider_id",
      "e.event_id",
      "e.type",
      "e.livemode",
      "d.lead_id",
      "l.order_number",
      "d.state",
      "d.attempts",
      "d.last_status_code",
      "d.last_error",
      "d.last_attempt_at",
      "d.next_attempt_at",
      "d.delivered_at",
      "d.created_at",
    ]);
}

type DeliveryRow = Awaited<ReturnType<ReturnType<typeof selectDeliveries>["executeTakeFirstOrThrow"]>>;

function toDelivery(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    providerId: r.provider_id,
    eventId: r.event_id,
    type: r.type,
    livemode: r.livemode,
    leadId: r.lead_id,
    orderNumber: r.order_number ?? null,
    state: r.state as DeliveryState,
    attempts: r.attempts,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    lastAttemptAt: r.last_attempt_at,
    nextAttemptAt: r.state === "pending" ? r.next_attempt_at : null,
    deliveredAt: r.delivered_at,
    createdAt: r.created_at,
  };
}

/** One page of a provider's deliveries, newest first. */
export async function listDeliveries(
  db: Db,
  providerId: number,
  beforeId: number | undefined,
  limit: number,
): Promise<Delivery[]> {
  let query = selectDeliveries(db).where("d.provider_id", "=", providerId);
  if (beforeId !== undefined) query = query.where("d.id", "<", beforeId);
  const rows = await query.orderBy("d.id", "desc").limit(limit).execute();
  return rows.map(toDelivery);
}

export async function findDelivery(db: Db, providerId: number, id: number): Promise<Delivery | undefined> {
  const row = await selectDeliveries(db)
    .where("d.provider_id", "=", providerId)
    .where("d.id", "=", id)
    .executeTakeFirst();
  return row ? toDelivery(row) : undefined;
}

/** The event a delivery sends, as the worker builds it (the payload shown with a delivery). */
export async function findDeliveryEvent(db: Db, deliveryId: number): Promise<OutgoingEvent | undefined> {
  const row = await db
    .selectFrom("webhook_deliveries as d")
    .innerJoin("lead_events as e", "e.id", "d.event_sequence")
    .select(["e.event_id", "e.type", "e.created_at", "e.livemode", "e.data"])
    .where("d.id", "=", deliveryId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.event_id,
    type: row.type,
    occurredAt: new Date(row.created_at),
    livemode: row.livemode,
    ...payloadOf(row.data as EventData),
  };
}

/** Queues a finished delivery again as new (attempts from zero), due now, and wakes the workers. */
export async function requeue(db: Db, id: number): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    // Due now, or when an attempt still running (disabled mid-send) has its lease run out: a
    // replay never goes out beside the attempt it repeats. The lease itself is kept, so that
    // attempt still counts against the endpoint's cap.
    .set({
      state: "pending",
      attempts: 0,
      next_attempt_at: sql<Date>`greatest(now(), coalesce(lease_expires_at, now()))`,
      delivered_at: null,
    })
    .where("id", "=", id)
    .where("state", "<>", "pending")
    .execute();
  await notifyWorkers(db); // sent on commit
}

/**
 * Deletes up to `limit` of the oldest finished deliveries (delivered, failed, disabled) with ids
 * below `belowId` (the first delivery kept, see db/id-boundary.ts), with their attempts (on
 * delete cascade); pending ones stay whatever their age. The state is checked again on the row
 * deleted: a replay queued meanwhile is kept.
 */
export async function deleteFinishedDeliveriesBelow(db: Db, belowId: number, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_deliveries where state <> 'pending' and id in (
      select id from webhook_deliveries where id < ${belowId} and state <> 'pending' order by id limit ${limit})`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes up to `limit` test sends (attempts of no delivery) made before `before`. */
export async function deleteTestSendsBefore(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_attempts where id in (
      select id from webhook_attempts where delivery_id is null and at < ${before} order by at limit ${limit})`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}
