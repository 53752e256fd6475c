/**
 * Where "older than" ends in a table whose ids follow creation (identity columns written with
 * `created_at default now()`): the first id created at or after a time, found by a binary search
 * over the id range, each probe one primary-key lookup — about 40 of them at any size. Walking
 * the key instead reads every older row (5 s over 1.6M old events), which a retention backlog
 * would pay on every batch.
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";

export type TimeOrderedTable = "lead_events" | "webhook_deliveries";

/** The smallest id whose row was created at or after `at`; null when no row is. */
export async function firstIdCreatedAtOrAfter(
  db: Kysely<Database>,
  table: TimeOrderedTable,
  at: Date,
): Promise<number | null> {
  const t = sql.table(table);
  const range = await sql<{
    lo: number | null;
    hi: number | null;
  }>`select min(id) as lo, max(id) as hi from ${t}`.execute(db);
  const { lo: min, hi: max } = range.rows[0] ?? { lo: null, hi: null };
  if (min === null || max === null) return null;
  let lo = Number(min);
  let hi = Number(max) + 1;
  let found: number | null = null;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const row = (
      await sql<{ id: number; created_at: Date }>`
        select id, created_at from ${t} where id >= ${mid} order by id limit 1`.execute(db)
    ).rows[0];
    if (row === undefined) {
      hi = mid;
    } else if (new Date(row.created_at).getTime() >= at.getTime()) {
      found = Number(row.id);
      hi = mid;
    } else {
      lo = Number(row.id) + 1;
    }
  }
  return found;
}
