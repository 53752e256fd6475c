import { type Kysely, sql } from "kysely";

// Money: commercial terms, a price on every billable lead, and a double-entry ledger
// (src/money/, docs/decisions/0033-money-ledger.md).
//
// provider_terms: one immutable row per version of a provider's terms (the API's own snake_case
// document). The current terms are the highest version; a provider without a row has the
// default terms (money/terms.ts) as version 0.
//
// leads.price_*: the price fixed when the lead was accepted (null for a duplicate, and for leads
// stored before prices existed).
//
// The ledger, modelled on pgledger: accounts per provider and mode (`pending`, `available`, and the
// broker's `lead_expense` and `payouts` for that provider: sharded by provider, so creates of
// different providers never wait on one row), transactions (one per movement of money, each with
// a unique idempotency key) and entries (one per leg; every transaction's entries sum to zero).
// Each entry stores its account's balance after it and the account's version, so a balance is
// read from one row and a provider's chain can be checked line by line. Transactions and entries
// are never updated or deleted (a trigger refuses it); corrections are new transactions.
// Entries copy what the provider's list shows of their transaction (type, lead, reference,
// description): one index scan answers a page, and the copies cannot drift (nothing changes).
//
// ledger_post() is the only writer: it locks the transaction's accounts in id order, refuses a
// transaction that does not balance, answers `exists` for an idempotency key already posted (and
// writes nothing), `insufficient` when the account named in p_no_overdraft would go below zero,
// and otherwise writes the transaction, its entries and the accounts' balances. A transaction's
// time is never before the last entry of any of its accounts, so on each account time order is
// version order (statements read opening balances off that).
//
// ledger_post_purchase() is what the lead insert calls (leads/lead.repository.ts) in the same
// statement as the lead: it refuses (LPT01) when the terms the price was worked out with are no
// longer the current ones, posts the purchase and queues its settlement. ledger_settle_due() is
// the settlement job's batch: due purchases, claimed with SKIP LOCKED, each moved from pending to
// available by its own idempotent transaction, and taken off the queue in the same transaction.
// A queued purchase that is `held` (an open return, later) is not settled until released.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table leads
      add column price_cents bigint,
      add column price_currency text,
      add column price_rule text,
      add column price_terms_version integer`.execute(db);

  await sql`
    create table provider_terms (
      provider_id bigint not null references providers (id),
      version integer not null check (version > 0),
      terms jsonb not null,
      effective_at timestamptz not null default now(),
      created_by text not null,
      primary key (provider_id, version)
    )`.execute(db);

  await sql`
    create table ledger_accounts (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      livemode boolean not null,
      type text not null check (type in ('pending', 'available', 'lead_expense', 'payouts')),
      currency text not null,
      balance bigint not null default 0,
      version bigint not null default 0,
      last_entry_at timestamptz,
      created_at timestamptz not null default now(),
      unique (provider_id, livemode, type)
    )`.execute(db);

  await sql`
    create table ledger_transactions (
      id bigint generated always as identity primary key,
      public_id text not null,
      provider_id bigint not null references providers (id),
      livemode boolean not null,
      type text not null check (type in ('lead_purchase', 'settlement', 'return', 'adjustment', 'payout')),
      idempotency_key text not null unique,
      amount_cents bigint not null check (amount_cents >= 0),
      currency text not null,
      lead_id bigint,
      lead_external_id text,
      lead_order_number text,
      reference text,
      description text not null,
      details jsonb not null default '{}'::jsonb,
      created_by text not null,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index ledger_transactions_provider_idx on ledger_transactions (provider_id, livemode, type, id)`.execute(
    db,
  );

  await sql`
    create table ledger_entries (
      id bigint generated always as identity primary key,
      public_id text not null unique,
      transaction_id bigint not null references ledger_transactions (id),
      account_id bigint not null references ledger_accounts (id),
      provider_id bigint not null,
      livemode boolean not null,
      account_type text not null,
      type text not null,
      amount_cents bigint not null,
      balance_after_cents bigint not null,
      account_version bigint not null,
      currency text not null,
      lead_id bigint,
      lead_external_id text,
      lead_order_number text,
      reference text,
      description text not null,
      created_at timestamptz not null,
      unique (account_id, account_version)
    )`.execute(db);
  await sql`create index ledger_entries_transaction_idx on ledger_entries (transaction_id)`.execute(db);
  // A statement's opening balance: the account's last entry before the month.
  await sql`create index ledger_entries_account_created_idx on ledger_entries (account_id, created_at, id)`.execute(db);
  // A provider's own lines (pending and available), newest first, and a month's totals.
  await sql`
    create index ledger_entries_provider_idx on ledger_entries (provider_id, livemode, created_at, id)
      include (account_type, type, amount_cents)
      where account_type in ('pending', 'available')`.execute(db);
  await sql`
    create index ledger_entries_provider_type_idx on ledger_entries (provider_id, livemode, type, created_at, id)
      where account_type in ('pending', 'available')`.execute(db);
  await sql`
    create index ledger_entries_provider_lead_idx on ledger_entries (provider_id, livemode, lead_external_id)
      where account_type in ('pending', 'available') and lead_external_id is not null`.execute(db);

  await sql`
    create table ledger_settlement_queue (
      transaction_id bigint primary key references ledger_transactions (id),
      provider_id bigint not null,
      livemode boolean not null,
      lead_id bigint not null,
      lead_external_id text not null,
      lead_order_number text not null,
      amount_cents bigint not null,
      currency text not null,
      settle_at timestamptz not null,
      held boolean not null default false
    )`.execute(db);
  await sql`create index ledger_settlement_due_idx on ledger_settlement_queue (settle_at, transaction_id) where not held`.execute(
    db,
  );

  await sql`
    create function ledger_refuse_change() returns trigger language plpgsql as $$
    begin
      raise exception '% on % is refused: the ledger is append-only; post a correcting transaction instead',
        tg_op, tg_table_name using errcode = 'LPL01';
    end $$`.execute(db);
  for (const table of ["ledger_transactions", "ledger_entries", "provider_terms"]) {
    await sql
      .raw(`create trigger ${table}_append_only before update or delete on ${table}
        for each row execute function ledger_refuse_change()`)
      .execute(db);
    await sql
      .raw(`create trigger ${table}_no_truncate before truncate on ${table}
        for each statement execute function ledger_refuse_change()`)
      .execute(db);
  }
  // An account's balance changes only through ledger_post; what the account is never changes.
  await sql`
    create function ledger_account_guard() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' or new.provider_id <> old.provider_id or new.livemode <> old.livemode
         or new.type <> old.type or new.currency <> old.currency then
        raise exception '% of ledger account % is refused', tg_op, old.id using errcode = 'LPL01';
      end if;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger ledger_accounts_guard before update or delete on ledger_accounts
      for each row execute function ledger_account_guard()`.execute(db);
  await sql`
    create trigger ledger_accounts_no_truncate before truncate on ledger_accounts
      for each statement execute function ledger_refuse_change()`.execute(db);

  await sql`
    create function ledger_post(
      p_provider_id bigint, p_livemode boolean, p_type text, p_key text, p_public_id text, p_at timestamptz,
      p_currency text, p_accounts text[], p_amounts bigint[],
      p_lead_id bigint, p_lead_external_id text, p_lead_order_number text,
      p_reference text, p_description text, p_details jsonb, p_created_by text, p_no_overdraft text)
    returns table (txn_id bigint, outcome text)
    language plpgsql volatile as $$
    declare
      legs integer := coalesce(array_length(p_accounts, 1), 0);
      locked integer;
      v_txn bigint;
      v_at timestamptz;
      v_moved bigint;
      v_account record;
    begin
      if legs < 2 or legs <> coalesce(array_length(p_amounts, 1), 0) then
        raise exception 'ledger_post: % needs two or more legs, each with an amount', p_key;
      end if;
      if (select sum(a) from unnest(p_amounts) a) <> 0 then
        raise exception 'ledger_post: % does not balance', p_key;
      end if;
      -- Lock the accounts in id order (created on first use): posts to one account serialize,
      -- and no two posts can wait on each other in a cycle.
      select count(*) into locked from (
        select a.id from ledger_accounts a
        where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = any(p_accounts)
        order by a.id for update) s;
      if locked < legs then
        insert into ledger_accounts (provider_id, livemode, type, currency)
        select p_provider_id, p_livemode, t, p_currency
        from unnest(array['pending', 'available', 'lead_expense', 'payouts']) t
        on conflict (provider_id, livemode, type) do nothing;
        select count(*) into locked from (
          select a.id from ledger_accounts a
          where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = any(p_accounts)
          order by a.id for update) s;
      end if;
      if locked <> legs then raise exception 'ledger_post: % names an account twice or an unknown one', p_key; end if;
      if exists (select 1 from ledger_accounts a
                 where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = any(p_accounts)
                   and a.currency <> p_currency) then
        raise exception 'ledger_post: % is in %, its accounts are not', p_key, p_currency;
      end if;

      select t.id into v_txn from ledger_transactions t where t.idempotency_key = p_key;
      if v_txn is not null then
        txn_id := v_txn; outcome := 'exists'; return next; return;
      end if;
      if p_no_overdraft is not null and exists (
        select 1 from ledger_accounts a join unnest(p_accounts, p_amounts) as leg(type, amount) on leg.type = a.type
        where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = p_no_overdraft
          and a.balance + leg.amount < 0) then
        outcome := 'insufficient'; return next; return;
      end if;

      select greatest(p_at, now(), max(a.last_entry_at)) into v_at from ledger_accounts a
      where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = any(p_accounts);
      select coalesce(sum(a), 0) into v_moved from unnest(p_amounts) a where a > 0;
      insert into ledger_transactions (public_id, provider_id, livemode, type, idempotency_key, amount_cents, currency,
        lead_id, lead_external_id, lead_order_number, reference, description, details, created_by, created_at)
      values (p_public_id, p_provider_id, p_livemode, p_type, p_key, v_moved, p_currency,
        p_lead_id, p_lead_external_id, p_lead_order_number, p_reference, p_description, p_details, p_created_by, v_at)
      returning id into v_txn;
      for i in 1 .. legs loop
        update ledger_accounts a
        set balance = a.balance + p_amounts[i], version = a.version + 1, last_entry_at = v_at
        where a.provider_id = p_provider_id and a.livemode = p_livemode and a.type = p_accounts[i]
        returning a.id, a.balance, a.version into v_account;
        insert into ledger_entries (public_id, transaction_id, account_id, provider_id, livemode, account_type, type,
          amount_cents, balance_after_cents, account_version, currency, lead_id, lead_external_id, lead_order_number,
          reference, description, created_at)
        values ('btx_' || replace(gen_random_uuid()::text, '-', ''), v_txn, v_account.id, p_provider_id, p_livemode,
          p_accounts[i], p_type, p_amounts[i], v_account.balance, v_account.version, p_currency,
          p_lead_id, p_lead_external_id, p_lead_order_number, p_reference, p_description, v_at);
      end loop;
      txn_id := v_txn; outcome := 'posted'; return next;
    end $$`.execute(db);

  await sql`
    create function ledger_post_purchase(
      p_lead_id bigint, p_provider_id bigint, p_livemode boolean, p_external_id text, p_order_number text,
      p_at timestamptz, p_amount bigint, p_currency text, p_terms_version integer, p_settlement_days integer)
    returns bigint
    language plpgsql volatile as $$
    declare
      current_version integer;
      v_txn bigint;
    begin
      select coalesce(max(t.version), 0) into current_version from provider_terms t where t.provider_id = p_provider_id;
      if current_version <> p_terms_version then
        raise exception 'the terms changed: version % is current, the price was worked out with %',
          current_version, p_terms_version using errcode = 'LPT01';
      end if;
      select p.txn_id into v_txn from ledger_post(p_provider_id, p_livemode, 'lead_purchase',
        'lead:' || p_lead_id || ':purchase', 'txn_' || replace(gen_random_uuid()::text, '-', ''), p_at, p_currency,
        array['lead_expense', 'pending'], array[-p_amount, p_amount], p_lead_id, p_external_id, p_order_number,
        null, 'Lead ' || p_order_number, '{}'::jsonb, 'provider:' || p_provider_id, null) p;
      insert into ledger_settlement_queue (transaction_id, provider_id, livemode, lead_id, lead_external_id,
        lead_order_number, amount_cents, currency, settle_at)
      values (v_txn, p_provider_id, p_livemode, p_lead_id, p_external_id, p_order_number, p_amount, p_currency,
        p_at + make_interval(days => p_settlement_days));
      return v_txn;
    end $$`.execute(db);

  await sql`
    create function ledger_settle_due(p_now timestamptz, p_limit integer) returns integer
    language plpgsql volatile as $$
    declare
      q record;
      settled integer := 0;
    begin
      -- In provider order, so two instances settling at once lock accounts in the same order.
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

  await sql`alter table lead_events drop constraint lead_events_type_check`.execute(db);
  await sql`
    alter table lead_events add constraint lead_events_type_check check (type in
      ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed',
       'terms.changed', 'payout.created', 'adjustment.created'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table lead_events drop constraint lead_events_type_check`.execute(db);
  await sql`
    alter table lead_events add constraint lead_events_type_check check (type in
      ('lead.created', 'lead.quoted', 'lead.ordered', 'lead.status_changed', 'intake_rules.changed'))`.execute(db);
  await sql`drop function ledger_settle_due(timestamptz, integer)`.execute(db);
  await sql`drop function ledger_post_purchase(bigint, bigint, boolean, text, text, timestamptz, bigint, text, integer, integer)`.execute(
    db,
  );
  await sql`drop function ledger_post(bigint, boolean, text, text, text, timestamptz, text, text[], bigint[], bigint, text, text, text, text, jsonb, text, text)`.execute(
    db,
  );
  await sql`drop table ledger_settlement_queue, ledger_entries, ledger_transactions, ledger_accounts, provider_terms`.execute(
    db,
  );
  await sql`drop function ledger_account_guard()`.execute(db);
  await sql`drop function ledger_refuse_change()`.execute(db);
  await sql`
    alter table leads
      drop column price_cents, drop column price_currency, drop column price_rule, drop column price_terms_version`.execute(
    db,
  );
}
