import { type Kysely, sql } from "kysely";

// The provider's own team and password reset by e-mail (docs/decisions/0037-portal-team-and-password-reset.md).
//
// `role`: what a portal user may do. `member` is everything a portal user could do before this
// migration; `admin` may also list, invite, disable and re-invite the people of its own provider
// and change their roles. Every existing user becomes a member except each provider's earliest
// active user (by created_at, then id), who becomes its admin, so every provider with someone
// signing in has someone who can manage its team. A provider with nobody active gets no admin
// here: the administrators name one (role change or an invite with a role). A provider's first
// person invited from now on is its admin (the service decides, not a default here).
//
// `reset_digest`, `reset_expires_at`: a password-reset link asked for on the sign-in page. Only
// the SHA-256 digest of its random token is kept, with its expiry (one hour); using it, asking
// for another, a fresh invite or disabling the user clears it, so a link works once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table portal_users
      add column role text not null default 'member' check (role in ('admin', 'member')),
      add column reset_digest text,
      add column reset_expires_at timestamptz`.execute(db);
  await sql`
    update portal_users set role = 'admin'
    where id in (
      select distinct on (provider_id) id from portal_users
      where status = 'active'
      order by provider_id, created_at, id)`.execute(db);
  await sql`create unique index portal_users_reset_idx on portal_users (reset_digest) where reset_digest is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists portal_users_reset_idx`.execute(db);
  await sql`
    alter table portal_users
      drop column if exists reset_expires_at,
      drop column if exists reset_digest,
      drop column if exists role`.execute(db);
}
