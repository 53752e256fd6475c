import { type Kysely, sql } from "kysely";

// The stats rollup rewrites today's rows of lead_stats_daily every minute (a delete and an
// insert: up to 2,300 rows at 5M leads), and every stats read finds today's rows through the
// day index with a bitmap scan, which walks their dead versions too (a bitmap scan never marks
// them dead in the index). Postgres vacuums a table once a fifth of its rows have died: 320,000
// at 5M leads, hours of rewrites, when a read spends 15 ms on them (17 ms at 267,000). Vacuuming
// after every 20,000 dead rows keeps that near a millisecond; each vacuum reads the table's two
// indexes (120 MB at 5M leads), every ten to twenty minutes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table lead_stats_daily set (autovacuum_vacuum_threshold = 20000, autovacuum_vacuum_scale_factor = 0)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table lead_stats_daily reset (autovacuum_vacuum_threshold, autovacuum_vacuum_scale_factor)`.execute(
    db,
  );
}
