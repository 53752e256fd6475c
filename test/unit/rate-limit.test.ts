/**
 * The rate limiter and its admission rules on their own (src/rate-limit/), with an injected clock,
 * in process and, when REDIS_URL is set, against real Redis. `make mutation` runs it.
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DomainError } from "../../src/errors.ts";
import { createLogger } from "../../src/logger.ts";
import { createAdmission } from "../../src/rate-limit/admission.ts";
import { createRateLimiter, type RateLimiter } from "../../src/rate-limit/rate-limiter.ts";
import { startProxy } from "../helpers/proxy.ts";

/** A proxy in front of the test Redis that the test can make hang or take away. */
function redisProxy() {
  const target = new URL(process.env.REDIS_URL as string);
  return startProxy({ host: target.hostname, port: Number(target.port || 6379) });
}

const STORES = process.env.REDIS_URL ? ["memory", "redis"] : ["memory"];
/** 2026-11-25 00:00:10 UTC: 50 s left in the minute, a whole day ahead. */
const START = Date.UTC(2026, 10, 25, 0, 0, 10);

/** The error `call` throws or rejects with (admission throws synchronously in process). */
const rejected = async (call: () => unknown): Promise<DomainError> => {
  const err = await Promise.resolve()
    .then(call)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
};

describe.each(STORES)("the rate limiter (%s)", (store) => {
  let t = START;
  let limiter: RateLimiter;
  const failOpens: number[] = [];
  beforeEach(async () => {
    limiter = await createRateLimiter({
      redisUrl: store === "redis" ? process.env.REDIS_URL : undefined,
      namespace: `unit-${randomBytes(4).toString("hex")}`,
      logger: createLogger("silent"),
      now: () => new Date(t),
      onFailOpen: () => failOpens.push(t),
    });
  });
  afterEach(() => limiter.close());
  const admit = async (key: string, perMinute: number, perDay: number) => limiter.admit(key, { perMinute, perDay });

  it("admits up to the minute limit, refuses the next without taking anything, and reports the closest window", async () => {
    t = START;
    const key = `a-${t}`;
    const first = await admit(key, 3, 100);
    expect(first).toEqual({
      admitted: true,
      quota: { limits: { perMinute: 3, perDay: 100 }, window: "minute", remaining: 2, resetSeconds: 50 },
    });
    expect((await admit(key, 3, 100)).quota.remaining).toBe(1);
    expect((await admit(key, 3, 100)).quota.remaining).toBe(0);
    const refused = await admit(key, 3, 100);
    expect(refused).toEqual({
      admitted: false,
      quota: { limits: { perMinute: 3, perDay: 100 }, window: "minute", remaining: 0, resetSeconds: 50 },
    });
    expect(await limiter.usage(key)).toEqual({
      minute: { used: 3, resetSeconds: 50 },
      day: { used: 3, resetSeconds: 86_390 },
    });
    // A new minute starts from zero; the day keeps counting.
    t = START + 50_000;
    const next = await admit(key, 3, 100);
    expect(next.quota).toMatchObject({ window: "minute", remaining: 2, resetSeconds: 60 });
    expect((await limiter.usage(key)).day.used).toBe(4);
  });

  it("refuses on the day window, names it, and then reports the day as the closest", async () => {
    t = START;
    const key = `d-${t}`;
    expect((await admit(key, 10, 2)).quota).toMatchObject({ window: "day", remaining: 1, resetSeconds: 86_390 });
    expect((await admit(key, 10, 2)).quota).toMatchObject({ window: "day", remaining: 0 });
    const refused = await admit(key, 10, 2);
    expect(refused.admitted).toBe(false);
    expect(refused.quota).toMatchObject({ window: "day", remaining: 0, resetSeconds: 86_390 });
    // The refused request took nothing from the minute either.
    expect((await limiter.usage(key)).minute.used).toBe(2);
    // A limit raised takes effect at once.
    expect((await admit(key, 10, 3)).admitted).toBe(true);
    // Refused by the day while the minute has room for exactly one more: still the day.
    const close = `c-${t}`;
    expect((await admit(close, 3, 2)).admitted).toBe(true);
    expect((await admit(close, 3, 2)).admitted).toBe(true);
    expect((await admit(close, 3, 2)).quota).toMatchObject({ window: "day", remaining: 0 });
    // Equal room in both windows reports the minute.
    const even = `e-${t}`;
    expect((await admit(even, 5, 5)).quota.window).toBe("minute");
    // The next day starts again.
    t = START + 86_400_000;
    expect((await admit(key, 10, 2)).admitted).toBe(true);
  });

  it("keeps each key apart", async () => {
    t = START;
    expect((await admit(`x-${t}`, 1, 10)).admitted).toBe(true);
    expect((await admit(`x-${t}`, 1, 10)).admitted).toBe(false);
    expect((await admit(`y-${t}`, 1, 10)).admitted).toBe(true);
  });

  const take = (...counters: { key: string; limit: number }[]) => limiter.takeAttempt(counters);

  it("takes attempts per key up to the limit, then refuses without taking, until the minute ends", async () => {
    t = START + 30_000;
    const ip = `203.0.113.${randomBytes(2).toString("hex")}`;
    expect((await take({ key: ip, limit: 2 })).admitted).toBe(true);
    expect((await take({ key: ip, limit: 2 })).admitted).toBe(true);
    expect(await take({ key: ip, limit: 2 })).toEqual({ admitted: false, key: ip, retryAfterSeconds: 20 });
    expect(await take({ key: ip, limit: 2 })).toEqual({ admitted: false, key: ip, retryAfterSeconds: 20 });
    // The refusals took nothing: a limit of 3 admits exactly one more.
    expect((await take({ key: ip, limit: 3 })).admitted).toBe(true);
    expect((await take({ key: ip, limit: 3 })).admitted).toBe(false);
    t = START + 50_000; // the next minute
    expect((await take({ key: ip, limit: 2 })).admitted).toBe(true);
  });

  it("takes all of a request's counters or none, and names the one at its limit", async () => {
    t = START;
    const [a, b] = [`a-${randomBytes(3).toString("hex")}`, `b-${randomBytes(3).toString("hex")}`];
    expect((await take({ key: a, limit: 1 }, { key: b, limit: 5 })).admitted).toBe(true);
    expect(await take({ key: a, limit: 1 }, { key: b, limit: 5 })).toMatchObject({ admitted: false, key: a });
    expect(await take({ key: b, limit: 5 }, { key: a, limit: 1 })).toMatchObject({ admitted: false, key: a });
    // b was taken once only: three more fit under 4.
    for (let i = 0; i < 3; i++) expect((await take({ key: b, limit: 4 })).admitted).toBe(true);
    expect(await take({ key: b, limit: 4 })).toMatchObject({ admitted: false, key: b });
    expect((await take({ key: `${a}-other`, limit: 1 })).admitted).toBe(true);
  });

  it("admits exactly the limit of 50 simultaneous attempts", async () => {
    t = START;
    const key = `burst-${randomBytes(3).toString("hex")}`;
    const all = await Promise.all(
      Array.from({ length: 50 }, () => take({ key, limit: 5 }, { key: `${key}-ip`, limit: 7 })),
    );
    expect(all.filter((a) => a.admitted)).toHaveLength(5);
  });

  it("gives an attempt back once, never below zero, and only to its own minute", async () => {
    t = START;
    const key = `back-${randomBytes(3).toString("hex")}`;
    const first = await take({ key, limit: 1 });
    expect(await take({ key, limit: 1 })).toMatchObject({ admitted: false });
    if (!first.admitted) throw new Error("not admitted");
    await first.giveBack();
    const second = await take({ key, limit: 1 });
    expect(second.admitted).toBe(true);
    if (!second.admitted) throw new Error("not admitted");
    await second.giveBack();
    await second.giveBack(); // nothing left to give back: the count stays at zero
    expect((await take({ key, limit: 1 })).admitted).toBe(true);
    expect((await take({ key, limit: 1 })).admitted).toBe(false);
    // Given back after its minute ended, an attempt leaves the new minute's count alone.
    const late = `late-${randomBytes(3).toString("hex")}`;
    const old = await take({ key: late, limit: 1 });
    t = START + 50_000;
    expect((await take({ key: late, limit: 1 })).admitted).toBe(true);
    if (old.admitted) await old.giveBack();
    expect((await take({ key: late, limit: 1 })).admitted).toBe(false);
  });

  it("reports its store and health", () => {
    expect(limiter.status()).toEqual({ store, ok: true });
    expect(failOpens).toEqual([]);
  });
});

describe.runIf(process.env.REDIS_URL)("the rate limiter's Redis counters", () => {
  it("live under the namespace, one per window and key, expiring an hour after their window", async () => {
    const t = START;
    const namespace = `unit-${randomBytes(4).toString("hex")}`;
    const limiter = await createRateLimiter({
      redisUrl: process.env.REDIS_URL,
      namespace,
      logger: createLogger("silent"),
      now: () => new Date(t),
    });
    const { Redis } = await import("ioredis");
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      const key = `ttl-${randomBytes(3).toString("hex")}`;
      await limiter.admit(key, { perMinute: 5, perDay: 5 });
      await limiter.takeAttempt([{ key, limit: 5 }]);
      const minuteIndex = Math.floor(START / 60_000);
      const dayIndex = Math.floor(START / 86_400_000);
      const names = (await redis.keys(`${namespace}:*`)).map((k) => k.slice(namespace.length + 1)).sort();
      expect(names).toEqual(
        [
          `rate:day:${key}:${dayIndex}`,
          `rate:minute:${key}:${minuteIndex}`,
          `rate:minute:fail:${key}:${minuteIndex}`,
        ].sort(),
      );
      for (const [name, ms] of [
        [`rate:minute:${key}:${minuteIndex}`, 60_000 + 3_600_000],
        [`rate:day:${key}:${dayIndex}`, 86_400_000 + 3_600_000],
        [`rate:minute:fail:${key}:${minuteIndex}`, 60_000 + 3_600_000],
      ] as const) {
        const ttl = await redis.pttl(`${namespace}:${name}`);
        expect(ttl, name).toBeGreaterThan(ms - 5000);
        expect(ttl, name).toBeLessThanOrEqual(ms);
      }
    } finally {
      redis.disconnect();
      await limiter.close();
    }
  });
});

describe("admission rules", () => {
  let t = START;
  let limiter: RateLimiter;
  const rejections: string[] = [];
  beforeEach(async () => {
    limiter = await createRateLimiter({ logger: createLogger("silent"), now: () => new Date(t) });
  });
  afterEach(() => limiter.close());

  it("throws rate_limited with the window, retry time and quota, and counts test mode apart", async () => {
    const admission = createAdmission(limiter, { authFailuresPerMinute: 3, onRejected: (r) => rejections.push(r) });
    const limits = { perMinute: 2, perDay: 100 };
    expect(await admission.provider(1, limits)).toMatchObject({ window: "minute", remaining: 1 });
    await admission.provider(1, limits);
    const err = await rejected(() => admission.provider(1, limits));
    expect(err).toMatchObject({
      kind: "rate_limited",
      code: "rate_limited",
      window: "minute",
      retryAfterSeconds: 50,
      message: "rate limit of 2 requests per minute exceeded; retry in 50 s",
    });
    expect(err.quota).toMatchObject({ window: "minute", remaining: 0 });
    expect(rejections).toEqual(["minute"]);
    // Test mode has its own counters, the same limits.
    expect(await admission.provider(1, limits, false)).toMatchObject({ remaining: 1 });
    expect((await admission.usage(1, true)).minute.used).toBe(2);
    expect((await admission.usage(1, false)).minute.used).toBe(1);
    // Each provider and mode counts on its own: provider 2 starts from zero, live and test.
    expect(await admission.provider(3, { perMinute: 1, perDay: 1 })).toMatchObject({ remaining: 0 });
    expect(await admission.provider(3, { perMinute: 1, perDay: 1 }, false)).toMatchObject({ remaining: 0 });
    expect(await admission.provider(4, { perMinute: 1, perDay: 1 }, false)).toMatchObject({ remaining: 0 });
    const day = await rejected(async () => {
      await admission.provider(2, { perMinute: 10, perDay: 1 });
      return admission.provider(2, { perMinute: 10, perDay: 1 });
    });
    expect(day).toMatchObject({
      window: "day",
      message: "rate limit of 1 requests per day exceeded; retry in 86390 s",
    });
  });

  it("never refuses a success, lets credential-less failures through free, and limits guessed credentials", async () => {
    t = START;
    const seen: string[] = [];
    const admission = createAdmission(limiter, { authFailuresPerMinute: 2, onRejected: (r) => seen.push(r) });
    const bad = () => Promise.reject(new DomainError("unauthenticated", "no", { code: "invalid_api_key" }));
    const ip = "198.51.100.7";
    // No credential presented: not counted, however often.
    for (let i = 0; i < 5; i++)
      expect((await rejected(() => admission.guardAuth(ip, false, bad))).kind).toBe("unauthenticated");
    // Two guesses are 401; the third is 429 for the rest of the minute.
    expect((await rejected(() => admission.guardAuth(ip, true, bad))).kind).toBe("unauthenticated");
    expect((await rejected(() => admission.guardAuth(ip, true, bad))).kind).toBe("unauthenticated");
    const blocked = await rejected(() => admission.guardAuth(ip, true, bad));
    expect(blocked).toMatchObject({
      kind: "rate_limited",
      window: "minute",
      retryAfterSeconds: 50,
      message: "too many failed authentications from this address; retry in 50 s",
    });
    expect(seen).toEqual(["auth_failures"]);
    // A good credential from the same address is never refused.
    expect(await admission.guardAuth(ip, true, async () => "ok")).toBe("ok");
    // Other errors pass through untouched and uncounted.
    const boom = new Error("database down");
    expect(await admission.guardAuth("192.0.2.1", true, () => Promise.reject(boom)).catch((e: unknown) => e)).toBe(
      boom,
    );
    expect((await limiter.takeAttempt([{ key: "192.0.2.1", limit: 1 }])).admitted).toBe(true);
    // Without an address, failures are counted under one shared key.
    await rejected(() => admission.guardAuth(undefined, true, bad));
    await rejected(() => admission.guardAuth(undefined, true, bad));
    expect((await rejected(() => admission.guardAuth(undefined, true, bad))).kind).toBe("rate_limited");
    // Next minute: guesses are 401 again.
    t = START + 50_000;
    expect((await rejected(() => admission.guardAuth(ip, true, bad))).kind).toBe("unauthenticated");
  });
});

describe.runIf(process.env.REDIS_URL)("the rate limiter when Redis goes away", () => {
  it("admits without limits, counts each fail-open, logs once a minute and reports it", async () => {
    const proxy = await redisProxy();
    const logs: string[] = [];
    const sink = new Writable({
      write(chunk, _e, done) {
        logs.push(String(chunk));
        done();
      },
    });
    let opens = 0;
    const limiter = await createRateLimiter({
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      namespace: `unit-out-${randomBytes(4).toString("hex")}`,
      logger: createLogger("warn", sink),
      onFailOpen: () => opens++,
    });
    try {
      expect((await limiter.admit("k", { perMinute: 1, perDay: 1 })).admitted).toBe(true);
      expect((await limiter.admit("k", { perMinute: 1, perDay: 1 })).admitted).toBe(false);
      await proxy.close(); // Redis is gone
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 3; i++) {
        expect(await limiter.admit("k", { perMinute: 1, perDay: 1 })).toEqual({
          admitted: true,
          quota: { limits: { perMinute: 1, perDay: 1 } },
        });
      }
      expect(opens).toBeGreaterThanOrEqual(3);
      const warned = logs.filter((l) => l.includes("rate limiter store unreachable"));
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0] as string).err).toMatch(/^redis is |Connection is closed|Stream isn't writeable/);
      expect(limiter.status()).toMatchObject({ store: "redis", ok: false });
      const counted = opens;
      expect((await limiter.usage("k")).minute.used).toBeUndefined();
      expect(opens).toBe(counted); // a store that is down is not asked
      // Attempts are admitted while the store is down (each a fail-open), and none is refused.
      for (let i = 0; i < 3; i++) {
        const attempt = await limiter.takeAttempt([{ key: "ip", limit: 1 }]);
        expect(attempt.admitted).toBe(true);
        if (attempt.admitted) await attempt.giveBack(); // not sent to a store that is down
      }
      expect(opens).toBe(counted + 3);
    } finally {
      await limiter.close();
    }
  });
});

describe.runIf(process.env.REDIS_URL)("the rate limiter when Redis hangs", () => {
  it("fails open after redisTimeoutMs instead of holding the request", async () => {
    const proxy = await redisProxy();
    let opens = 0;
    const limiter = await createRateLimiter({
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      namespace: `unit-hang-${randomBytes(4).toString("hex")}`,
      logger: createLogger("silent"),
      redisTimeoutMs: 150,
      onFailOpen: () => opens++,
    });
    try {
      expect((await limiter.admit("k", { perMinute: 1, perDay: 5 })).admitted).toBe(true);
      proxy.hang();
      const started = Date.now();
      expect(await limiter.admit("k", { perMinute: 1, perDay: 5 })).toEqual({
        admitted: true,
        quota: { limits: { perMinute: 1, perDay: 5 } },
      });
      expect(Date.now() - started).toBeLessThan(1000);
      expect(opens).toBe(1);
      expect(limiter.status()).toEqual({ store: "redis", ok: false, detail: "rate limiter store timed out" });
      const attempt = await limiter.takeAttempt([{ key: "ip", limit: 1 }]);
      expect(attempt.admitted).toBe(true);
      expect(opens).toBe(2);
      if (attempt.admitted) await attempt.giveBack();
      expect(opens).toBe(3);
    } finally {
      await limiter.close();
      await proxy.close();
    }
  });
});

describe.runIf(process.env.REDIS_URL)("the rate limiter's defaults", () => {
  it("waits 250 ms for a hanging Redis by default, and fails open without an onFailOpen hook", async () => {
    const proxy = await redisProxy();
    const unique = `defaults-${randomBytes(4).toString("hex")}`;
    const limiter = await createRateLimiter({
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      logger: createLogger("silent"),
    });
    const { Redis } = await import("ioredis");
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      expect((await limiter.admit(unique, { perMinute: 5, perDay: 5 })).admitted).toBe(true);
      // Without a namespace the counters are the deployment's default, lead-provider.
      const keys = await redis.keys(`lead-provider:rate:*:${unique}:*`);
      expect(keys).toHaveLength(2);
      proxy.hang();
      const started = Date.now();
      expect((await limiter.admit(unique, { perMinute: 5, perDay: 5 })).admitted).toBe(true);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(200);
      expect(took).toBeLessThan(1000);
      await redis.del(...keys);
    } finally {
      redis.disconnect();
      await limiter.close();
      await proxy.close();
    }
  });
});
