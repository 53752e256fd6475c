/** All SQL about API keys: issue, retire, find by digest, record use. */
import { type Kysely, sql } from "kysely";
import { prepare } from "../db/prepared.ts";
import type { Database } from "../db/schema.ts";
import type { KeyMode } from "./api-key.ts";

type Db = Kysely<Database>;

/** Ends every working key of the provider in `mode` at `at` (now, or later for a grace period). */
export async function retireKeys(db: Db, providerId: number, mode: KeyMode, at: Date): Promise<number> {
  const result = await db
    .updateTable("api_keys")
    .set({ revoked_at: sql<Date>`least(coalesce(revoked_at, 'infinity'::timestamptz), ${at}::timestamptz)` })
    .where("provider_id", "=", providerId)
    .where("mode", "=", mode)
    .where((eb) => eb.or([eb("revoked_at", "is", null), eb("revoked_at", ">", at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function insertKey(
  db: Db,
  k: { providerId: number; mode: KeyMode; digest: string; ciphertext: string; masked: string; expiresAt: Date | null },
) {
  return db
    .insertInto("api_keys")
    .values({
      provider_id: k.providerId,
      mode: k.mode,
      digest: k.digest,
      ciphertext: k.ciphertext,
      masked: k.masked,
      expires_at: k.expiresAt,
    })
    .returning(["id", "created_at"])
    .executeTakeFirstOrThrow();
}

/** The ciphertext of the provider's current key in `mode`, if any. */
export async function currentKeyCiphertext(db: Db, providerId: number, mode: KeyMode): Promise<string | undefined> {
  const row = await db
    .selectFrom("api_keys")
    .select("ciphertext")
    .where("provider_id", "=", providerId)
    .where("mode", "=", mode)
    .where("revoked_at", "is", null)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.ciphertext;
}

/** What authentication needs about a key, found by its digest (compiled once: every cache miss runs it). */
export const FIND_KEY_BY_DIGEST = prepare<
  { digest: string },
  {
    keyId: number;
    providerId: number;
    expiresAt: Date | null;
    revokedAt: Date | null;
    mode: KeyMode;
    isActive: boolean;
    perMinute: number;
    perDay: number;
  }
>(["digest"], (db, p) =>
  db
    .selectFrom("api_keys as k")
    .innerJoin("providers as p", "p.id", "k.provider_id")
    .select([
      "k.id as keyId",
      "k.provider_id as providerId",
      "k.expires_at as expiresAt",
      "k.revoked_at as revokedAt",
      "k.mode as mode",
      "p.is_active as isActive",
      "p.rate_limit_per_minute as perMinute",
      "p.rate_limit_per_day as perDay",
    ])
    .where("k.digest", "=", p.digest),
);

export async function findKeyByDigest(db: Db, digest: string) {
  const [row] = await FIND_KEY_BY_DIGEST.execute(db, { digest });
  return row;
}

export async function touchKeys(db: Db, keyIds: readonly number[], at: Date): Promise<void> {
  if (keyIds.length === 0) return;
  await db.updateTable("api_keys").set({ last_used_at: at }).where("id", "in", keyIds).execute();
}
