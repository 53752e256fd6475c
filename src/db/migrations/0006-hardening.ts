import { type Kysely, sql } from "kysely";

// Hardening.
//
// Fair webhook delivery: a delivery carries its lead's mode (test deliveries get a bounded share
// of a worker's slots) and, while a worker is sending it, the end of its lease (an endpoint has
// at most WEBHOOK_CONCURRENCY_PER_ENDPOINT deliveries in flight across every instance).
//
// Identifiers that count nobody's leads: new leads get an id made of the creation time in
// milliseconds (41 bits from 2024-01-01, good until 2093) and 12 random bits, so ids still sort by
// creation and stay below 2^53 (exact as a JSON number), but the gap between two of a provider's
// leads tells nothing about other providers' volume; order numbers are `LP-` and 10 random
// Crockford base32 characters. Test and live leads draw from the same (non-counting) source. A
// collision (same millisecond, same 12 bits; or the same order number) fails the unique index
// and the insert is tried again with new values (lead.repository.ts). Existing leads keep their
// ids and order numbers: their providers already hold them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_deliveries add column livemode boolean not null default true`.execute(db);
  await sql`alter table webhook_deliveries add column lease_expires_at timestamptz`.execute(db);
  await sql`
    update webhook_deliveries d set livemode = false
    from lead_events e where e.id = d.event_sequence and not e.livemode`.execute(db);
  await sql`
    create index webhook_deliveries_leased_idx on webhook_deliveries (provider_id)
      where lease_expires_at is not null`.execute(db);
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

  await sql`
    create function next_lead_id() returns bigint language sql volatile as $$
      select ((floor(extract(epoch from clock_timestamp()) * 1000)::bigint - 1704067200000) << 12)
             | floor(random() * 4096)::bigint
    $$`.execute(db);
  await sql`
    create function next_order_number() returns text language sql volatile as $$
      select 'LP-' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + floor(random() * 32)::int, 1), '')
      from generate_series(1, 10)
    $$`.execute(db);
  await sql`alter table leads alter column id drop identity`.execute(db);
  await sql`alter table leads alter column id set default next_lead_id()`.execute(db);
  await sql`alter table leads alter column order_number set default next_order_number()`.execute(db);
  await sql`drop sequence lead_order_number_seq`.execute(db);
}
