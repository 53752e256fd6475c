/** The audit trail of management writes and key views/issuances. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

export interface AuditEntry {
  /** JWT `sub` of the administrator. */
  readonly actor: string;
  /** e.g. `provider.created`, `provider.updated`, `api_key.generated`, `api_key.viewed`. */
  readonly action: string;
  readonly targetType: string;
  readonly targetId: string;
  /** Never secrets: field names, ids, timestamps. */
  readonly details?: Readonly<Record<string, unknown>>;
}

export async function recordAudit(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto("audit_log")
    .values({
      actor: entry.actor,
      action: entry.action,
      target_type: entry.targetType,
      target_id: entry.targetId,
      details: JSON.stringify(entry.details ?? {}),
    })
    .execute();
}
