/**
 * intake_guard(): the last stage of the intake pipeline (pipeline.ts), the atomic half of the
 * duplicate check and the caps, in the database. Called from the insert statement
 * (leads/lead-insert.repository.ts), it takes transaction-scoped advisory locks on the match keys
 * and on the provider's cap counter (sorted, so two requests never wait on each other in a cycle),
 * then, with a fresh snapshot, as a VOLATILE function's statements have, looks for the earliest
 * matching lead in the window and counts the window's leads. A concurrent create with the same key
 * waits for the lock and then sees the lead committed before it: 20 racing creates of one phone
 * give one original. What to do with the answer (flag, reject, which cap) is the service's.
 *
 * Migration 0007 creates the function from this text, which is the function as it stands: a
 * change to it is a new migration (`create or replace function`) that imports the new text, with
 * the text 0007 ran kept beside it. Text only: this file imports nothing (a migration imports it).
 */
export const INTAKE_GUARD_SQL = `
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
    end $$`;
