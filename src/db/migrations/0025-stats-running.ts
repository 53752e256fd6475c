import { type Kysely, sql } from "kysely";

// Running totals of each provider's outcomes (docs/decisions/0020-stats.md), for ranking every
// provider over any range (group_by=provider sorted by a column). Summing lead_stats_periods'
// rows of each provider over a range read a row per provider and period, month, week and day:
// 20,000 to 40,000 rows for 2,000 providers, 20 to 30 ms, more the longer and the less aligned
// the range.
//
// `lead_stats_running` holds, per business day the period rollup holds, mode and provider (0
// excluded), the sums of its lead_stats_periods day rows from its first day through that day:
// one row a day from the provider's first counted day on, whether or not anything happened that
// day. A range's sums are two rows a provider: its last day's minus the day's before it; the last
// lead of a range is the last day's, unless the day before it has the same one (then nothing
// came in the range). The stats rollup writes a day's rows with its day rows
// (stats-periods.repository.ts), and writes again, from the first day moved on, the rows of the
// providers whose leads moved.
//
// The table starts empty and the period rollup starts over (periods_through null): the job rolls
// both up from the first day, a quarter a run, and stats read lead_stats_daily meanwhile. The
// ranking index of lead_stats_periods has no reader left.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table lead_stats_running (
      day date not null,
      livemode boolean not null,
      provider_id bigint not null,
      accepted bigint not null,
      duplicates bigint not null,
      quoted bigint not null,
      ordered bigint not null,
      refused bigint not null,
      last_lead_at timestamptz,
      primary key (day, livemode, provider_id)
    )`.execute(db);
  await sql`drop index if exists lead_stats_periods_ranking_idx`.execute(db);
  await sql`truncate lead_stats_periods`.execute(db);
  await sql`update lead_stats_rollup set periods_through = null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table lead_stats_running`.execute(db);
  await sql`
    create index lead_stats_periods_ranking_idx on lead_stats_periods (unit, livemode, period)
      include (provider_id, accepted, duplicates, quoted, ordered, refused, last_lead_at)
      where sub_id is null and provider_id <> 0`.execute(db);
}
