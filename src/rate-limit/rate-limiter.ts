/**
 * Per-provider rate limits (spec §8): a fixed per-minute and per-day window, aligned to the UTC
 * minute and the UTC day. A request takes one from each window's counter or, if either would go
 * past its limit, takes nothing (a refused request consumes no quota) and is never queued.
 * Because the limit is compared at admission time, a changed limit applies at once. The window
 * index is part of the counter's key, so a new window starts from zero whatever the clock of the
 * last reset, and an idle provider's day count lives until the day ends.
 *
 * Two stores, one rule:
 * - in process (no REDIS_URL): a Map per window, read and written synchronously. Admission is a
 *   few map operations: no promise, timer or library machinery on the request path (it used to be
 *   Bottleneck's reservoirs, whose async bookkeeping cost more than the rest of the check).
 * - Redis (REDIS_URL, shared by every instance and worker): one Lua script per admission that
 *   checks and takes both windows atomically, one round trip.
 *
 * Attempts (failed authentications per address, portal sign-ins per account and address, invite
 * attempts) are per-minute counters taken the same way: checked and taken in one step, all of a
 * request's counters or none, so simultaneous attempts cannot all pass a check made before any
 * of them was counted.
 *
 * If Redis cannot answer, requests are admitted (fail open: a lost lead costs more than a missed
 * limit); the condition is logged once a minute, counted, and shown by /readyz.
 */
import type { Redis } from "ioredis";
import { type Limits, type Quota, WINDOWS, type WindowName } from "../limits.ts";
import type { Logger } from "../logger.ts";

export { type Limits, type Quota, WINDOWS, type WindowName };

export interface Decision {
  readonly admitted: boolean;
  readonly quota: Quota;
}

export interface RateLimiterOptions {
  readonly redisUrl?: string | undefined;
  readonly logger: Logger;
  readonly now?: () => Date;
  /** Called each time a request is admitted because the shared store could not answer. */
  readonly onFailOpen?: () => void;
  /** Milliseconds to wait for Redis before failing open. */
  readonly redisTimeoutMs?: number;
  /** Names this deployment's counters in a shared Redis (instances of one deployment share it). */
  readonly namespace?: string;
}

export type RateLimiter = Awaited<ReturnType<typeof createRateLimiter>>;

/** A per-minute attempt counter (failed authentications, sign-ins, invite attempts) and its limit. */
export interface AttemptCounter {
  readonly key: string;
  readonly limit: number;
}

/** An attempt taken (which a success may give back), or refused with the counter at its limit. */
export type Attempt =
  | { readonly admitted: true; giveBack(): Promise<void> }
  | { readonly admitted: false; readonly key: string; readonly retryAfterSeconds: number };

/** Atomically: both windows' counts after taking one from each, or refused and nothing taken. */
const ADMIT_SCRIPT = `
local minute = redis.call('INCR', KEYS[1])
if minute == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
local day = redis.call('INCR', KEYS[2])
if day == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
if minute > tonumber(ARGV[1]) or day > tonumber(ARGV[2]) then
  redis.call('DECR', KEYS[1])
  redis.call('DECR', KEYS[2])
  return {minute - 1, day - 1, 0}
end
return {minute, day, 1}`;

/**
 * Atomically: one from each counter (KEYS) when every one is under its limit (ARGV[i]), else
 * nothing, and the 1-based index of the first counter at its limit; ARGV[#KEYS + 1] is the expiry.
 */
const TAKE_SCRIPT = `
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i]) then return i end
end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, ARGV[#KEYS + 1]) end
end
return 0`;

/** Gives one back to each counter (KEYS) that still holds one. */
const GIVE_BACK_SCRIPT = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0`;

interface AdmitCounts {
  readonly minute: number;
  readonly day: number;
  readonly admitted: boolean;
}

/** The windows of attempt counters: a provider's windows, and the clock hour (the form's per-address limit). */
const COUNTER_WINDOWS = { ...WINDOWS, hour: 3_600_000 } as const;
/** An attempt counter's window. */
export type AttemptWindow = "minute" | "hour";
type CounterWindow = keyof typeof COUNTER_WINDOWS;

/** Where the counters live. Memory answers synchronously; Redis with a promise. */
interface CounterStore {
  admit(key: string, t: number, limits: Limits): AdmitCounts | Promise<AdmitCounts>;
  /** Takes one from each of the window's counters `ids` (all or none): 0, or the 1-based index of the one at its limit. */
  take(ids: readonly string[], limits: readonly number[], t: number, window: AttemptWindow): number | Promise<number>;
  /** Gives one back to each of the window's counters `ids` of the window of `t`. */
  giveBack(ids: readonly string[], t: number, window: AttemptWindow): unknown;
  read(window: WindowName, id: string, t: number): number | Promise<number>;
}

const indexOf = (window: CounterWindow, t: number) => Math.floor(t / COUNTER_WINDOWS[window]);

/** Counters in this process: per window, key → {window index, count}; an old index reads as 0. */
function memoryStore(): CounterStore {
  const maps: Record<CounterWindow, Map<string, { index: number; count: number }>> = {
    minute: new Map(),
    hour: new Map(),
    day: new Map(),
  };
  const count = (window: CounterWindow, id: string, index: number) => {
    const entry = maps[window].get(id);
    return entry !== undefined && entry.index === index ? entry.count : 0;
  };
  const set = (window: CounterWindow, id: string, index: number, value: number) => {
    const map = maps[window];
    const entry = map.get(id);
    if (entry !== undefined) {
      entry.index = index;
      entry.count = value;
      return;
    }
    // Keys are providers and client addresses; many addresses (a scan) must not grow this forever.
    if (map.size >= 100_000) for (const [k, e] of map) if (e.index !== index) map.delete(k);
    map.set(id, { index, count: value });
  };
  return {
    admit(key, t, limits) {
      const mi = indexOf("minute", t);
      const di = indexOf("day", t);
      const minute = count("minute", key, mi) + 1;
      const day = count("day", key, di) + 1;
      if (minute > limits.perMinute || day > limits.perDay)
        return { minute: minute - 1, day: day - 1, admitted: false };
      set("minute", key, mi, minute);
      set("day", key, di, day);
      return { minute, day, admitted: true };
    },
    take(ids, limits, t, window) {
      const i = indexOf(window, t);
      // Checked and taken with nothing in between: no other request runs until this returns.
      const full = ids.findIndex((id, k) => count(window, id, i) >= (limits[k] ?? 0));
      if (full >= 0) return full + 1;
      for (const id of ids) set(window, id, i, count(window, id, i) + 1);
      return 0;
    },
    giveBack(ids, t, window) {
      const i = indexOf(window, t);
      for (const id of ids) {
        const n = count(window, id, i);
        if (n > 0) set(window, id, i, n - 1);
      }
    },
    read: (window, id, t) => count(window, id, indexOf(window, t)),
  };
}

/** The scripts as ioredis commands: sent by SHA (EVALSHA), the text only when Redis lacks it. */
interface ScriptedRedis {
  lpAdmit(...args: (string | number)[]): Promise<[number, number, number]>;
  lpTake(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
  lpGiveBack(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
}

function redisStore(client: Redis, namespace: string, timeoutMs: number): CounterStore {
  client.defineCommand("lpAdmit", { numberOfKeys: 2, lua: ADMIT_SCRIPT });
  // The number of keys is the call's first argument: one script takes any number of counters.
  client.defineCommand("lpTake", { lua: TAKE_SCRIPT });
  client.defineCommand("lpGiveBack", { lua: GIVE_BACK_SCRIPT });
  const redis = client as Redis & ScriptedRedis;
  const name = (window: CounterWindow, id: string, t: number) =>
    `${namespace}:rate:${window}:${id}:${indexOf(window, t)}`;
  // Kept a little longer than the window, so a clock a little behind still finds its counter.
  const ttl = (window: CounterWindow) => COUNTER_WINDOWS[window] + 60 * 60_000;
  const timed = <T>(p: Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      p,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error("rate limiter store timed out")), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  };
  return {
    async admit(key, t, limits) {
      const [minute, day, admitted] = await timed(
        redis.lpAdmit(
          name("minute", key, t),
          name("day", key, t),
          limits.perMinute,
          limits.perDay,
          ttl("minute"),
          ttl("day"),
        ),
      );
      return { minute, day, admitted: admitted === 1 };
    },
    take: (ids, limits, t, window) =>
      timed(redis.lpTake(ids.length, ...ids.map((id) => name(window, id, t)), ...limits, ttl(window))),
    giveBack: (ids, t, window) => timed(redis.lpGiveBack(ids.length, ...ids.map((id) => name(window, id, t)))),
    read: async (window, id, t) => Number((await timed(redis.get(name(window, id, t)))) ?? 0),
  };
}

export async function createRateLimiter(options: RateLimiterOptions) {
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.redisTimeoutMs ?? 250;
  let redis: Redis | undefined;
  if (options.redisUrl) {
    // Loaded only when configured: a process without Redis does not carry the client (the resident-size budget).
    const { Redis } = await import("ioredis");
    redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false, // fail at once while disconnected instead of piling up commands
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.on("error", () => {}); // reported through health below, not as crashes
    const connected = redis;
    await Promise.race([
      new Promise((resolve) => connected.once("ready", resolve)),
      new Promise((resolve) => setTimeout(resolve, 3000).unref()),
    ]);
  }
  const store = redis ? redisStore(redis, options.namespace ?? "lead-provider", timeoutMs) : memoryStore();

  let failingSince: number | undefined;
  let lastFailureLog = 0;
  let lastError = "";
  const healthy = () => !redis || redis.status === "ready";

  function failOpen(err: unknown): void {
    const t = Date.now();
    lastError = err instanceof Error ? err.message : String(err);
    failingSince ??= t;
    options.onFailOpen?.();
    if (t - lastFailureLog > 60_000) {
      lastFailureLog = t;
      options.logger.warn({ err: lastError }, "rate limiter store unreachable; admitting requests without limits");
    }
  }

  function secondsLeft(window: CounterWindow, t: number): number {
    const size = COUNTER_WINDOWS[window];
    return Math.max(1, Math.ceil(((Math.floor(t / size) + 1) * size - t) / 1000));
  }

  function decide(counts: AdmitCounts, limits: Limits, t: number): Decision {
    if (!counts.admitted) {
      const exhausted: WindowName = counts.minute + 1 > limits.perMinute ? "minute" : "day";
      return {
        admitted: false,
        quota: { limits, window: exhausted, remaining: 0, resetSeconds: secondsLeft(exhausted, t) },
      };
    }
    failingSince = undefined;
    const remaining = { minute: limits.perMinute - counts.minute, day: limits.perDay - counts.day };
    const closest: WindowName = remaining.day < remaining.minute ? "day" : "minute";
    return {
      admitted: true,
      quota: { limits, window: closest, remaining: remaining[closest], resetSeconds: secondsLeft(closest, t) },
    };
  }

  return {
    /**
     * Takes one request from each window of `key`, or refuses without taking anything. In
     * process the decision is returned as it is (no promise); with Redis, as a promise.
     */
    admit(key: string, limits: Limits): Decision | Promise<Decision> {
      const t = now().getTime();
      if (!healthy()) {
        failOpen(new Error(`redis is ${redis?.status}`));
        return { admitted: true, quota: { limits } };
      }
      const counts = store.admit(key, t, limits);
      if (!(counts instanceof Promise)) return decide(counts, limits, t);
      return counts.then(
        (c) => decide(c, limits, t),
        (err: unknown): Decision => {
          failOpen(err);
          return { admitted: true, quota: { limits } };
        },
      );
    },

    /**
     * How many requests `key` has made in the current minute and day, and the seconds until each
     * resets; nothing is taken. Undefined counts when the shared store cannot answer.
     */
    async usage(key: string): Promise<Record<WindowName, { used: number | undefined; resetSeconds: number }>> {
      const t = now().getTime();
      const read = async (w: WindowName) => {
        if (!healthy()) return undefined;
        try {
          return await store.read(w, key, t);
        } catch {
          return undefined;
        }
      };
      const [minute, day] = await Promise.all([read("minute"), read("day")]);
      return {
        minute: { used: minute, resetSeconds: secondsLeft("minute", t) },
        day: { used: day, resetSeconds: secondsLeft("day", t) },
      };
    },

    /**
     * Takes one attempt from each counter's current minute (or clock hour), all or none in one atomic step (in
     * process, or one Redis script), or refuses without taking anything when any counter has
     * reached its limit: so of any number of simultaneous attempts, at most the limit are
     * admitted, on one instance or many. Taken before the work it guards (a password check),
     * never read first and counted after. An admitted attempt may be given back (a success).
     */
    async takeAttempt(counters: readonly AttemptCounter[], window: AttemptWindow = "minute"): Promise<Attempt> {
      const t = now().getTime();
      const ids = counters.map((c) => `fail:${c.key}`);
      const admitted: Attempt = {
        admitted: true,
        giveBack: async () => {
          if (!healthy()) return;
          try {
            await store.giveBack(ids, t, window);
          } catch (err) {
            failOpen(err);
          }
        },
      };
      if (!healthy()) {
        failOpen(new Error(`redis is ${redis?.status}`));
        return admitted;
      }
      let full: number;
      try {
        full = await store.take(
          ids,
          counters.map((c) => c.limit),
          t,
          window,
        );
      } catch (err) {
        failOpen(err);
        return admitted;
      }
      failingSince = undefined;
      if (full === 0) return admitted;
      return { admitted: false, key: counters[full - 1]?.key ?? "", retryAfterSeconds: secondsLeft(window, t) };
    },

    /** For /readyz and metrics. */
    status(): { store: "memory" | "redis"; ok: boolean; detail?: string } {
      if (!redis) return { store: "memory", ok: true };
      const ok = healthy() && failingSince === undefined;
      return ok ? { store: "redis", ok } : { store: "redis", ok, detail: lastError || `redis is ${redis.status}` };
    },

    async close(): Promise<void> {
      redis?.disconnect();
    },
  };
}
