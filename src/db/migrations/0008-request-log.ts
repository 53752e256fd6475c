import { type Kysely, sql } from "kysely";

// The request log and outcome analytics (docs/request-log.md, docs/stats.md).
//
// `request_log` holds one row per Public API request, ordered by (created_at, entry_id): the
// random entry_id breaks ties and names an entry in a page token without revealing how many
// entries all providers have. It is written with every lead, so it carries as few indexes as its
// reads need (no primary key: nothing refers to a row) and keeps bodies and errors as `json`
// (stored as sent, not parsed into jsonb). (request-log/request-log.ts says what is in
// it and how personal data is masked). It is written off the request path in batches, so it has no
// foreign keys (a batch never waits on a provider row's lock) and is deleted by age
// (REQUEST_LOG_RETENTION_DAYS) in small batches. Indexes: a provider's requests of one mode by
// time (the Public API list), all requests by time (the back office, retention), request id,
// external_id and client address (the back office's lookups).
//
// `request_outcomes_daily` counts create-lead requests per business day, provider, mode, sub_id
// and outcome code ('' for accepted); the batch that writes the log rows adds to it in the same
// transaction, so `stats` never scans the log. It outlives the log's retention (one row per
// provider, day, sub-source and code).
//
// Leads remember when they first reached QUOTE and ORDER (stats: quote and order rates and the
// median hours between), set by the same statement that moves them; existing leads get them from
// their state history.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table request_log (
      entry_id uuid not null default gen_random_uuid(),
      request_id text not null,
      created_at timestamptz not null,
      provider_id bigint,
      livemode boolean,
      operation text not null,
      protocol text not null,
      status smallint not null,
      rpc_code text,
      outcome text not null check (outcome in ('accepted', 'rejected', 'rate_limited', 'failed')),
      code text,
      detail text,
      errors json,
      external_id text,
      lead_id bigint,
      duration_ms real not null,
      client_ip text,
      key_hint text,
      user_agent text,
      request_body json
    )`.execute(db);
  await sql`create index request_log_provider_idx on request_log (provider_id, livemode, created_at desc, entry_id desc)`.execute(
    db,
  );
  await sql`create index request_log_created_idx on request_log (created_at desc, entry_id desc)`.execute(db);
  await sql`create index request_log_request_id_idx on request_log (request_id)`.execute(db);
  await sql`create index request_log_external_id_idx on request_log (external_id, created_at desc) where external_id is not null`.execute(
    db,
  );
  // Callers no key named (401s) are found by their address.
  await sql`create index request_log_client_ip_idx on request_log (client_ip, created_at desc) where provider_id is null`.execute(
    db,
  );
  // The back office's filters by a refusal's status or code across providers, newest first (a
  // rare code would otherwise walk the whole log).
  await sql`
    create index request_log_status_idx on request_log (status, created_at desc, entry_id desc)
      where status >= 400`.execute(db);
  await sql`
    create index request_log_code_idx on request_log (code, created_at desc, entry_id desc)
      where code is not null`.execute(db);

  await sql`
    create table request_outcomes_daily (
      provider_id bigint not null,
      livemode boolean not null,
      day date not null,
      sub_id text not null default '',
      code text not null default '',
      requests integer not null,
      primary key (provider_id, livemode, day, sub_id, code)
    )`.execute(db);
  await sql`create index request_outcomes_daily_day_idx on request_outcomes_daily (livemode, day)`.execute(db);

  await sql`alter table leads add column quoted_at timestamptz, add column ordered_at timestamptz`.execute(db);
  await sql`
    update leads l set
      quoted_at = (select min(h.changed_at) from lead_state_history h where h.lead_id = l.id and h.to_state = 'QUOTE'),
      ordered_at = (select min(h.changed_at) from lead_state_history h where h.lead_id = l.id and h.to_state = 'ORDER')
    where l.state <> 'LEAD'`.execute(db);
  // Stats across providers read one mode's recent leads by creation time.
  await sql`create index leads_mode_created_idx on leads (livemode, created_at)`.execute(db);
  // All providers' refusals of a range, read from the index alone.
  await sql`
    create index request_outcomes_daily_refusals_idx on request_outcomes_daily (livemode, day)
      include (provider_id, sub_id, code, requests) where code <> ''`.execute(db);

  // The leads of each past business day, per provider, mode and sub_id, rolled up by a job
  // (stats/stats.rollup.ts): counts, the last lead's time and every quoted and ordered lead's
  // hours (so medians stay exact). Days after `rolled_through` are read from the leads themselves.
  await sql`
    create table lead_stats_daily (
      provider_id bigint not null,
      livemode boolean not null,
      day date not null,
      sub_id text not null default '',
      accepted integer not null,
      duplicates integer not null,
      quoted integer not null,
      ordered integer not null,
      last_lead_at timestamptz,
      hours_to_quote real[] not null default '{}',
      hours_to_order real[] not null default '{}',
      primary key (provider_id, livemode, day, sub_id)
    )`.execute(db);
  await sql`create index lead_stats_daily_day_idx on lead_stats_daily (livemode, day)`.execute(db);
  await sql`
    create table lead_stats_rollup (
      id integer primary key check (id = 1),
      rolled_through date,
      history_id bigint not null default 0,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`insert into lead_stats_rollup (id) values (1)`.execute(db);
  await sql`
    create aggregate array_cat_agg(anycompatiblearray) (
      sfunc = array_cat, stype = anycompatiblearray, initcond = '{}')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop aggregate array_cat_agg(anycompatiblearray)`.execute(db);
  await sql`drop table lead_stats_rollup`.execute(db);
  await sql`drop table lead_stats_daily`.execute(db);
  await sql`drop index leads_mode_created_idx`.execute(db);
  await sql`alter table leads drop column quoted_at, drop column ordered_at`.execute(db);
  await sql`drop table request_outcomes_daily`.execute(db);
  await sql`drop table request_log`.execute(db);
}
