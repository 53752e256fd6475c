import { type Kysely, sql } from "kysely";

// Data at scale: every foreign key's referencing column leads an index,
// so deleting a referenced row never scans the referencing table. Without one on
// webhook_deliveries.event_sequence, deleting a lead event (sandbox retention, purge_test_data)
// checked the foreign key by reading every delivery: at 6.7M deliveries a batch of 500 test
// leads took minutes and the admin purge timed out and rolled back, every time.
// leads.origin_state_id and destination_state_id reference `states`, reference data nothing
// deletes (test/migrations.test.ts checks both: the indexes, and that no code deletes states).
// A plain CREATE INDEX (in the migration's transaction) blocks writes to webhook_deliveries while
// it builds; on a big database build it first with CREATE INDEX CONCURRENTLY under the same name
// (`if not exists` then skips it). Big-table indexes are now built concurrently after the migrations (src/db/indexes.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists webhook_deliveries_event_idx on webhook_deliveries (event_sequence)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists webhook_deliveries_event_idx`.execute(db);
}
