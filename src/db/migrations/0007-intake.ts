import { type Kysely, sql } from "kysely";
import { INTAKE_GUARD_SQL } from "../../intake/intake-guard.sql.ts";

// Intake that judges quality (docs/intake.md).
//
// Leads keep what the intake pipeline derived and what providers may now send: the phone in E.164
// and the email lower-cased (the duplicate check's match keys, each with an index
// on (key, created_at) so the look-back lookup is an index scan whatever the table's size), the
// sub-source, the consent evidence, each vehicle's VIN, and — for a lead flagged as a duplicate —
// what it duplicates (`duplicate`: matched_on, first_seen_at, same_provider and the original's id,
// provider, order number and external_id, shown in full to administrators only).
//
// Existing leads get their match keys from SQL: a US number of 10 digits, or 11 starting with 1,
// becomes +1…; any other stays without one (it is never matched). New leads get libphonenumber's.
//
// Providers carry their intake rules as one JSON document (the API's own shape) and a version that
// each change increments (the `intake_rules.changed` event carries it, so a receiver keeps the
// newest). An `intake_rules.changed` event belongs to no lead: lead_events.lead_id and
// webhook_deliveries.lead_id may be null.
//
// intake_guard() is the atomic half of the duplicate check and the caps, the intake pipeline's
// last stage: its text and what it does are in src/intake/intake-guard.sql.ts.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table leads
      add column phone_e164 text,
      add column email_match text,
      add column sub_id text,
      add column source_url text,
      add column consent jsonb,
      add column duplicate jsonb`.execute(db);
  await sql`alter table vehicles add column vin text`.execute(db);
  await sql`
    update leads set
      phone_e164 = case
        when length(regexp_replace(phone_number, '[^0-9]', '', 'g')) = 10
          then '+1' || regexp_replace(phone_number, '[^0-9]', '', 'g')
        when regexp_replace(phone_number, '[^0-9]', '', 'g') ~ '^1[0-9]{10}$'
          then '+' || regexp_replace(phone_number, '[^0-9]', '', 'g')
      end,
      email_match = lower(email)`.execute(db);
  await sql`create index leads_phone_match_idx on leads (phone_e164, created_at, id) where phone_e164 is not null`.execute(
    db,
  );
  await sql`create index leads_email_match_idx on leads (email_match, created_at, id) where email_match is not null`.execute(
    db,
  );
  // Caps count a provider's leads of one mode since the window's start.
  await sql`create index leads_provider_created_idx on leads (provider_id, livemode, created_at)`.execute(db);
  // The back office's duplicates filter, newest first.
  await sql`create index leads_duplicates_idx on leads (id desc) where duplicate is not null`.execute(db);

  await sql`
    alter table providers
      add column intake_rules jsonb not null default '{}'::jsonb,
      add column intake_rules_version integer not null default 0,
      add column intake_rules_updated_at timestamptz`.execute(db);

  await sql`alter table lead_events alter column lead_id drop not null`.execute(db);
  await sql`alter table lead_events drop constraint lead_events_type_check`.execute(db);
  await sql`
    alter table lead_events add constraint lead_events_type_check check (type in
      ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed'))`.execute(db);
  await sql`alter table webhook_deliveries alter column lead_id drop not null`.execute(db);

  // The function's text is the intake pipeline's own (src/intake/intake-guard.sql.ts).
  await sql.raw(INTAKE_GUARD_SQL).execute(db);
}
