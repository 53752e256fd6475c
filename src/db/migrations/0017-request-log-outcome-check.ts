import { type Kysely, sql } from "kysely";

// A provider's refused requests are read from request_log_provider_refused_idx (status
// >= 400) by a query that says `status >= 400` for an outcome other than accepted
// (request-log.repository.ts). That relies on accepted ⇔ status < 400, which every row the writer
// makes keeps (outcomeOf); a row breaking it would be missing from the refusals' list, so the fact
// becomes a constraint. Added NOT VALID, then validated: the check of the existing rows reads the
// table once. A batch holding a row that breaks it is written one entry at a time and that entry
// dropped and counted, as any value the database refuses (request-log.writer.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table request_log add constraint request_log_outcome_status_check
      check ((outcome = 'accepted') = (status < 400)) not valid`.execute(db);
  await sql`alter table request_log validate constraint request_log_outcome_status_check`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table request_log drop constraint request_log_outcome_status_check`.execute(db);
}
