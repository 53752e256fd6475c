/**
 * How long tests wait, in one place. A wait is a ceiling on polling for readiness, never a sleep
 * that decides the outcome: a fast machine passes at once, a slow one (a loaded 2-core machine
 * started a PGlite app in 49 s and a child service in over 30 s) waits longer, and only something
 * that is really stuck runs into the ceiling, which then says what was still pending.
 */
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { DEFAULT_BUSINESS_TIMEZONE } from "../../src/intake/business-time.ts";

/** The longest a test waits for one start: a child service answering, Prism listening, an app, a browser. */
export const START_MS = 120_000;

/*
 * A test or hook that starts things (the service in or out of process, Prism, a private Postgres,
 * a browser) has its own timeout: vitest's usual 30 s for its own work plus START_MS per start,
 * so a start that hangs fails on its own ceiling, with its message, before the test's timeout:
 * 150_000 for one start, 270_000 for two, 390_000 for three. They are written as number literals
 * at each test (Biome keeps `it("…", async () => {…}, 150_000)` as it is only with a literal there).
 */

/** The last `lines` lines of a process's output, for a message about what it was doing. */
export function tail(text: string, lines = 30): string {
  const all = text.trimEnd().split("\n");
  return (all.length > lines ? [`… (${all.length - lines} earlier lines)`, ...all.slice(-lines)] : all).join("\n");
}

/**
 * How busy a process and the machine are, for a message about a start that gave up: the CPU time
 * the process has had (a start that had little of it was starved, not stuck) and the load average.
 */
export function busy(pid: number | undefined): string {
  const load = `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} on ${availableParallelism()} cores`;
  try {
    // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second).
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    const ticks = Number(fields[11]) + Number(fields[12]);
    return `it had ${(ticks / 100).toFixed(1)} s of CPU; ${load}`;
  } catch {
    return load;
  }
}

/** Thrown by a check that knows waiting longer cannot help (the process exited): pollUntil stops at once. */
export class StopWaiting extends Error {}

/**
 * Polls `check` every `intervalMs` until it returns true, for at most `timeoutMs`. On giving up
 * it throws naming `what`, the last answer or error `check` gave (what it returns as `seen`), and
 * whatever `pending()` adds (a process's output, say). A StopWaiting error ends it at once.
 */
export async function pollUntil(
  what: string,
  check: () => Promise<boolean | { ok: boolean; seen: string }> | boolean | { ok: boolean; seen: string },
  options: { timeoutMs?: number; intervalMs?: number; pending?: () => string } = {},
): Promise<void> {
  const { timeoutMs = START_MS, intervalMs = 100, pending } = options;
  const started = Date.now();
  let seen = "nothing yet";
  for (;;) {
    try {
      const answer = await check();
      if (answer === true || (typeof answer === "object" && answer.ok)) return;
      if (typeof answer === "object") seen = answer.seen;
    } catch (err) {
      if (err instanceof StopWaiting) {
        const extra = pending?.();
        throw new Error(`stopped waiting for ${what}: ${err.message}` + (extra ? `\n${extra}` : ""));
      }
      seen = describeError(err);
    }
    if (Date.now() - started >= timeoutMs) {
      const extra = pending?.();
      throw new Error(
        `gave up after ${Math.round((Date.now() - started) / 1000)} s waiting for ${what}; last seen: ${seen}` +
          (extra ? `\n${extra}` : ""),
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** An error's message with its cause's code (fetch's "fetch failed" hides ECONNREFUSED there). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${err.message} (${cause.code ?? cause.message})` : err.message;
}

/** The calendar day (YYYY-MM-DD) in `zone` at `at`. */
export function dayIn(zone: string, at: Date): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    at,
  );
}

/**
 * For a test that counts per day (stats, "this week", a day's cap) on the real clock, which the
 * database's now() shares: when a day ended less than 60 s ago or ends within 90 s in any of
 * `zones` (by default UTC, the rate limits' days, and the default business time zone, the stats'
 * days), waits until both are clear, so the test's requests and reads fall in one day even with a
 * minuteClock (up to 55 s behind the real clock, or 65 s ahead after nextMinute()). The test's
 * timeout allows for the wait (DAY_END_MS more).
 */
export async function clearOfDayEnd(zones: readonly string[] = ["UTC", DEFAULT_BUSINESS_TIMEZONE]): Promise<void> {
  const near = () =>
    zones.some((z) => dayIn(z, new Date(Date.now() - 60_000)) !== dayIn(z, new Date(Date.now() + 90_000)));
  while (near()) await new Promise((r) => setTimeout(r, 1000));
}

/** The longest clearOfDayEnd waits: a test that calls it has 150 s more than it would (180_000). */
export const DAY_END_MS = 150_000;
