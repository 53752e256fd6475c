/** All SQL about providers (their keys: api-keys/api-key.repository.ts). */
import { type Kysely, sql } from "kysely";
import { jsonObjectFrom } from "kysely/helpers/postgres";
import type { Database } from "../db/schema.ts";
import type { EventType } from "../events/event.ts";
import type { ApiKeySummary, Provider, ProviderChanges } from "./provider.ts";

type Db = Kysely<Database>;

function selectProviders(db: Db) {
  return db
    .selectFrom("providers as p")
    .selectAll("p")
    .select((eb) =>
      (["live", "test"] as const).flatMap((mode) => [
        jsonObjectFrom(
          eb
            .selectFrom("api_keys as k")
            .select(["k.masked", "k.created_at", "k.expires_at", "k.last_used_at"])
            .whereRef("k.provider_id", "=", "p.id")
            .where("k.mode", "=", mode)
            .where("k.revoked_at", "is", null)
            .orderBy("k.id", "desc")
            .limit(1),
        ).as(`current_${mode}_key`),
        eb
          .selectFrom("api_keys as k")
          .select((e) => e.fn.max("k.revoked_at").as("m"))
          .whereRef("k.provider_id", "=", "p.id")
          .where("k.mode", "=", mode)
          .where("k.revoked_at", ">", sql<Date>`now()`)
          .as(`previous_${mode}_key_expires_at`),
      ]),
    );
}

type ProviderRow = Awaited<ReturnType<ReturnType<typeof selectProviders>["executeTakeFirstOrThrow"]>>;

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

type KeyJson = { masked: string; created_at: unknown; expires_at: unknown; last_used_at: unknown } | null;

function keySummary(key: KeyJson, previousExpiresAt: unknown): ApiKeySummary | null {
  return key
    ? {
        masked: key.masked,
        createdAt: new Date(key.created_at as string),
        expiresAt: date(key.expires_at),
        lastUsedAt: date(key.last_used_at),
        previousKeyExpiresAt: date(previousExpiresAt),
      }
    : null;
}

function toProvider(row: ProviderRow): Provider {
  const r = row as ProviderRow & Record<string, unknown>;
  return {
    id: row.id,
    name: row.name,
    contactEmail: row.contact_email,
    isActive: row.is_active,
    rateLimitPerMinute: row.rate_limit_per_minute,
    rateLimitPerDay: row.rate_limit_per_day,
    webhookUrl: row.webhook_url,
    webhookEventTypes: (row.webhook_event_types as EventType[] | null) ?? null,
    notes: row.notes,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    apiKey: keySummary(r.current_live_key as KeyJson, r.previous_live_key_expires_at),
    testApiKey: keySummary(r.current_test_key as KeyJson, r.previous_test_key_expires_at),
  };
}

export interface ListFilter {
  readonly page: number;
  readonly pageSize: number;
  readonly search?: string | undefined;
  readonly isActive?: boolean | undefined;
  readonly ids?: readonly number[] | undefined;
}

export async function listProviders(db: Db, filter: ListFilter): Promise<{ count: number; providers: Provider[] }> {
  let base = db.selectFrom("providers as p");
  if (filter.search) {
    const pattern = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    base = base.where(sql<boolean>`p.name ilike ${pattern}`);
  }
  if (filter.isActive !== undefined) base = base.where("p.is_active", "=", filter.isActive);
  if (filter.ids !== undefined)
    base = filter.ids.length === 0 ? base.where(sql<boolean>`false`) : base.where("p.id", "in", filter.ids);
  const ids = base.select("p.id");
  const [countRow, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as("count")).executeTakeFirstOrThrow(),
    selectProviders(db)
      .where("p.id", "in", ids)
      .orderBy("p.id")
      .limit(filter.pageSize)
      .offset((filter.page - 1) * filter.pageSize)
      .execute(),
  ]);
  return { count: Number(countRow.count), providers: rows.map(toProvider) };
}

export interface ProviderActivity {
  readonly leadsThisWeek: number;
  readonly lastLeadAt: Date | null;
  readonly webhookEnabled: boolean | null;
  readonly failedDeliveries: number;
  readonly pendingDeliveries: number;
}

/**
 * Where this week's live leads are counted: from the stats rollup (lead_stats_daily, one row per
 * day and sub_id), the business days from `weekDay` to `rolledDay` and `todayDay` (today's leads
 * the rollup has reached); from the leads themselves, those created from `liveFrom` on. With
 * nothing rolled up this week, both days are null and `liveFrom` is the week's start.
 */
export interface WeekSplit {
  readonly weekDay: string;
  readonly rolledDay: string | null;
  readonly todayDay: string | null;
  readonly liveFrom: Date;
}

/**
 * Each provider's live leads this week, latest live lead, and webhook health: one row per
 * provider, each number read from an index (lead_stats_daily's key and leads_provider_created_idx
 * for today's leads, and migration 0009's webhook_deliveries_unhealthy_idx), so a page of 25
 * providers costs 25 small index reads, whatever a week's volume.
 */
export async function activityOf(
  db: Db,
  ids: readonly number[],
  week: WeekSplit,
): Promise<Map<number, ProviderActivity>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{
    id: number;
    leads_this_week: number;
    last_lead_at: Date | null;
    webhook_enabled: boolean | null;
    failed_deliveries: number;
    pending_deliveries: number;
  }>`
    select p.id,
      (select count(*) from leads l
        where l.provider_id = p.id and l.livemode and l.created_at >= ${week.liveFrom}::timestamptz)::int
      + coalesce((select sum(s.accepted) from lead_stats_daily s
        where s.provider_id = p.id and s.livemode and s.day >= ${week.weekDay}::date
          and (s.day <= ${week.rolledDay}::date or s.day = ${week.todayDay}::date)), 0)::int as leads_this_week,
      (select max(l.created_at) from leads l where l.provider_id = p.id and l.livemode) as last_lead_at,
      case when p.webhook_url is null then null else coalesce(e.enabled, true) end as webhook_enabled,
      (select count(*) from webhook_deliveries d where d.provider_id = p.id and d.state = 'failed')::int as failed_deliveries,
      (select count(*) from webhook_deliveries d where d.provider_id = p.id and d.state = 'pending')::int as pending_deliveries
    from providers p left join webhook_endpoints e on e.provider_id = p.id
    where p.id = any(${ids.map(Number)}::bigint[])`.execute(db);
  return new Map(
    rows.rows.map((r) => [
      Number(r.id),
      {
        leadsThisWeek: Number(r.leads_this_week),
        lastLeadAt: r.last_lead_at === null ? null : new Date(r.last_lead_at),
        webhookEnabled: r.webhook_enabled,
        failedDeliveries: Number(r.failed_deliveries),
        pendingDeliveries: Number(r.pending_deliveries),
      },
    ]),
  );
}

export async function findProvider(db: Db, id: number): Promise<Provider | undefined> {
  const row = await selectProviders(db).where("p.id", "=", id).executeTakeFirst();
  return row ? toProvider(row) : undefined;
}

function columns(c: ProviderChanges) {
  return {
    ...(c.name !== undefined && { name: c.name }),
    ...(c.contactEmail !== undefined && { contact_email: c.contactEmail }),
    ...(c.isActive !== undefined && { is_active: c.isActive }),
    ...(c.rateLimitPerMinute !== undefined && { rate_limit_per_minute: c.rateLimitPerMinute }),
    ...(c.rateLimitPerDay !== undefined && { rate_limit_per_day: c.rateLimitPerDay }),
    ...(c.webhookUrl !== undefined && { webhook_url: c.webhookUrl }),
    ...(c.webhookEventTypes !== undefined && { webhook_event_types: c.webhookEventTypes }),
    ...(c.notes !== undefined && { notes: c.notes }),
  };
}

/** Inserts a provider; undefined when the name is taken (unique index on lower(name)). */
export async function insertProvider(
  db: Db,
  c: ProviderChanges & { name: string },
  defaults: { perMinute: number; perDay: number },
) {
  const row = await sql<{ id: number }>`
    insert into providers (name, contact_email, is_active, rate_limit_per_minute, rate_limit_per_day, webhook_url,
                           webhook_event_types, notes)
    values (${c.name}, ${c.contactEmail ?? null}, ${c.isActive ?? true}, ${c.rateLimitPerMinute ?? defaults.perMinute},
            ${c.rateLimitPerDay ?? defaults.perDay}, ${c.webhookUrl ?? null}, ${c.webhookEventTypes ?? null}, ${c.notes ?? null})
    on conflict ((lower(name))) do nothing
    returning id`.execute(db);
  return row.rows[0]?.id;
}

/** Applies only the given changes; false when no such provider. Throws 23505 on a taken name. */
export async function updateProvider(db: Db, id: number, c: ProviderChanges): Promise<boolean> {
  const result = await db
    .updateTable("providers")
    .set({ ...columns(c), updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Locks the provider row for the rest of the transaction; false when it does not exist. */
export async function lockProvider(db: Db, id: number): Promise<boolean> {
  const row = await db.selectFrom("providers").select("id").where("id", "=", id).forUpdate().executeTakeFirst();
  return row !== undefined;
}
