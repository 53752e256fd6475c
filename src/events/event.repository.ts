/** All SQL about the lead_events outbox. */
import { type Kysely, sql } from "kysely";
import { customPlan } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { type DuplicateRow, duplicateFromRow } from "../leads/lead.repository.ts";
import type { Duplicate, Lead, LeadOwner } from "../leads/lead.ts";
import { type EventData, type EventType, type LeadEvent, rulesFromSnapshot } from "./event.ts";

type Db = Kysely<Database>;

/** Records an event in the caller's transaction (the same one as the change it describes). */
export async function insertLeadEvent(
  db: Db,
  e: { readonly eventId: string; readonly type: EventType; readonly lead: Lead },
): Promise<void> {
  await db
    .insertInto("lead_events")
    .values({
      event_id: e.eventId,
      provider_id: e.lead.providerId,
      livemode: e.lead.livemode,
      lead_id: e.lead.id,
      type: e.type,
      data: JSON.stringify({ lead: e.lead }),
    })
    .execute();
}

export interface EventFilter {
  readonly type?: EventType | undefined;
  readonly createdAfter?: Date | undefined;
  /**
   * Events before the one with this public id, of the same owner (the list runs newest first).
   * The page token names an event by its random public id, never by its outbox position, which
   * counts every provider's events.
   */
  readonly beforeEventId?: string | undefined;
}

/** One page of a provider's own events of one mode, newest first. */
export async function listProviderEvents(
  db: Db,
  owner: LeadOwner,
  filter: EventFilter,
  limit: number,
): Promise<LeadEvent[]> {
  let query = db
    .selectFrom("lead_events")
    .select(["id", "event_id", "provider_id", "livemode", "type", "created_at", "data"])
    .where("provider_id", "=", owner.providerId)
    .where("livemode", "=", owner.livemode);
  if (filter.type !== undefined) query = query.where("type", "=", filter.type);
  if (filter.createdAfter !== undefined) query = query.where("created_at", ">", filter.createdAfter);
  if (filter.beforeEventId !== undefined) {
    const before = filter.beforeEventId;
    query = query.where("id", "<", (eb) =>
      eb
        .selectFrom("lead_events")
        .select("id")
        .where("event_id", "=", before)
        .where("provider_id", "=", owner.providerId)
        .where("livemode", "=", owner.livemode),
    );
  }
  // Planned per call: the provider's size, the mode and created_after decide the index.
  const rows = await customPlan(query.orderBy("id", "desc").limit(limit)).execute();
  return rows.map((r) => ({
    id: r.event_id,
    sequence: r.id,
    providerId: r.provider_id,
    livemode: r.livemode,
    type: r.type as EventType,
    createdAt: r.created_at,
    ...eventPayload(r.data as EventData),
  }));
}

/** An event's lead, rules or published data (money's events), from its stored JSON. */
export function eventPayload(data: EventData): Pick<LeadEvent, "lead" | "intakeRules" | "data"> {
  if (data.intakeRules) return { intakeRules: rulesFromSnapshot(data.intakeRules) };
  if (data.lead === undefined) return { data: data as Record<string, unknown> };
  return { lead: leadFromSnapshot(data.lead as SnapshotLead) };
}

/** A lead as stored in an event's JSON (times as ISO strings). */
export type SnapshotLead = Omit<
  Lead,
  | "createdAt"
  | "updatedAt"
  | "stateChangedAt"
  | "history"
  | "livemode"
  | "duplicate"
  | "phoneE164"
  | "subId"
  | "sourceUrl"
  | "consent"
  | "vehicles"
  | "price"
  | "return"
> & {
  livemode?: boolean;
  phoneE164?: string | null;
  subId?: string | null;
  sourceUrl?: string | null;
  consent?: Lead["consent"];
  /** Snapshots written before leads had prices lack it. */
  price?: Lead["price"];
  /** A lead's return, times as ISO strings (snapshots written before returns lack it). */
  return?: {
    id: string;
    state: string;
    reason: string;
    note: string | null;
    requestedAt: string;
    contestDeadline: string;
    decidedAt: string | null;
    decisionNote: string | null;
  } | null;
  vehicles: Array<Omit<Lead["vehicles"][number], "vin"> & { vin?: string | null }>;
  /** The insert writes intake_guard's row form; later events the domain form (firstSeenAt as text). */
  duplicate?: DuplicateRow | (Omit<Duplicate, "firstSeenAt"> & { firstSeenAt: string }) | null;
  createdAt: string;
  updatedAt: string;
  stateChangedAt: string;
  history: (Omit<Lead["history"][number], "changedAt"> & { changedAt: string })[];
};

/** A lead stored as JSON in an event, with its times as Dates again (older snapshots: live). */
export function leadFromSnapshot(s: SnapshotLead): Lead {
  const d = s.duplicate;
  return {
    ...s,
    // Snapshots written before migration 0007 lack these.
    phoneE164: s.phoneE164 ?? null,
    subId: s.subId ?? null,
    sourceUrl: s.sourceUrl ?? null,
    consent: s.consent ?? null,
    price: s.price ?? null,
    return: s.return
      ? {
          ...s.return,
          requestedAt: new Date(s.return.requestedAt),
          contestDeadline: new Date(s.return.contestDeadline),
          decidedAt: s.return.decidedAt === null ? null : new Date(s.return.decidedAt),
        }
      : null,
    vehicles: s.vehicles.map((v) => ({ ...v, vin: v.vin ?? null })),
    duplicate: !d ? null : "matched_on" in d ? duplicateFromRow(d) : { ...d, firstSeenAt: new Date(d.firstSeenAt) },
    livemode: s.livemode ?? true,
    createdAt: new Date(s.createdAt),
    updatedAt: new Date(s.updatedAt),
    stateChangedAt: new Date(s.stateChangedAt),
    history: s.history.map((h) => ({ ...h, changedAt: new Date(h.changedAt) })),
  };
}

/**
 * Deletes up to `limit` of the oldest events with ids below `belowId` (the first event kept, see
 * db/id-boundary.ts), with their finished deliveries (whose attempts go with them, on delete
 * cascade), in one statement: one short transaction. An event with a pending delivery — a replay
 * asked for, or a retry still due — is kept until the delivery finishes.
 */
export async function deleteEventsBelow(db: Db, belowId: number, limit: number): Promise<number> {
  const result = await sql<{ n: number }>`
    with doomed as (
      select e.id from lead_events e
      where e.id < ${belowId}
        and not exists (select 1 from webhook_deliveries d where d.event_sequence = e.id and d.state = 'pending')
      order by e.id limit ${limit}),
    deliveries as (
      delete from webhook_deliveries where event_sequence in (select id from doomed) and state <> 'pending'),
    events as (delete from lead_events where id in (select id from doomed) returning 1)
    select count(*)::int as n from events`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}
