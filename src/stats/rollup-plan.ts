/**
 * The stats rollup's decisions, apart from its SQL (stats.repository.ts) and its timer
 * (stats.rollup.ts): which business days a run rolls up whole, which moved days it rolls up
 * again, and whether it then rolls up today so far.
 */
import { businessToday } from "../intake/business-time.ts";

/** At most this many whole days per run (the first run catches up a month at a time). */
export const MAX_DAYS_PER_RUN = 31;

/** The calendar day `days` after `day` (YYYY-MM-DD; negative: before). */
export function shiftDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The last business day that is whole at `now`: yesterday in `zone`, once `lagSeconds` have
 * passed midnight (so a lead inserted just before midnight whose transaction commits after it is
 * in that day's roll-up).
 */
export function lastWholeDay(now: Date, zone: string, lagSeconds: number): string {
  return shiftDay(businessToday(new Date(now.getTime() - lagSeconds * 1000), zone), -1);
}

/** What the rollup holds so far: its watermark, and the first business day any lead was created on. */
export interface RollupWatermark {
  readonly rolledThrough: string | null;
  readonly firstDay: string | null;
}

/**
 * The whole days this run rolls up, in order: from the day after the watermark (on the first run,
 * the first lead's day, or only `lastWhole` when there are no leads before it) through
 * `lastWhole`, at most `max` of them.
 */
export function daysToRollUp(state: RollupWatermark, lastWhole: string, max = MAX_DAYS_PER_RUN): string[] {
  let day =
    state.rolledThrough !== null
      ? shiftDay(state.rolledThrough, 1)
      : state.firstDay !== null && state.firstDay < lastWhole
        ? state.firstDay
        : lastWhole;
  const days: string[] = [];
  while (day <= lastWhole && days.length < max) {
    days.push(day);
    day = shiftDay(day, 1);
  }
  return days;
}

/** Of the days whose leads moved, those the rollup holds whole (through `rolled`): rolled up again. */
export function movedDaysToRollAgain<K extends { readonly day: string }>(moved: readonly K[], rolled: string): K[] {
  return moved.filter((k) => k.day <= rolled);
}

/** Today so far is rolled up once every whole day is: the watermark reached the last whole day. */
export function rollsTodayUp(rolled: string | null, lastWhole: string): boolean {
  return rolled === lastWhole;
}
