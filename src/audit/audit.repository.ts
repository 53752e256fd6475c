/** The audit trail of management writes and key views/issuances. */
import { type Kysely, sql } from "kysely";
import { escapeLike } from "../db/like.ts";
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

export interface AuditRecord extends AuditEntry {
  readonly id: number;
  readonly at: Date;
}

export interface AuditFilter {
  /** Entries about this provider. */
  readonly providerId?: number | undefined;
  readonly actor?: string | undefined;
  /** Entries before this one (the list runs newest first). */
  readonly beforeId?: number | undefined;
}

/** One page of the audit trail, newest first. */
export async function listAudit(db: Kysely<Database>, filter: AuditFilter, limit: number): Promise<AuditRecord[]> {
  let query = db.selectFrom("audit_log").select(["id", "actor", "action", "target_type", "target_id", "details", "at"]);
  if (filter.providerId !== undefined) {
    // Entries about the provider, and about its leads (which name it in their details).
    const id = String(filter.providerId);
    query = query.where((eb) =>
      eb.or([
        eb.and([eb("target_type", "=", "provider"), eb("target_id", "=", id)]),
        eb.and([eb("target_type", "=", "lead"), eb(sql<string>`details->>'provider_id'`, "=", id)]),
      ]),
    );
  }
  // Any part of the actor, in any case (migration 0009's trigram index).
  if (filter.actor !== undefined)
    query = query.where(sql<string>`lower(actor)`, "like", `%${escapeLike(filter.actor.toLowerCase())}%`);
  if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
  const rows = await query.orderBy("id", "desc").limit(limit).execute();
  return rows.map((r) => ({
    id: r.id,
    actor: r.actor,
    action: r.action,
    targetType: r.target_type,
    targetId: r.target_id,
    details: (r.details ?? {}) as Record<string, unknown>,
    at: r.at,
  }));
}
