/**
 * The broker's calendar in BUSINESS_TIMEZONE (default America/New_York), with Luxon: what day it
 * is, where the cap windows start and reset (calendar day, ISO week from Monday, calendar month)
 * and when the intake schedule opens and closes, across weekends and daylight-saving changes.
 */
import { DateTime } from "luxon";
import { type CapWindow, minutesOf, type Schedule, WEEKDAYS } from "./intake-rules.ts";

export { DEFAULT_BUSINESS_TIMEZONE, isKnownTimeZone } from "../time-zone.ts";

function local(now: Date, zone: string): DateTime {
  return DateTime.fromJSDate(now, { zone });
}

// Every lead and every request-log entry asks what day it is. An Intl formatter per
// zone answers in a few microseconds (a Luxon DateTime in a zone costs tens); the last answer per
// zone is kept for its minute of UTC: since 1972 every zone's offset is a whole number of minutes
// and its clocks change on a whole minute (some at 00:01 local time until 2011, so not always on
// a quarter hour), so its date can only change on a minute.
// (Luxon's start of a day is not used for this: where clocks change at midnight, or go back from
// midnight to the day before, the date is not one interval of time.)
const MINUTE_MS = 60_000;
const DAY_FORMATS = new Map<string, Intl.DateTimeFormat>();
const LAST_DAY = new Map<string, { readonly minute: number; readonly day: string }>();

/** Today's date (YYYY-MM-DD) in `zone`. */
export function businessToday(now: Date, zone: string): string {
  const minute = Math.floor(now.getTime() / MINUTE_MS);
  const last = LAST_DAY.get(zone);
  if (last !== undefined && last.minute === minute) return last.day;
  let format = DAY_FORMATS.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" });
    DAY_FORMATS.set(zone, format);
  }
  const day = format.format(now);
  LAST_DAY.set(zone, { minute, day });
  return day;
}

/** Whole days from today (in `zone`) to `date` (YYYY-MM-DD); negative for the past. */
export function daysUntil(date: string, now: Date, zone: string): number {
  return Math.round((Date.parse(date) - Date.parse(businessToday(now, zone))) / 86_400_000);
}

const UNIT = { day: "day", week: "week", month: "month" } as const;

/** Answers of the last minute, by zone, window and minute (windows change on whole minutes). */
const WINDOWS = new Map<string, { start: Date; resetsAt: Date }>();

/** The window `now` falls in: its start and the instant it resets. */
export function capWindow(window: CapWindow, now: Date, zone: string): { start: Date; resetsAt: Date } {
  const key = `${zone}|${window}|${Math.floor(now.getTime() / 60_000)}`;
  const known = WINDOWS.get(key);
  if (known) return known;
  // Luxon's weeks are ISO weeks: they start on Monday.
  const start = local(now, zone).startOf(UNIT[window]);
  const found = { start: start.toJSDate(), resetsAt: start.plus({ [`${window}s`]: 1 }).toJSDate() };
  if (WINDOWS.size > 256) WINDOWS.clear();
  WINDOWS.set(key, found);
  return found;
}

export interface ScheduleState {
  readonly open: boolean;
  /** While closed: the next opening (null when the schedule never opens). */
  readonly opensAt: Date | null;
  /** While open: when this opening ends (null when always open). */
  readonly closesAt: Date | null;
}

const ALWAYS_OPEN: ScheduleState = { open: true, opensAt: null, closesAt: null };

/**
 * Whether intake is open at `now` under `schedule` (null: always), and the next change. Openings
 * that meet across midnight (mon 20:00–24:00, tue 00:00–06:00) count as one.
 */
export function scheduleState(schedule: Schedule | null, now: Date, zone: string): ScheduleState {
  if (schedule === null) return ALWAYS_OPEN;
  // Openings start and end on whole minutes: one answer per schedule (the cached rules' own
  // object) and minute serves every lead of that minute.
  const minute = Math.floor(now.getTime() / 60_000);
  const known = SCHEDULES.get(schedule);
  if (known?.minute === minute && known.zone === zone) return known.state;
  const state = computeScheduleState(schedule, now, zone);
  SCHEDULES.set(schedule, { minute, zone, state });
  return state;
}

const SCHEDULES = new WeakMap<Schedule, { minute: number; zone: string; state: ScheduleState }>();

function computeScheduleState(schedule: Schedule, now: Date, zone: string): ScheduleState {
  const here = local(now, zone);
  // The openings of the next 8 days as instants, in order (8: a week, and the day it began).
  const spans: Array<{ from: DateTime; to: DateTime }> = [];
  for (let d = -1; d <= 8; d++) {
    const day = here.startOf("day").plus({ days: d });
    const name = WEEKDAYS[day.weekday - 1];
    for (const o of (name && schedule[name]) ?? []) {
      const from = atTime(day, o.open);
      const to = atTime(day, o.close);
      const last = spans.at(-1);
      if (last && +last.to >= +from) last.to = to > last.to ? to : last.to;
      else spans.push({ from, to });
    }
  }
  const t = +here;
  const current = spans.find((s) => +s.from <= t && t < +s.to);
  // An opening that runs to the end of the days looked at never closes within a week.
  const horizon = +here.startOf("day").plus({ days: 9 });
  if (current) return { open: true, opensAt: null, closesAt: +current.to >= horizon ? null : current.to.toJSDate() };
  const next = spans.find((s) => +s.from > t);
  return { open: false, opensAt: next ? next.from.toJSDate() : null, closesAt: null };
}

/** `HH:MM` on `day`, as a wall-clock time (so 08:00 stays 08:00 on a daylight-saving day). */
function atTime(day: DateTime, time: string): DateTime {
  const m = minutesOf(time);
  if (m === 24 * 60) return day.plus({ days: 1 }).startOf("day");
  return day.set({ hour: Math.floor(m / 60), minute: m % 60 });
}

/** Whole seconds from `now` to `at`, at least 1. */
export function secondsUntil(at: Date, now: Date): number {
  return Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
}
