/**
 * Keeps lead_stats_daily: each past business day's leads per provider, mode and sub_id (counts,
 * and histograms of the hours to QUOTE and to ORDER), so stats over long ranges read a few rows
 * per day instead of every lead. Stats read the rollup up to the day it has reached and the leads
 * themselves after it, bucketing their hours the same way, so they answer the same whether or not
 * the job has run; the job only makes them fast.
 *
 * Every `intervalMs` (and 5 s after start): roll up whole days from the day after the watermark
 * to yesterday (at most 31 per run, the first run starting at the first lead's day), then roll up
 * again the past days whose leads moved since the last run (from lead_state_history; a move is
 * picked up once it is `lagSeconds` old), then today's leads created more than `lagSeconds` ago
 * (replacing the previous run's; stats read the leads created since from the leads). One
 * instance works at a time (an advisory lock). Which days a run rolls up: rollup-plan.ts.
 * Test data deleted by the sandbox's retention stays counted in its day (see docs/decisions/0020-stats.md).
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { daysToRollUp, lastWholeDay, movedDaysToRollAgain, rollsTodayUp, shiftDay } from "./rollup-plan.ts";
import { movedDays, rollUpAgain, rollUpDay, rollUpToday, rollupState } from "./stats.repository.ts";

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
