import { type Kysely, sql } from "kysely";

// Leads are mostly inserted, and Postgres vacuums a table for its inserts only after a fifth of
// its size (a million at 5M leads): until then the newest pages are not marked all-visible, and a
// count such as the provider list's leads this week (an index-only scan) visits each of those
// leads in the heap. Vacuuming after every 10,000 new leads keeps the recent pages
// visible. Such a vacuum reads the heap pages written since the last one, but GIN's clean-up also
// reads the whole trigram index (526 MB at 5M leads): at 6,800 leads a day, once a day and a half.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads set (autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads reset (autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor)`.execute(
    db,
  );
}
