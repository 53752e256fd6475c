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
// A row read as it is (a whole period of one group) needs no histogram: each row keeps the
// buckets of its median's two middle ranks (`quote_median`, `order_median`: [lo, hi], null when
// nothing moved), `hours_median_keys()` of its histogram; only rows merged at a read (the days at
// a range's ends, the totals) bring their histograms.
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
      refusal_counts integer[] not null,
      quote_median smallint[],
      order_median smallint[]
    )`.execute(db);
  // The buckets of ranks floor((n−1)/2) and floor(n/2) (0-based) of a histogram's n values, as
  // percentile_cont(0.5) reads them (src/stats/hours-histogram.ts); null when it is empty.
  await sql`
    create function hours_median_keys(keys smallint[], counts integer[]) returns smallint[]
      language sql immutable parallel safe
      as $$
        select case when coalesce(max(total), 0) = 0 then null
                    else array[min(k) filter (where cum > (total - 1) / 2), min(k) filter (where cum > total / 2)] end
        from (select k, sum(c) over (order by o) as cum, sum(c) over () as total
              from unnest(keys, counts) with ordinality as u(k, c, o)) x
      $$`.execute(db);
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
  await sql`drop function hours_median_keys(smallint[], integer[])`.execute(db);
}
