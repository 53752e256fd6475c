/**
 * Statement months in the broker's calendar (BUSINESS_TIMEZONE): where a month starts and ends,
 * which is current, and when one is closed. Pure: the clock is an argument.
 */
import { DateTime } from "luxon";

/**
 * A month is closed this long after it ends. Every post is one short statement (a query times
 * out after DATABASE_TIMEOUT_MS + 1 s, at most 61 s), so a transaction dated in the month has
 * committed by then: from `closes_at` on, nothing can change a statement.
 */
export const CLOSE_AFTER_MS = 5 * 60_000;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

export interface Period {
  readonly month: string;
  readonly start: Date;
  readonly end: Date;
  readonly closesAt: Date;
}

export function isMonth(text: string): boolean {
  return MONTH.test(text);
}

/** The month `YYYY-MM` as an interval of time in `zone`. */
export function periodOf(month: string, zone: string): Period {
  const m = MONTH.exec(month);
  if (!m) throw new Error(`not a month: ${month}`);
  const start = DateTime.fromObject({ year: Number(m[1]), month: Number(m[2]), day: 1 }, { zone });
  const end = start.plus({ months: 1 });
  return {
    month,
    start: start.toJSDate(),
    end: end.toJSDate(),
    closesAt: new Date(end.toMillis() + CLOSE_AFTER_MS),
  };
}

/** The month `at` falls in, in `zone`. */
export function monthOf(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toFormat("yyyy-MM");
}

/** The month before (`-1`) or after (`1`) `month`. */
export function shiftMonth(month: string, by: number): string {
  const [y, m] = month.split("-").map(Number) as [number, number];
  const index = y * 12 + (m - 1) + by;
  return `${String(Math.floor(index / 12)).padStart(4, "0")}-${String((index % 12) + 1).padStart(2, "0")}`;
}

export function statusAt(period: Period, now: Date): "open" | "closed" {
  return now.getTime() >= period.closesAt.getTime() ? "closed" : "open";
}

/** The last `days` calendar days in `zone` up to the one `now` falls in (today included). */
export interface DayWindow {
  /** Each day, oldest first, `YYYY-MM-DD`. */
  readonly days: readonly string[];
  /** The first day's start. */
  readonly start: Date;
  /** The end of today (the next day's start). */
  readonly end: Date;
}

export function dayWindow(now: Date, zone: string, days: number): DayWindow {
  const today = DateTime.fromJSDate(now, { zone }).startOf("day");
  const first = today.minus({ days: days - 1 });
  return {
    days: Array.from({ length: days }, (_, i) => first.plus({ days: i }).toISODate() as string),
    start: first.toJSDate(),
    end: today.plus({ days: 1 }).toJSDate(),
  };
}
