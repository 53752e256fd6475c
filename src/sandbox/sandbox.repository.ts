/** All SQL of the sandbox: test leads due for their next move, and deleting test data. */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import type { LeadState } from "../leads/lead.ts";

type Db = Kysely<Database>;

/**
 * Test leads that still have a move to make (`unfinished`: per marker, the states and statuses
 * its scenario has not finished in), unchanged for at least `quietMs`, oldest first. Finished
 * leads are never selected: with them among the oldest, a limit of 100 once never reached the
 * new leads behind 100 finished ones.
 */
export async function dueTestLeads(db: Db, unfinished: readonly UnfinishedPosition[], quietMs: number, limit: number) {
  if (unfinished.length === 0) return [];
  const rows = await db
    .selectFrom("leads")
    .select(["id", "state", "lead_status", "note_from_shipper"])
    .where("livemode", "=", false)
    .where("state", "<>", "ORDER")
    .where("updated_at", "<=", sql<Date>`now() - make_interval(secs => ${quietMs / 1000}::double precision)`)
    .where((eb) =>
      eb.or(
        unfinished.map((u) =>
          eb.and([
            eb(sql<string>`trim(note_from_shipper)`, "=", u.marker),
            eb("state", "in", u.states),
            ...(u.statusNot === undefined ? [] : [eb("lead_status", "<>", u.statusNot)]),
          ]),
        ),
      ),
    )
    .orderBy("updated_at")
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    state: r.state as LeadState,
    leadStatus: r.lead_status,
    marker: r.note_from_shipper,
  }));
}

/** Where a marker's lead still has a move to make: in one of `states`, with a status other than `statusNot`. */
export interface UnfinishedPosition {
  readonly marker: string;
  readonly states: readonly LeadState[];
  readonly statusNot?: string;
}

/**
 * Deletes up to `batch` test leads (never live ones) of one provider, or of every provider,
 * created before a time, with their events, deliveries, vehicles and history, in one
 * transaction; returns how many leads went (less than `batch`: none are left).
 */
export async function deleteTestLeads(
  db: Db,
  which: { readonly providerId?: number; readonly createdBefore?: Date },
  batch: number,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let doomed = trx.selectFrom("leads").select("id").where("livemode", "=", false);
    if (which.providerId !== undefined) doomed = doomed.where("provider_id", "=", which.providerId);
    if (which.createdBefore !== undefined) doomed = doomed.where("created_at", "<", which.createdBefore);
    const ids = (await doomed.orderBy("id").limit(batch).forUpdate().execute()).map((r) => r.id);
    if (ids.length === 0) return 0;
    const events = trx.selectFrom("lead_events").select("id").where("lead_id", "in", ids);
    await trx.deleteFrom("webhook_deliveries").where("event_sequence", "in", events).execute();
    await trx.deleteFrom("lead_events").where("lead_id", "in", ids).where("livemode", "=", false).execute();
    // Vehicles and history go with their lead (on delete cascade).
    const deleted = await trx
      .deleteFrom("leads")
      .where("id", "in", ids)
      .where("livemode", "=", false)
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  });
}
