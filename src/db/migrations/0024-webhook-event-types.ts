import { type Kysely, sql } from "kysely";

// Webhook event subscriptions (docs/decisions/0038-webhook-event-subscriptions.md).
//
// `providers.webhook_event_types` lists the event types a provider's endpoint receives; null
// means every type, including types added later, and is what every existing provider keeps. The
// list is checked against the known types by the service (providers/provider.ts), not here: a new
// type must not need a migration to be subscribable.
//
// The outbox trigger queues a delivery only for a subscribed type, so an unsubscribed event is
// never a delivery (it stays in lead_events and in the events feed). The trigger reads the list
// when the event is written: a change applies to events written after it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table providers add column webhook_event_types text[]`.execute(db);
  await sql`
    alter table providers add constraint providers_webhook_event_types_not_empty
      check (webhook_event_types is null or cardinality(webhook_event_types) > 0)`.execute(db);
  await sql`
    create or replace function queue_webhook_delivery() returns trigger language plpgsql as $$
    declare
      endpoint_enabled boolean;
    begin
      select e.enabled into endpoint_enabled
        from providers p join webhook_endpoints e on e.provider_id = p.id
        where p.id = new.provider_id and p.webhook_url is not null
          and (p.webhook_event_types is null or new.type = any (p.webhook_event_types));
      if found then
        insert into webhook_deliveries (provider_id, event_sequence, lead_id, livemode, state)
          values (new.provider_id, new.id, new.lead_id, new.livemode,
                  case when endpoint_enabled then 'pending' else 'disabled' end);
      end if;
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function queue_webhook_delivery() returns trigger language plpgsql as $$
    declare
      endpoint_enabled boolean;
    begin
      select e.enabled into endpoint_enabled
        from providers p join webhook_endpoints e on e.provider_id = p.id
        where p.id = new.provider_id and p.webhook_url is not null;
      if found then
        insert into webhook_deliveries (provider_id, event_sequence, lead_id, livemode, state)
          values (new.provider_id, new.id, new.lead_id, new.livemode,
                  case when endpoint_enabled then 'pending' else 'disabled' end);
      end if;
      return null;
    end $$`.execute(db);
  await sql`alter table providers drop column webhook_event_types`.execute(db);
}
