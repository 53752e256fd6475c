import { type Kysely, sql } from "kysely";

// Returns and disputes (src/returns/, docs/decisions/0034-returns.md).
//
// lead_returns: at most one return per lead (unique lead_id), in the lead's book. Its state moves
// requested → (contested →) approved | denied, or to withdrawn before a decision; a test lead's
// return goes with the lead when the sandbox deletes it (on delete cascade). The lead's
// external_id and order number are copied (what lists and events show; they never change).
//
// While a return is open (requested or contested) its purchase stays on pending: the settlement
// queue row is `held` (set and cleared by the returns service in the transaction that changes the
// return), and ledger_settle_due() now also skips a lead with an open return, so neither a
// missed flag nor a race can settle it. An approval posts a `return` transaction (idempotency
// key lead:{id}:return) in the transaction that approves it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table lead_returns (
      id bigint generated always as identity primary key,
      public_id text not null unique,
      lead_id bigint not null unique references leads (id) on delete cascade,
      provider_id bigint not null references providers (id),
      livemode boolean not null,
      lead_external_id text not null,
      lead_order_number text not null,
      state text not null check (state in ('requested', 'contested', 'approved', 'denied', 'withdrawn')),
      reason text not null,
      note text,
      amount_cents bigint not null,
      currency text not null,
      requested_at timestamptz not null,
      requested_by text not null,
      contest_deadline timestamptz not null,
      contest jsonb,
      decided_at timestamptz,
      decided_by text,
      decision_note text
    )`.execute(db);
  // A provider's returns newest first, and the month's count for the cap.
  await sql`create index lead_returns_provider_idx on lead_returns (provider_id, livemode, id)`.execute(db);
  await sql`create index lead_returns_provider_requested_idx on lead_returns (provider_id, livemode, requested_at)`.execute(
    db,
  );
  // The auto-approval job's due returns, and the back office's queue by deadline.
  await sql`create index lead_returns_deadline_idx on lead_returns (contest_deadline, id) where state in ('requested', 'contested')`.execute(
    db,
  );
  await sql`create index lead_returns_state_deadline_idx on lead_returns (state, contest_deadline, id)`.execute(db);

  await sql`
    create or replace function ledger_settle_due(p_now timestamptz, p_limit integer) returns integer
    language plpgsql volatile as $$
    declare
      q record;
      settled integer := 0;
    begin
      -- In provider order, so two instances settling at once lock accounts in the same order.
      -- A lead with an open return (requested or contested) is not settled until it is decided.
      for q in
        select * from (
          select s.* from ledger_settlement_queue s
          where s.settle_at <= p_now and not s.held
            and not exists (select 1 from lead_returns r
                            where r.lead_id = s.lead_id and r.state in ('requested', 'contested'))
          order by s.settle_at, s.transaction_id
          limit p_limit
          for update of s skip locked) due
        order by due.provider_id, due.livemode, due.settle_at, due.transaction_id
      loop
        perform ledger_post(q.provider_id, q.livemode, 'settlement', 'lead:' || q.lead_id || ':settlement',
          'txn_' || replace(gen_random_uuid()::text, '-', ''), p_now, q.currency, array['pending', 'available'],
          array[-q.amount_cents, q.amount_cents], q.lead_id, q.lead_external_id, q.lead_order_number, null,
          'Settled: lead ' || q.lead_order_number, '{}'::jsonb, 'system:settlement', null);
        delete from ledger_settlement_queue s where s.transaction_id = q.transaction_id;
        settled := settled + 1;
      end loop;
      return settled;
    end $$`.execute(db);

  await sql`alter table lead_events drop constraint lead_events_type_check`.execute(db);
  await sql`
    alter table lead_events add constraint lead_events_type_check check (type in
      ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed',
       'terms.changed', 'payout.created', 'adjustment.created',
       'lead.return_requested', 'lead.return_contested', 'lead.return_approved', 'lead.return_denied',
       'lead.return_withdrawn'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from lead_events where type like 'lead.return_%'`.execute(db);
  await sql`alter table lead_events drop constraint lead_events_type_check`.execute(db);
  await sql`
    alter table lead_events add constraint lead_events_type_check check (type in
      ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed',
       'terms.changed', 'payout.created', 'adjustment.created'))`.execute(db);
  await sql`
    create or replace function ledger_settle_due(p_now timestamptz, p_limit integer) returns integer
    language plpgsql volatile as $$
    declare
      q record;
      settled integer := 0;
    begin
      for q in
        select * from (
          select s.* from ledger_settlement_queue s
          where s.settle_at <= p_now and not s.held
          order by s.settle_at, s.transaction_id
          limit p_limit
          for update skip locked) due
        order by due.provider_id, due.livemode, due.settle_at, due.transaction_id
      loop
        perform ledger_post(q.provider_id, q.livemode, 'settlement', 'lead:' || q.lead_id || ':settlement',
          'txn_' || replace(gen_random_uuid()::text, '-', ''), p_now, q.currency, array['pending', 'available'],
          array[-q.amount_cents, q.amount_cents], q.lead_id, q.lead_external_id, q.lead_order_number, null,
          'Settled: lead ' || q.lead_order_number, '{}'::jsonb, 'system:settlement', null);
        delete from ledger_settlement_queue s where s.transaction_id = q.transaction_id;
        settled := settled + 1;
      end loop;
      return settled;
    end $$`.execute(db);
  await sql`drop table lead_returns`.execute(db);
}
