import { type Kysely, sql } from "kysely";

// Stats read the days after the rollup's watermark from the leads themselves, which is
// today as a rule: at 5M leads (6,800 a day) the back office's stats read 3,000 of today's leads
// at noon, 8 ms of the request, growing with a day's volume. The rollup job now also rolls up
// today so far, each run, up to `today_through` (its run's time less the lag that lets late
// commits land): `today` is the business day those rows of lead_stats_daily cover. Stats read
// those rows and only the leads created since `today_through` (about a minute's). A later run
// replaces today's rows; the day's first full roll-up replaces them for good.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table lead_stats_rollup add column today date, add column today_through timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from lead_stats_daily d using lead_stats_rollup r where d.day = r.today and r.today > coalesce(r.rolled_through, '-infinity')`.execute(
    db,
  );
  await sql`alter table lead_stats_rollup drop column today, drop column today_through`.execute(db);
}
