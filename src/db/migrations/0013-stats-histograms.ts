import { type Kysely, sql } from "kysely";

// The stats rollup kept every quoted and ordered lead's hours (`real[]` per provider,
// day and sub_id), so a median sorted every value of the range: the back office's 30 days at 5M
// leads sorted 78,000 values (92 ms, spilling to disk), and any longer range more. Each rollup row
// now keeps a histogram instead: the buckets (`*_keys`, ascending) that hold at least one lead and
// how many each holds (`*_counts`), so a range reads at most a few hundred buckets a day whatever
// the day's volume. Medians become approximate: within 1 % (or 18 seconds below 36 seconds).
//
// The bucket of a duration of h hours is `hours_bucket(h)`: 0 for h ≤ 0.01 (36 s), else
// ceil(ln(h / 0.01) / ln(1.02)), so bucket k ≥ 1 holds (0.01·1.02^(k-1), 0.01·1.02^k]. The hours a
// bucket stands for (src/stats/hours-histogram.ts) are within 1 % of every value in it. One SQL
// function, inlined by the planner, so the rollup and the live read of today cannot disagree.
//
// Existing rows are converted in place (no re-roll; the watermarks stay).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function hours_bucket(h double precision) returns smallint
      language sql immutable parallel safe
      as $$ select (case when h <= 0.01 then 0 else ceil(ln(h / 0.01) / ln(1.02)) end)::smallint $$`.execute(db);
  await sql`
    alter table lead_stats_daily
      add column quote_keys smallint[] not null default '{}',
      add column quote_counts integer[] not null default '{}',
      add column order_keys smallint[] not null default '{}',
      add column order_counts integer[] not null default '{}'`.execute(db);
  await sql`
    update lead_stats_daily set
      quote_keys = coalesce((select array_agg(k order by k) from (select hours_bucket(x) as k from unnest(hours_to_quote) x where x is not null group by 1) s), '{}'),
      quote_counts = coalesce((select array_agg(n order by k) from (select hours_bucket(x) as k, count(*)::int as n from unnest(hours_to_quote) x where x is not null group by 1) s), '{}'),
      order_keys = coalesce((select array_agg(k order by k) from (select hours_bucket(x) as k from unnest(hours_to_order) x where x is not null group by 1) s), '{}'),
      order_counts = coalesce((select array_agg(n order by k) from (select hours_bucket(x) as k, count(*)::int as n from unnest(hours_to_order) x where x is not null group by 1) s), '{}')
    where cardinality(hours_to_quote) > 0 or cardinality(hours_to_order) > 0`.execute(db);
  await sql`alter table lead_stats_daily drop column hours_to_quote, drop column hours_to_order`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to one value per lead: each bucket's lower bound, repeated by its count (approximate).
  await sql`
    alter table lead_stats_daily
      add column hours_to_quote real[] not null default '{}',
      add column hours_to_order real[] not null default '{}'`.execute(db);
  await sql`
    update lead_stats_daily set
      hours_to_quote = coalesce((select array_agg(case when k = 0 then 0 else 0.01 * power(1.02, k - 1) end::real)
                                 from unnest(quote_keys, quote_counts) as u(k, n), generate_series(1, n)), '{}'),
      hours_to_order = coalesce((select array_agg(case when k = 0 then 0 else 0.01 * power(1.02, k - 1) end::real)
                                 from unnest(order_keys, order_counts) as u(k, n), generate_series(1, n)), '{}')`.execute(
    db,
  );
  await sql`
    alter table lead_stats_daily
      drop column quote_keys, drop column quote_counts, drop column order_keys, drop column order_counts`.execute(db);
  await sql`drop function hours_bucket(double precision)`.execute(db);
}
