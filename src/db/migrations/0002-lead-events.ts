import { type Kysely, sql } from "kysely";

// The transactional outbox of lead events: written in the same statement or transaction as the
// change it records, so a committed change always has its event and a rolled-back one none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table lead_events (
      id bigint generated always as identity primary key,
      event_id text not null unique,
      provider_id bigint not null references providers (id),
      lead_id bigint not null references leads (id),
      type text not null check (type in ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed')),
      created_at timestamptz not null default now(),
      data jsonb not null
    )`.execute(db);
  await sql`create index lead_events_provider_id_idx on lead_events (provider_id, id desc)`.execute(db);
  await sql`create index lead_events_lead_id_idx on lead_events (lead_id, id)`.execute(db);
}
