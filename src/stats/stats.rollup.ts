/**
 * Keeps lead_stats_daily: each past business day's leads per provider, mode and sub_id (counts,
 * and histograms of the hours to QUOTE and to ORDER), so stats read a few rows per day instead of
 * every lead; and from it and the request log's daily counts lead_stats_periods, each whole day,
 * ISO week and month (stats-periods.repository.ts), so a range reads a row per period asked for. Stats read the rollup up to the day it has reached and the leads
 * themselves after it, bucketing their hours the same way, so they answer the same whether or not
 * the job has run; the job only makes them fast.
 *
 * Every `intervalMs` (and 5 s after start): roll up whole days from the day after the watermark
 * to yesterday (at most 31 per run, the first run starting at the first lead's day), then roll up
 * again the past days whose leads moved since the last run (from lead_state_history; a move is
 * picked up once it is `lagSeconds` old; the periods holding them too), then the whole days not
 * yet in lead_stats_periods (at most 92 per run, with the weeks and months they end), then today's leads created more than `lagSeconds` ago
 * (replacing the previous run's; stats read the leads created since from the leads). One
 * instance works at a time (an advisory lock). Which days a run rolls up: rollup-plan.ts.
 * Test data deleted by the sandbox's retention stays counted in its day (see docs/decisions/0020-stats.md).
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { daysToRollUp, lastWholeDay, movedDaysToRollAgain, rollsTodayUp, shiftDay } from "./rollup-plan.ts";
import { movedDays, rollUpAgain, rollUpDay, rollUpToday, rollupState } from "./stats.repository.ts";
import { analyzePeriods, periodsState, resetPeriods, rollPeriodsOf } from "./stats-periods.repository.ts";

/** At most this many days rolled into lead_stats_periods per run (the first runs catch up a quarter at a time). */
export const MAX_PERIOD_DAYS_PER_RUN = 92;
/** A run that rolls this many days or more is catching up: the table is analyzed after it. */
const CATCH_UP_DAYS = 7;

export interface StatsRollupOptions {
  readonly db: Kysely<Database>;
  readonly zone: string;
  readonly logger: Logger;
  readonly now?: () => Date;
  readonly intervalMs?: number;
  readonly lagSeconds?: number;
}

export type StatsRollup = ReturnType<typeof createStatsRollup>;

export function createStatsRollup(options: StatsRollupOptions) {
  const { db, zone, logger } = options;
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? 60_000;
  const lagSeconds = options.lagSeconds ?? 30;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;

  async function runOnce(): Promise<void> {
    const state = await rollupState(db, zone);
    if (state.rolledThrough === null) await resetPeriods(db);
    const lastWhole = lastWholeDay(now(), zone, lagSeconds);
    let rolled = state.rolledThrough;
    for (const day of daysToRollUp(state, lastWhole)) {
      if (!(await rollUpDay(db, zone, day))) return; // another instance is at it
      rolled = day;
    }
    if (rolled === null) return;
    const moved = await movedDays(db, zone, state.historyId, 5000, lagSeconds);
    if (moved.lastId !== state.historyId) {
      if (!(await rollUpAgain(db, zone, movedDaysToRollAgain(moved.keys, rolled), moved.lastId))) return;
    }
    // The whole days into lead_stats_periods (with the weeks and months they end), oldest first.
    const periods = await periodsState(db);
    let after = periods.periodsThrough;
    let next = after !== null ? shiftDay(after, 1) : periods.firstDay;
    let n = 0;
    for (; next !== null && next <= rolled && n < MAX_PERIOD_DAYS_PER_RUN; n += 1) {
      if (!(await rollPeriodsOf(db, next, after))) return;
      after = next;
      next = shiftDay(next, 1);
    }
    // A catch-up (after an upgrade, a restore) adds rows by the hundred thousand: the planner's
    // estimates of the table follow at once rather than at autovacuum's next visit.
    if (n >= CATCH_UP_DAYS) await analyzePeriods(db);
    // Today so far, once every whole day is: its leads created before the lag, moves included.
    if (rollsTodayUp(rolled, lastWhole)) await rollUpToday(db, zone, shiftDay(lastWhole, 1), lagSeconds);
  }

  const tick = () => {
    running = runOnce()
      .catch((err) => logger.warn({ err: errorForLog(err) }, "could not roll up lead stats"))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };

  return {
    /** One run now (operations, tests). */
    runOnce,
    start(): void {
      if (!stopped) return;
      stopped = false;
      timer = setTimeout(tick, 5000);
      timer.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
