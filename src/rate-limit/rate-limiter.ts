/**
 * Per-provider rate limits (spec §8): a fixed per-minute and per-day window, aligned to the UTC
 * minute and the UTC day. Bottleneck holds the counters: one limiter per (key, window), its
 * reservoir used as the count of admitted requests, changed with `incrementReservoir` — atomic in
 * process and, with REDIS_URL, a Lua script on Redis shared by every instance. A request takes a
 * token from each window; a rejected one gives its tokens back, so it consumes no quota, and it
 * is never queued. Because the limit is compared at admission time, a changed limit applies at
 * once. The window index is part of the limiter key, so a new window starts from zero whatever
 * the clock of the last reset, and an idle provider's day count lives until the day ends.
 *
 * If Redis cannot answer, requests are admitted (fail open: a lost lead costs more than a missed
 * limit); the condition is logged once a minute, counted, and shown by /readyz.
 */
import Bottleneck from "bottleneck";
import { Redis } from "ioredis";
import type { Logger } from "../logger.ts";

export const WINDOWS = { minute: 60_000, day: 86_400_000 } as const;
export type WindowName = keyof typeof WINDOWS;

export interface Limits {
  readonly perMinute: number;
  readonly perDay: number;
}

/** Where a key stands in its windows after an admission (edges render it as RateLimit headers). */
export interface Quota {
  readonly limits: Limits;
  /** The window closest to exhaustion (the exhausted one when refused); absent when failing open. */
  readonly window?: WindowName;
  /** Requests left in `window`. */
  readonly remaining?: number;
  /** Whole seconds until `window` resets. */
  readonly resetSeconds?: number;
}

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

export async function createRateLimiter(options: RateLimiterOptions) {
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.redisTimeoutMs ?? 250;
  let redis: Redis | undefined;
  let connection: Bottleneck.IORedisConnection | undefined;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, {
      enableOfflineQueue: false, // fail at once while disconnected instead of piling up commands
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.on("error", () => {}); // reported through health below, not as crashes
    connection = new Bottleneck.IORedisConnection({ client: redis });
    connection.on("error", () => {});
    await Promise.race([connection.ready, new Promise((resolve) => setTimeout(resolve, 3000))]);
  }

  const groups = Object.fromEntries(
    (Object.keys(WINDOWS) as WindowName[]).map((w) => [
      w,
      new Bottleneck.Group({
        id: `${options.namespace ?? "lead-provider"}-rate-${w}`,
        reservoir: 0,
        // Keep a window's counter at least as long as the window: an idle provider's day
        // count must not expire mid-day and reset.
        timeout: WINDOWS[w] + 60 * 60_000,
        ...(connection ? { datastore: "ioredis" as const, connection, clearDatastore: false } : {}),
      }),
    ]),
  ) as Record<WindowName, Bottleneck.Group>;

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

  function withTimeout<T>(p: Promise<T>): Promise<T> {
    if (!redis) return p;
    return Promise.race([
      p,
      new Promise<T>((_, reject) => setTimeout(() => reject(new Error("rate limiter store timed out")), timeoutMs)),
    ]);
  }

  /** Adds `delta` to the window's counter of `key`; returns the new count. */
  async function add(window: WindowName, key: string, index: number, delta: number): Promise<number> {
    const id = `${key}:${index}`;
    try {
      const count = await withTimeout(groups[window].key(id).incrementReservoir(delta));
      return Number(count);
    } catch (err) {
      groups[window].deleteKey(id); // a limiter whose store failed is rebuilt on next use
      throw err;
    }
  }

  function secondsLeft(window: WindowName, t: number): number {
    const size = WINDOWS[window];
    return Math.max(1, Math.ceil(((Math.floor(t / size) + 1) * size - t) / 1000));
  }

  return {
    /** Takes one request from each window of `key`, or refuses without taking anything. */
    async admit(key: string, limits: Limits): Promise<Decision> {
      const t = now().getTime();
      const limitOf = { minute: limits.perMinute, day: limits.perDay };
      const open: Decision = { admitted: true, quota: { limits } };
      if (!healthy()) {
        failOpen(new Error(`redis is ${redis?.status}`));
        return open;
      }
      const windows = ["minute", "day"] as const;
      let counts: number[];
      try {
        // Both windows at once: one round trip (or event-loop turn) instead of two.
        counts = await Promise.all(windows.map((w) => add(w, key, Math.floor(t / WINDOWS[w]), 1)));
      } catch (err) {
        failOpen(err);
        return open;
      }
      const exhausted = windows.find((w, i) => (counts[i] ?? 0) > limitOf[w]);
      if (exhausted) {
        // Give both tokens back: a refused request consumes no quota.
        await Promise.all(windows.map((w) => add(w, key, Math.floor(t / WINDOWS[w]), -1))).catch(failOpen);
        const quota = { limits, window: exhausted, remaining: 0, resetSeconds: secondsLeft(exhausted, t) };
        return { admitted: false, quota };
      }
      const remaining = { minute: limitOf.minute - (counts[0] ?? 0), day: limitOf.day - (counts[1] ?? 0) };
      failingSince = undefined;
      const closest: WindowName = remaining.day < remaining.minute ? "day" : "minute";
      const quota = { limits, window: closest, remaining: remaining[closest], resetSeconds: secondsLeft(closest, t) };
      return { admitted: true, quota };
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
          const id = `${key}:${Math.floor(t / WINDOWS[w])}`;
          return Number(await withTimeout(groups[w].key(id).currentReservoir()));
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

    /** Counts one failed authentication from `key` (a client address) in the minute window. */
    async recordFailure(key: string): Promise<void> {
      if (!healthy()) return;
      try {
        await add("minute", `fail:${key}`, Math.floor(now().getTime() / WINDOWS.minute), 1);
      } catch (err) {
        failOpen(err);
      }
    },

    /** Seconds to wait when `key` has used up `limit` failures this minute, else 0. */
    async failureBlock(key: string, limit: number): Promise<number> {
      if (!healthy()) return 0;
      const t = now().getTime();
      try {
        const id = `fail:${key}:${Math.floor(t / WINDOWS.minute)}`;
        const count = Number(await withTimeout(groups.minute.key(id).currentReservoir()));
        return count >= limit ? secondsLeft("minute", t) : 0;
      } catch (err) {
        failOpen(err);
        return 0;
      }
    },

    /** For /readyz and metrics. */
    status(): { store: "memory" | "redis"; ok: boolean; detail?: string } {
      if (!redis) return { store: "memory", ok: true };
      const ok = healthy() && failingSince === undefined;
      return ok ? { store: "redis", ok } : { store: "redis", ok, detail: lastError || `redis is ${redis.status}` };
    },

    async close(): Promise<void> {
      if (connection) await connection.disconnect(false).catch(() => {});
      redis?.disconnect();
    },
  };
}
