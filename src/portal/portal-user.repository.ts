/** Portal users and their sessions (migration 0011). */
import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, PortalUsersTable } from "../db/schema.ts";
import type { PortalUser } from "./portal-user.ts";

type Db = Kysely<Database>;
type Row = Selectable<PortalUsersTable>;
export type RowOf = Row;

export const MAX_USERS_LISTED = 200;

export function userOf(r: Row): PortalUser {
  return {
    id: Number(r.id),
    providerId: Number(r.provider_id),
    email: r.email,
    name: r.name,
    status: r.status,
    role: r.role,
    secondFactor: r.totp_secret !== null,
    lastSignInAt: r.last_sign_in_at,
    inviteExpiresAt: r.invite_digest === null ? null : r.invite_expires_at,
    createdAt: r.created_at,
  };
}

/** The new user's row, or undefined when the email is taken (by any provider). */
export async function insertUser(
  db: Db,
  u: {
    providerId: number;
    email: string;
    name: string;
    role: "admin" | "member";
    inviteDigest: string;
    inviteExpiresAt: Date;
  },
): Promise<Row | undefined> {
  return db
    .insertInto("portal_users")
    .values({
      provider_id: u.providerId,
      role: u.role,
      email: u.email,
      name: u.name,
      invite_digest: u.inviteDigest,
      invite_expires_at: u.inviteExpiresAt,
    })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function listUsers(db: Db, providerId: number): Promise<Row[]> {
  return db
    .selectFrom("portal_users")
    .selectAll()
    .where("provider_id", "=", providerId)
    .orderBy("id")
    .limit(MAX_USERS_LISTED)
    .execute();
}

/** Whether the provider has anyone invited or active (its first person becomes its admin). */
export async function hasPeople(db: Db, providerId: number): Promise<boolean> {
  const row = await db
    .selectFrom("portal_users")
    .select("id")
    .where("provider_id", "=", providerId)
    .where("status", "!=", "disabled")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** How many active admins the provider has besides `exceptUserId`. */
export async function otherActiveAdmins(db: Db, providerId: number, exceptUserId: number): Promise<number> {
  const row = await db
    .selectFrom("portal_users")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("provider_id", "=", providerId)
    .where("role", "=", "admin")
    .where("status", "=", "active")
    .where("id", "!=", exceptUserId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Locks the provider's row for the transaction, so role changes of its people happen one at a time. */
export async function lockProvider(db: Db, providerId: number): Promise<boolean> {
  const row = await db.selectFrom("providers").select("id").where("id", "=", providerId).forUpdate().executeTakeFirst();
  return row !== undefined;
}

export function findUser(db: Db, providerId: number, userId: number): Promise<Row | undefined> {
  return db
    .selectFrom("portal_users")
    .selectAll()
    .where("provider_id", "=", providerId)
    .where("id", "=", userId)
    .executeTakeFirst();
}

export function findUserById(db: Db, userId: number): Promise<Row | undefined> {
  return db.selectFrom("portal_users").selectAll().where("id", "=", userId).executeTakeFirst();
}

export function findUserByEmail(db: Db, email: string): Promise<Row | undefined> {
  return db
    .selectFrom("portal_users")
    .selectAll()
    .where(sql<string>`lower(email)`, "=", email.toLowerCase())
    .executeTakeFirst();
}

/** The user an unexpired, unused invite belongs to, with its provider's name and whether it is active. */
export function findByInvite(db: Db, digest: string, at: Date) {
  return db
    .selectFrom("portal_users as u")
    .innerJoin("providers as p", "p.id", "u.provider_id")
    .selectAll("u")
    .select(["p.name as provider_name", "p.is_active as provider_active"])
    .where("u.invite_digest", "=", digest)
    .where("u.invite_expires_at", ">", at)
    .where("u.status", "!=", "disabled")
    .executeTakeFirst();
}

/** The active user an unexpired, unused password-reset link belongs to, with whether its provider is active. */
export function findByReset(db: Db, digest: string, at: Date) {
  return db
    .selectFrom("portal_users as u")
    .innerJoin("providers as p", "p.id", "u.provider_id")
    .selectAll("u")
    .select(["p.name as provider_name", "p.is_active as provider_active"])
    .where("u.reset_digest", "=", digest)
    .where("u.reset_expires_at", ">", at)
    .where("u.status", "=", "active")
    .executeTakeFirst();
}

export async function updateUser(
  db: Db,
  userId: number,
  changes: Partial<Pick<Row, "status" | "password_hash" | "invite_digest" | "invite_expires_at">> &
    Partial<Pick<Row, "reset_digest" | "reset_expires_at">> & { role?: "admin" | "member" } & Partial<
      Pick<Row, "totp_secret" | "totp_pending" | "last_sign_in_at">
    > & { totp_last_step?: number | null },
): Promise<Row | undefined> {
  return db
    .updateTable("portal_users")
    .set({ ...changes, updated_at: new Date() })
    .where("id", "=", userId)
    .returningAll()
    .executeTakeFirst();
}

export async function insertSession(
  db: Db,
  s: { digest: string; userId: number; at: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto("portal_sessions")
    .values({
      digest: s.digest,
      user_id: s.userId,
      created_at: s.at,
      last_seen_at: s.at,
      expires_at: s.expiresAt,
    })
    .execute();
}

/** A live session with what a request needs of its user (idle and absolute ends checked by the caller). */
export function findSession(db: Db, digest: string) {
  return db
    .selectFrom("portal_sessions as s")
    .innerJoin("portal_users as u", "u.id", "s.user_id")
    .innerJoin("providers as p", "p.id", "u.provider_id")
    .select([
      "s.user_id as userId",
      "s.last_seen_at as lastSeenAt",
      "s.expires_at as expiresAt",
      "u.provider_id as providerId",
      "u.email as email",
      "u.status as status",
      "u.role as role",
      "u.totp_secret as totpSecret",
      "p.is_active as providerActive",
    ])
    .where("s.digest", "=", digest)
    .executeTakeFirst();
}

export async function touchSession(db: Db, digest: string, at: Date): Promise<void> {
  await db.updateTable("portal_sessions").set({ last_seen_at: at }).where("digest", "=", digest).execute();
}

export async function deleteSession(db: Db, digest: string): Promise<number> {
  const r = await db.deleteFrom("portal_sessions").where("digest", "=", digest).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Ends the user's sessions (all, or all but the one whose digest is `keep`): how many ended. */
export async function deleteSessionsOf(db: Db, userId: number, keep?: string): Promise<number> {
  const r = await db
    .deleteFrom("portal_sessions")
    .where("user_id", "=", userId)
    .$if(keep !== undefined, (q) => q.where("digest", "!=", keep as string))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** Ends every session of the provider's users: the user id of each session ended. */
export async function deleteSessionsOfProvider(db: Db, providerId: number): Promise<number[]> {
  const rows = await db
    .deleteFrom("portal_sessions")
    .where("user_id", "in", (eb) => eb.selectFrom("portal_users").select("id").where("provider_id", "=", providerId))
    .returning("user_id")
    .execute();
  return rows.map((r) => Number(r.user_id));
}

/** The user's sessions past their idle or absolute end (each sign-in clears them, so the table stays small). */
export async function deleteEndedSessionsOf(db: Db, userId: number, idleBefore: Date, at: Date): Promise<void> {
  await db
    .deleteFrom("portal_sessions")
    .where("user_id", "=", userId)
    .where((eb) => eb.or([eb("last_seen_at", "<", idleBefore), eb("expires_at", "<=", at)]))
    .execute();
}
