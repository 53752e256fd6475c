import { type Kysely, sql } from "kysely";

// Webhook delivery: each provider's signing secrets and endpoint state, and one delivery row per
// (event, endpoint). A trigger on the outbox queues the delivery in the same transaction as the
// event, whichever code path wrote the event, so a rolled-back change leaves nothing to deliver.
// The trigger does not NOTIFY: a NOTIFY in every writing transaction serialises their commits
// (Postgres takes one lock for the notification queue at commit); the service wakes the workers
// after its commits instead, at most every few milliseconds (webhook.worker.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      provider_id bigint primary key references providers (id),
      secret_ciphertext text not null,
      previous_secret_ciphertext text,
      previous_secret_expires_at timestamptz,
      secret_rotated_at timestamptz not null default now(),
      enabled boolean not null default true,
      disabled_reason text,
      disabled_at timestamptz
    )`.execute(db);
  await sql`
    create table webhook_deliveries (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      event_sequence bigint not null references lead_events (id),
      lead_id bigint not null,
      state text not null default 'pending' check (state in ('pending', 'delivered', 'failed', 'disabled')),
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null default now()
    )`.execute(db);
  // What the workers claim: due pending rows, and the per-lead ordering check.
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at, id) where state = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_lead_idx on webhook_deliveries (lead_id, id) where state = 'pending'`.execute(
    db,
  );
  await sql`create index webhook_deliveries_provider_idx on webhook_deliveries (provider_id, id desc)`.execute(db);
  await sql`
    create function queue_webhook_delivery() returns trigger language plpgsql as $$
    declare
      endpoint_enabled boolean;
    begin
      select e.enabled into endpoint_enabled
        from providers p join webhook_endpoints e on e.provider_id = p.id
        where p.id = new.provider_id and p.webhook_url is not null;
      if found then
        insert into webhook_deliveries (provider_id, event_sequence, lead_id, state)
          values (new.provider_id, new.id, new.lead_id, case when endpoint_enabled then 'pending' else 'disabled' end);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger lead_events_queue_webhook after insert on lead_events
      for each row execute function queue_webhook_delivery()`.execute(db);
}
