import { type Kysely, sql } from "kysely";

// The back office (docs/back-office.md).
//
// Search: an administrator finds a lead by any part of the customer's
// name, email, phone (any format: the digits of phone_e164), external id or order number, in any
// case; and audit entries by any part of the actor. Each is a substring match (`like '%…%'`)
// on a lower-cased expression with a trigram index (pg_trgm, which PGlite ships as
// @electric-sql/pglite/contrib/pg_trgm and database.ts loads), so it stays an index lookup at
// millions of rows instead of a scan. LEAD_SEARCH_TEXT in lead.repository.ts is the same
// expression: a query that differs from it by a character would not use the index. The indexes
// are created `if not exists`: on a big database build them first with CREATE INDEX CONCURRENTLY
// under the same names (see docs/decisions/0028-big-tables-indexes-and-plans.md).
//
// `webhook_attempts`: one row per attempt to POST an event (status, latency, error), so a
// delivery's page shows each attempt, not only the last; and the `webhook.test` events an
// administrator sends (delivery_id null: they are sent at once, outside the outbox), so they show
// next to the deliveries. Deleted with their delivery (sandbox retention and purge).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  await sql`
    create index if not exists leads_search_idx on leads using gin (
      lower(first_name || ' ' || last_name || ' ' || email || ' ' || external_id || ' ' || order_number || ' ' || coalesce(phone_e164, ''))
      gin_trgm_ops
    )`.execute(db);
  await sql`create index if not exists audit_log_actor_search_idx on audit_log using gin (lower(actor) gin_trgm_ops)`.execute(
    db,
  );
  // The provider list's webhook health: its failed and pending deliveries, counted from an index.
  await sql`create index if not exists webhook_deliveries_unhealthy_idx on webhook_deliveries (provider_id, state) where state in ('pending', 'failed')`.execute(
    db,
  );
  await sql`
    create table webhook_attempts (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      delivery_id bigint references webhook_deliveries (id) on delete cascade,
      event_id text not null,
      attempt integer not null,
      status_code integer,
      latency_ms integer not null,
      error text,
      at timestamptz not null default now()
    )`.execute(db);
  await sql`create index if not exists webhook_attempts_delivery_idx on webhook_attempts (delivery_id, attempt) where delivery_id is not null`.execute(
    db,
  );
  await sql`create index if not exists webhook_attempts_tests_idx on webhook_attempts (provider_id, id desc) where delivery_id is null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists webhook_attempts`.execute(db);
  await sql`drop index if exists webhook_deliveries_unhealthy_idx`.execute(db);
  await sql`drop index if exists audit_log_actor_search_idx`.execute(db);
  await sql`drop index if exists leads_search_idx`.execute(db);
}
