import { type Kysely, sql } from "kysely";

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
// intake_guard() is the atomic half of the duplicate check and the caps: called from the insert
// statement (lead.repository.ts), it takes transaction-scoped advisory locks on the match keys and
// on the provider's cap counter (sorted, so two requests never wait on each other in a cycle), then
// — with a fresh snapshot, as a VOLATILE function's statements have — looks for the earliest
// matching lead in the window and counts the window's leads. A concurrent create with the same key
// waits for the lock and then sees the lead committed before it: 20 racing creates of one phone
// give one original. What to do with the answer (flag, reject, which cap) is the service's.
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

  await sql`
    create function intake_guard(
      p_provider_id bigint, p_livemode boolean, p_external_id text,
      p_phone text, p_email text, p_window_days integer, p_reject_duplicates boolean,
      p_cap_windows text[], p_cap_starts timestamptz[], p_cap_limits integer[])
    returns table (refusal text, cap_windows text[], duplicate jsonb)
    language plpgsql volatile as $$
    declare
      keys bigint[] := '{}';
      k bigint;
      mode text := case when p_livemode then 'live' else 'test:' || p_provider_id end;
      cutoff timestamptz := now() - make_interval(days => p_window_days);
      hit record;
      first_id bigint;
      first_provider bigint;
      first_external text;
      first_order text;
      first_at timestamptz;
      matched text[] := '{}';
      used integer;
      reached text[] := '{}';
    begin
      if p_phone is not null then keys := keys || hashtextextended('dup:' || mode || ':phone:' || p_phone, 0); end if;
      if p_email is not null then keys := keys || hashtextextended('dup:' || mode || ':email:' || p_email, 0); end if;
      if coalesce(array_length(p_cap_windows, 1), 0) > 0 then
        keys := keys || hashtextextended('cap:' || p_provider_id || ':' || p_livemode, 0);
      end if;
      for k in select x from unnest(keys) as x order by x loop
        perform pg_advisory_xact_lock(k);
      end loop;

      if p_phone is not null then
        select l.id, l.provider_id, l.external_id, l.order_number, l.created_at into hit
        from leads l
        where l.phone_e164 = p_phone and l.created_at > cutoff and l.livemode = p_livemode
          and (p_livemode or l.provider_id = p_provider_id)
          and not (l.provider_id = p_provider_id and l.external_id = p_external_id)
        order by l.created_at, l.id limit 1;
        if found then
          matched := matched || 'phone_number'::text;
          first_id := hit.id; first_provider := hit.provider_id; first_external := hit.external_id;
          first_order := hit.order_number; first_at := hit.created_at;
        end if;
      end if;
      if p_email is not null then
        select l.id, l.provider_id, l.external_id, l.order_number, l.created_at into hit
        from leads l
        where l.email_match = p_email and l.created_at > cutoff and l.livemode = p_livemode
          and (p_livemode or l.provider_id = p_provider_id)
          and not (l.provider_id = p_provider_id and l.external_id = p_external_id)
        order by l.created_at, l.id limit 1;
        if found then
          matched := matched || 'email'::text;
          if first_id is null or hit.created_at < first_at then
            first_id := hit.id; first_provider := hit.provider_id; first_external := hit.external_id;
            first_order := hit.order_number; first_at := hit.created_at;
          end if;
        end if;
      end if;
      if first_id is not null then
        duplicate := jsonb_build_object(
          'matched_on', to_jsonb(matched),
          'first_seen_at', first_at,
          'same_provider', first_provider = p_provider_id,
          'original', jsonb_build_object(
            'id', first_id, 'provider_id', first_provider,
            'order_number', first_order, 'external_id', first_external));
        if p_reject_duplicates then
          refusal := 'duplicate';
          return next;
          return;
        end if;
      end if;

      for i in 1 .. coalesce(array_length(p_cap_windows, 1), 0) loop
        select count(*) into used from (
          select 1 from leads l
          where l.provider_id = p_provider_id and l.livemode = p_livemode and l.created_at >= p_cap_starts[i]
          limit p_cap_limits[i]) s;
        if used >= p_cap_limits[i] then reached := reached || p_cap_windows[i]; end if;
      end loop;
      if coalesce(array_length(reached, 1), 0) > 0 then
        refusal := 'cap_reached';
        cap_windows := reached;
      end if;
      return next;
    end $$`.execute(db);
}
