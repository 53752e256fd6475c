import { type Kysely, sql } from "kysely";

// A provider's refused requests are read from request_log_provider_refused_idx
// (db/indexes.ts), which holds the entries with a status of 400 or more; the query names that
// condition beside the outcome it filters on. The two are one fact (outcomeOf: accepted ⇔ status
// < 400), but the planner takes them as independent and multiplies their selectivities: at 5M
// leads it expected 19 of a big provider's 1,983 refusals, read them all in a bitmap scan and
// sorted them (19 ms) instead of walking the index in order to the first page (0.06 ms). Statistics
// on the two columns together (their most common pairs) give it the right figure. ANALYZE reads a
// sample of fixed size: seconds at millions of rows.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create statistics if not exists request_log_status_outcome_stx (mcv) on status, outcome from request_log`.execute(
    db,
  );
  await sql`analyze request_log`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop statistics if exists request_log_status_outcome_stx`.execute(db);
}
