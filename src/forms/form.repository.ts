/** The drop-in form's tables (migration 0021): settings, publishable keys, used challenges; consent records in leads. */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import type { Consent } from "../leads/lead.ts";

type Db = Kysely<Database>;

export interface StoredFormSettings {
  readonly allowedOrigins: readonly string[];
  /** Null: the default text (naming the broker). */
  readonly consentText: string | null;
  readonly enabled: boolean;
  readonly updatedAt: Date | null;
}

export interface PublishableKeyRow {
  readonly key: string;
  readonly livemode: boolean;
  readonly createdAt: Date;
}

/** What a publishable key opens: its provider (active or not), the mode, and the provider's form. */
export interface KeyHolder {
  readonly providerId: number;
  readonly livemode: boolean;
  readonly active: boolean;
  readonly perMinute: number;
  readonly perDay: number;
  readonly settings: StoredFormSettings;
}

const NO_SETTINGS: StoredFormSettings = { allowedOrigins: [], consentText: null, enabled: true, updatedAt: null };

function originsOf(value: unknown): string[] {
  const parsed = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(parsed) ? parsed.filter((o): o is string => typeof o === "string") : [];
}

export async function findSettings(db: Db, providerId: number): Promise<StoredFormSettings> {
  const row = await db
    .selectFrom("form_settings")
    .select(["allowed_origins", "consent_text", "enabled", "updated_at"])
    .where("provider_id", "=", providerId)
    .executeTakeFirst();
  if (!row) return NO_SETTINGS;
  return {
    allowedOrigins: originsOf(row.allowed_origins),
    consentText: row.consent_text,
    enabled: row.enabled,
    updatedAt: row.updated_at,
  };
}

export async function saveSettings(
  db: Db,
  providerId: number,
  s: { allowedOrigins: readonly string[]; consentText: string | null; enabled: boolean },
  actor: string,
  at: Date,
): Promise<void> {
  const values = {
    allowed_origins: JSON.stringify(s.allowedOrigins),
    consent_text: s.consentText,
    enabled: s.enabled,
    updated_at: at,
    updated_by: actor,
  };
  await db
    .insertInto("form_settings")
    .values({ provider_id: providerId, ...values })
    .onConflict((oc) => oc.column("provider_id").doUpdateSet(values))
    .execute();
}

export async function listKeys(db: Db, providerId: number): Promise<PublishableKeyRow[]> {
  const rows = await db
    .selectFrom("publishable_keys")
    .select(["key", "livemode", "created_at"])
    .where("provider_id", "=", providerId)
    .execute();
  return rows.map((r) => ({ key: r.key, livemode: r.livemode, createdAt: r.created_at }));
}

/** Issues or replaces the provider's key of the mode: the old one stops with this statement. */
export async function replaceKey(
  db: Db,
  providerId: number,
  livemode: boolean,
  key: string,
  actor: string,
  at: Date,
): Promise<PublishableKeyRow> {
  const row = await db
    .insertInto("publishable_keys")
    .values({ provider_id: providerId, livemode, key, created_at: at, created_by: actor })
    .onConflict((oc) => oc.columns(["provider_id", "livemode"]).doUpdateSet({ key, created_at: at, created_by: actor }))
    .returning(["key", "livemode", "created_at"])
    .executeTakeFirstOrThrow();
  return { key: row.key, livemode: row.livemode, createdAt: row.created_at };
}

/** The holder of a publishable key, with its provider's form settings, in one round trip. */
export async function findKeyHolder(db: Db, key: string): Promise<KeyHolder | undefined> {
  const row = await db
    .selectFrom("publishable_keys as k")
    .innerJoin("providers as p", "p.id", "k.provider_id")
    .leftJoin("form_settings as s", "s.provider_id", "k.provider_id")
    .select([
      "k.provider_id",
      "k.livemode",
      "p.is_active",
      "p.rate_limit_per_minute",
      "p.rate_limit_per_day",
      "s.allowed_origins",
      "s.consent_text",
      "s.enabled",
      "s.updated_at",
    ])
    .where("k.key", "=", key)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    providerId: Number(row.provider_id),
    livemode: row.livemode,
    active: row.is_active,
    perMinute: row.rate_limit_per_minute,
    perDay: row.rate_limit_per_day,
    settings:
      row.enabled === null
        ? NO_SETTINGS
        : {
            allowedOrigins: originsOf(row.allowed_origins),
            consentText: row.consent_text,
            enabled: row.enabled,
            updatedAt: row.updated_at,
          },
  };
}

/**
 * Marks a challenge as used until it expires: true the first time, false if any instance already
 * did (the primary key decides a race). Expired marks are cleared on the way.
 */
export async function markChallengeUsed(db: Db, id: string, expiresAt: Date): Promise<boolean> {
  const inserted = await db
    .insertInto("form_challenges_used")
    .values({ id, expires_at: expiresAt })
    .onConflict((oc) => oc.column("id").doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Deletes marks of challenges that have expired (they can no longer be replayed). */
export async function clearExpiredChallenges(db: Db, now: Date): Promise<number> {
  const r = await db.deleteFrom("form_challenges_used").where("expires_at", "<", now).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A form lead's consent record, found by its id; `providerId` narrows it to one provider's. */
export async function findConsent(
  db: Db,
  consentId: string,
  providerId?: number,
): Promise<
  | {
      readonly leadId: number;
      readonly providerId: number;
      readonly livemode: boolean;
      readonly orderNumber: string;
      readonly externalId: string;
      readonly consent: Consent;
    }
  | undefined
> {
  let q = db
    .selectFrom("leads")
    .select(["id", "provider_id", "livemode", "order_number", "external_id", "consent"])
    .where(sql<string>`consent->>'id'`, "=", consentId)
    .where(sql<boolean>`consent ? 'id'`);
  if (providerId !== undefined) q = q.where("provider_id", "=", providerId);
  const row = await q.executeTakeFirst();
  if (!row) return undefined;
  return {
    leadId: Number(row.id),
    providerId: Number(row.provider_id),
    livemode: row.livemode,
    orderNumber: row.order_number,
    externalId: row.external_id,
    consent: row.consent as Consent,
  };
}

/**
 * This week's form leads of a provider and mode (leads_form_created_idx holds form leads only),
 * and the form's refusals by code (the request log's refused requests of the provider).
 */
export async function formWeek(
  db: Db,
  providerId: number,
  livemode: boolean,
  since: Date,
): Promise<{ leads: number; refusals: { code: string; count: number }[] }> {
  const [leads, refusals] = await Promise.all([
    db
      .selectFrom("leads")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("provider_id", "=", providerId)
      .where("livemode", "=", livemode)
      .where("created_at", ">=", since)
      .where("source", "=", "form")
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("request_log")
      .select(["code", (eb) => eb.fn.countAll<string>().as("n")])
      .where("provider_id", "=", providerId)
      .where("livemode", "=", livemode)
      .where("created_at", ">=", since)
      .where("status", ">=", 400)
      .where("operation", "=", "POST /api/v1/forms/leads/")
      .groupBy("code")
      .orderBy("n", "desc")
      .execute(),
  ]);
  return {
    leads: Number(leads.n),
    refusals: refusals.map((r) => ({ code: String(r.code ?? "unknown"), count: Number(r.n) })),
  };
}
