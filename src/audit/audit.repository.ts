/** The audit trail of management writes and key views/issuances. */
import { type Kysely, type Selectable, type SelectQueryBuilder, sql } from "kysely";
import { customPlan } from "../db/database.ts";
import { escapeLike } from "../db/like.ts";
import type { Database } from "../db/schema.ts";

type AuditQuery = SelectQueryBuilder<
  Database,
  "audit_log",
  Pick<Selectable<Database["audit_log"]>, "id" | "actor" | "action" | "target_type" | "target_id" | "details" | "at">
>;

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
  /** What the target is called: a provider's name, a lead's order number and customer; null when unknown. */
  readonly targetName?: string | null;
}

const whole = (ids: string[]) => [...new Set(ids.filter((id) => /^[1-9]\d{0,15}$/.test(id)).map(Number))];

/**
 * The entries with their targets' names: one query for the page's providers and one for its leads
 * (primary-key lookups, however long the page), never one per entry.
 */
export async function withTargetNames(db: Kysely<Database>, entries: AuditRecord[]): Promise<AuditRecord[]> {
  const of = (type: string) => whole(entries.filter((e) => e.targetType === type).map((e) => e.targetId));
  const providerIds = of("provider");
  const leadIds = of("lead");
  const [providers, leads] = await Promise.all([
    providerIds.length === 0
      ? []
      : db.selectFrom("providers").select(["id", "name"]).where("id", "in", providerIds).execute(),
    leadIds.length === 0
      ? []
      : db
          .selectFrom("leads")
          .select(["id", "order_number", "first_name", "last_name"])
          .where("id", "in", leadIds)
          .execute(),
  ]);
  const names = new Map<string, string>([
    ...providers.map((p) => [`provider:${p.id}`, p.name] as const),
    ...leads.map((l) => [`lead:${l.id}`, `${l.order_number} · ${l.first_name} ${l.last_name}`.trim()] as const),
  ]);
  return entries.map((e) => ({ ...e, targetName: names.get(`${e.targetType}:${e.targetId}`) ?? null }));
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
  const page = (where: (q: AuditQuery) => AuditQuery) => {
    let query = where(
      db.selectFrom("audit_log").select(["id", "actor", "action", "target_type", "target_id", "details", "at"]),
    );
    // Any part of the actor, in any case (migration 0009's trigram index).
    if (filter.actor !== undefined)
      query = query.where(sql<string>`lower(actor)`, "like", `%${escapeLike(filter.actor.toLowerCase())}%`);
    if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
    return query.orderBy("id", "desc").limit(limit);
  };
  let rows: Awaited<ReturnType<ReturnType<typeof page>["execute"]>>;
  if (filter.providerId !== undefined) {
    // Entries about the provider, and about its leads (which name it in their details): two
    // ordered, limited index walks (audit_log_target_idx; audit_log_lead_provider_idx, db/indexes.ts)
    // merged, instead of an OR that reads the whole table newest first.
    const id = String(filter.providerId);
    const about = page((q) => q.where("target_type", "=", "provider").where("target_id", "=", id));
    const leads = page((q) =>
      q.where("target_type", "=", "lead").where(sql<string>`(details->>'provider_id')`, "=", id),
    );
    // Each branch as a subquery: its ORDER BY and LIMIT stay its own inside UNION ALL.
    const merged = db
      .selectFrom(about.as("about_provider"))
      .selectAll()
      .unionAll(db.selectFrom(leads.as("about_leads")).selectAll());
    rows = await customPlan(
      db.selectFrom(merged.as("entries")).selectAll().orderBy("id", "desc").limit(limit),
    ).execute();
  } else {
    rows = await page((q) => q).execute();
  }
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
