import { type Kysely, sql } from "kysely";

// Test mode: API keys are live or test; leads and their events carry `livemode`, and a provider's
// external_id is unique per mode (the same id may exist once live and once in test).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys add column mode text not null default 'live' check (mode in ('live', 'test'))`.execute(
    db,
  );
  await sql`drop index api_keys_provider_id_idx`.execute(db);
  await sql`create index api_keys_provider_id_idx on api_keys (provider_id, mode, id desc)`.execute(db);
  await sql`alter table leads add column livemode boolean not null default true`.execute(db);
  await sql`drop index leads_provider_external_id_key`.execute(db);
  await sql`create unique index leads_provider_external_id_key on leads (provider_id, livemode, external_id)`.execute(
    db,
  );
  // The sandbox's own moves look for test leads that are not finished.
  await sql`create index leads_sandbox_idx on leads (updated_at) where not livemode and state <> 'ORDER'`.execute(db);
  // Test-data clean-up by age.
  await sql`create index leads_test_created_idx on leads (created_at) where not livemode`.execute(db);
  await sql`alter table lead_events add column livemode boolean not null default true`.execute(db);
}
