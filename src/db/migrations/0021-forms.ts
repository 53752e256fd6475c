import { type Kysely, sql } from "kysely";

// The drop-in quote form (src/forms/, docs/decisions/0035-drop-in-form.md).
//
// form_settings: one row per provider once its form has been set up (a provider without one has
// the defaults: no allowed origin, so no form works, the default consent text, enabled).
// publishable_keys: at most one per provider and mode; rotating replaces the key in place, so the
// old one stops at once. They are not secrets (they are published on the provider's pages) and
// are stored as they are, looked up by their text.
// form_challenges_used: every accepted proof-of-work solution, kept until its challenge expires,
// so a solution is accepted once whichever instance sees it.
// leads.source: where a lead came in (api, form, grpc); null for leads stored before it was kept.
// A form lead's consent record is its `consent` (jsonb) with an `id` (cns_…); the index on that
// id is built outside the migration (db/indexes.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table form_settings (
      provider_id bigint primary key references providers (id),
      allowed_origins jsonb not null default '[]',
      consent_text text,
      enabled boolean not null default true,
      updated_at timestamptz not null default now(),
      updated_by text not null
    )`.execute(db);
  await sql`
    create table publishable_keys (
      provider_id bigint not null references providers (id),
      livemode boolean not null,
      key text not null unique,
      created_at timestamptz not null default now(),
      created_by text not null,
      primary key (provider_id, livemode)
    )`.execute(db);
  await sql`
    create table form_challenges_used (
      id text primary key,
      expires_at timestamptz not null
    )`.execute(db);
  await sql`create index form_challenges_used_expires_idx on form_challenges_used (expires_at)`.execute(db);
  // Not valid: the new column is null on every existing row, and checking them would read the
  // whole table under the migration's lock; new rows are checked.
  await sql`
    alter table leads add column source text,
      add constraint leads_source_check check (source in ('api', 'form', 'grpc')) not valid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table leads drop column source`.execute(db);
  await sql`drop table form_challenges_used`.execute(db);
  await sql`drop table publishable_keys`.execute(db);
  await sql`drop table form_settings`.execute(db);
}
