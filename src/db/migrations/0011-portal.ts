import { type Kysely, sql } from "kysely";

// The provider portal: a provider's own people, invited by an administrator, sign in at
// /portal/ with email and password.
//
// `portal_users`: one row per person. The email is unique across providers (compared lower-cased),
// so a sign-in names exactly one provider. `password_hash` is an Argon2id PHC string (never the
// password); null until the invite is accepted. The invite is a random token of which only the
// SHA-256 digest is kept, with its expiry; accepting it (or disabling the user) clears it, so a
// link works once. `totp_secret` is the second factor's secret, encrypted like API keys
// (API_KEY_SECRET), set once confirmed; `totp_pending` holds one being enrolled; `totp_last_step`
// is the time step of the last code accepted, so a code works once.
//
// `portal_sessions`: server-side sessions. The cookie carries a random token; only its SHA-256
// digest is stored, so a copy of the table signs nobody in. Deleted at sign-out, when the user is
// disabled or issued a fresh invite (password reset), and once idle or past their absolute end.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table portal_users (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      email text not null,
      name text not null,
      status text not null default 'invited' check (status in ('invited', 'active', 'disabled')),
      password_hash text,
      invite_digest text,
      invite_expires_at timestamptz,
      totp_secret text,
      totp_pending text,
      totp_last_step bigint,
      last_sign_in_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index portal_users_email_idx on portal_users (lower(email))`.execute(db);
  await sql`create index portal_users_provider_idx on portal_users (provider_id, id)`.execute(db);
  await sql`create unique index portal_users_invite_idx on portal_users (invite_digest) where invite_digest is not null`.execute(
    db,
  );
  await sql`
    create table portal_sessions (
      digest text primary key,
      user_id bigint not null references portal_users (id) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null
    )`.execute(db);
  await sql`create index portal_sessions_user_idx on portal_sessions (user_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists portal_sessions`.execute(db);
  await sql`drop table if exists portal_users`.execute(db);
}
