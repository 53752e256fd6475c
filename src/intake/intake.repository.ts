/** All SQL about intake rules and cap usage. */
import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";
import type { IntakeRules } from "./intake-rules.ts";

type Db = Kysely<Database>;

export interface StoredRules {
  readonly rules: unknown;
  readonly version: number;
  readonly updatedAt: Date | null;
  readonly perMinute: number;
  readonly perDay: number;
}

export async function readRules(db: Db, providerId: number): Promise<StoredRules | undefined> {
  const row = await db
    .selectFrom("providers")
    .select([
      "intake_rules",
      "intake_rules_version",
      "intake_rules_updated_at",
      "rate_limit_per_minute",
      "rate_limit_per_day",
    ])
    .where("id", "=", providerId)
    .executeTakeFirst();
  return (
    row && {
      rules: row.intake_rules,
      version: row.intake_rules_version,
      updatedAt: row.intake_rules_updated_at,
      perMinute: row.rate_limit_per_minute,
      perDay: row.rate_limit_per_day,
    }
  );
}

/** The provider's rules before the change, locked for the caller's transaction (serialises changes). */
export async function lockRules(db: Db, providerId: number) {
  return db
    .selectFrom("providers")
    .select(["intake_rules", "intake_rules_version"])
    .where("id", "=", providerId)
    .forUpdate()
    .executeTakeFirst();
}

export async function writeRules(
  db: Db,
  providerId: number,
  rules: IntakeRules,
): Promise<{ version: number; updatedAt: Date }> {
  const row = await db
    .updateTable("providers")
    .set({
      intake_rules: JSON.stringify(rules),
      intake_rules_version: sql<number>`intake_rules_version + 1`,
      intake_rules_updated_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", providerId)
    .returning(["intake_rules_version", "intake_rules_updated_at"])
    .executeTakeFirstOrThrow();
  return { version: row.intake_rules_version, updatedAt: row.intake_rules_updated_at as Date };
}

/**
 * The provider's leads of one mode created since `start`, counted up to `limit` at most (the
 * count never reads more rows than the cap: index leads_provider_created_idx).
 */
export async function countSince(db: Db, providerId: number, livemode: boolean, start: Date, limit: number) {
  const row = await sql<{ used: number }>`
    select count(*)::integer as used from (
      select 1 from leads
      where provider_id = ${providerId}::bigint and livemode = ${livemode}::boolean and created_at >= ${start}::timestamptz
      limit ${limit}::integer) s`.execute(db);
  return row.rows[0]?.used ?? 0;
}

/** Records an `intake_rules.changed` event (a live event of no lead) in the caller's transaction. */
export async function insertRulesEvent(db: Db, providerId: number, eventId: string, data: unknown): Promise<void> {
  await db
    .insertInto("lead_events")
    .values({
      event_id: eventId,
      provider_id: providerId,
      livemode: true,
      lead_id: null,
      type: "intake_rules.changed",
      data: JSON.stringify(data),
    })
    .execute();
}
