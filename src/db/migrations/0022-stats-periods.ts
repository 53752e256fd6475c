import { type Kysely, sql } from "kysely";

// Statistics at the granularity asked for (docs/decisions/0020-stats.md). A long range read
// every rollup row of every day, per provider and sub-source, and every provider's refusals: a
// year by month for all providers read 730,000 refusal rows and 15,000 rollup rows at 5M leads.
//
// `lead_stats_periods` holds, per unit (day, ISO week, month in BUSINESS_TIMEZONE), provider (0:
// every provider together), mode and period, the lead counts and hours histograms of
// lead_stats_daily and the refusals of request_outcomes_daily together: one row per sub-source
// (`sub_id`, '' for leads sent without one) and one for all of them (`sub_id` null), so a read
// that does not group by sub_id reads one row a period. Whole periods only: a day once the stats
// rollup holds it whole, a week or month once its last day is in (`periods_through` on
// lead_stats_rollup); stats read the days after it as before. The job fills it, oldest day first,
// a few months a run (stats/stats.rollup.ts); nothing is backfilled here.
//
// The index of the per-provider ranking (group_by=provider sorted by a column) holds the counts,
// so the ranking of 2,000 providers is read from the index alone.
//
// The request log's filter by client address had an index only of requests without a provider
// (401s); indexes.ts builds one of every request (concurrently, on a big table), so that one
// goes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table lead_stats_periods (
      unit text not null check (unit in ('day', 'week', 'month')),
      provider_id bigint not null,
      livemode boolean not null,
      period date not null,
      sub_id text,
      accepted integer not null,
      duplicates integer not null,
      quoted integer not null,
      ordered integer not null,
      refused integer not null,
      last_lead_at timestamptz,
      quote_keys smallint[] not null,
      quote_counts integer[] not null,
      order_keys smallint[] not null,
      order_counts integer[] not null,
      refusal_codes text[] not null,
      refusal_counts integer[] not null
    )`.execute(db);
  await sql`
    create unique index lead_stats_periods_key on lead_stats_periods (unit, livemode, provider_id, period, sub_id)
      nulls not distinct`.execute(db);
  await sql`
    create index lead_stats_periods_ranking_idx on lead_stats_periods (unit, livemode, period)
      include (provider_id, accepted, duplicates, quoted, ordered, refused, last_lead_at)
      where sub_id is null and provider_id <> 0`.execute(db);
  await sql`alter table lead_stats_rollup add column periods_through date`.execute(db);
  await sql`drop index if exists request_log_client_ip_idx`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists request_log_client_ip_idx on request_log (client_ip, created_at desc) where provider_id is null`.execute(
    db,
  );
  await sql`alter table lead_stats_rollup drop column periods_through`.execute(db);
  await sql`drop table lead_stats_periods`.execute(db);
}
