import { type Kysely, sql } from "kysely";

// The back office lists the audit trail by provider and by actor, newest first, and searches
// leads by external_id alone (across providers).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index audit_log_target_idx on audit_log (target_type, target_id, id desc)`.execute(db);
  await sql`create index audit_log_actor_idx on audit_log (actor, id desc)`.execute(db);
  await sql`create index leads_external_id_idx on leads (external_id)`.execute(db);
}
