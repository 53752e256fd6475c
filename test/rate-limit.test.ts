import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { generateKey } from "../src/api-keys/api-key.ts";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { type ServiceProcess, startServiceProcess } from "./helpers/service-process.ts";

/** A TCP proxy that holds every answer from `target` for `ms` before passing it on. */
async function startLaggingProxy(target: { host: string; port: number }, ms: number) {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => s.destroy());
      s.on("close", () => sockets.delete(s));
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => setTimeout(() => client.writable && client.write(d), ms));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The limiter's store: always in-process; Redis too when REDIS_URL is set (as CI sets it). */
const STORES = process.env.REDIS_URL ? [{ name: "memory" }, { name: "redis" }] : [{ name: "memory" }];

/** A test clock, 5 s into a UTC day, moved by hand. */
function testClock() {
  let t = Date.UTC(2026, 10, 22, 0, 0, 5);
  return { now: () => new Date(t), advance: (ms: number) => (t += ms) };
}

function storeEnv(
  store: { name: string },
  namespace = `test-${randomBytes(4).toString("hex")}`,
): Record<string, string> {
  return store.name === "redis" ? { REDIS_URL: process.env.REDIS_URL as string, REDIS_NAMESPACE: namespace } : {};
}

const read = (t: TestApp, key: string) => t.call("GET", "/api/v1/public/leads/none/", { auth: key });

describe.each(STORES)("rate limits ($name store)", (store) => {
  let t: TestApp;
  const clock = testClock();
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, storeEnv(store), { now: clock.now });
  });
  afterAll(() => t.stop());

  it("admits 60 requests a minute across REST and gRPC, refuses the 61st with 429 and headers", async () => {
    const { key } = await t.provider();
    const first = await read(t, key);
    expect(first.status).toBe(404); // admitted: the lead simply does not exist
    expect(first.headers.get("ratelimit-policy")).toBe('"minute";q=60;w=60, "day";q=2000;w=86400');
    expect(first.headers.get("ratelimit")).toBe('"minute";r=59;t=55');
    for (let i = 0; i < 29; i++) expect((await read(t, key)).status).toBe(404);
    const grpc = connectClient(PublicLeadService, t.port, "grpc");
    for (let i = 0; i < 30; i++) {
      const err = await grpc.getLead({ externalId: "none" }, bearer(key)).catch((e: unknown) => e as ConnectError);
      expect((err as ConnectError).code).toBe(Code.NotFound);
    }
    const refused = await read(t, key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("55");
    expect(refused.headers.get("ratelimit")).toBe('"minute";r=0;t=55');
    expect(await refused.json()).toMatchObject({ code: "rate_limited", window: "minute", retry_after: 55 });
    const overGrpc = await grpc.getLead({ externalId: "none" }, bearer(key)).catch((e: unknown) => e as ConnectError);
    expect((overGrpc as ConnectError).code).toBe(Code.ResourceExhausted);

    clock.advance(55_000); // the next minute
    const again = await read(t, key);
    expect(again.status).toBe(404);
    expect(again.headers.get("ratelimit")).toBe('"minute";r=59;t=60');
  });

  it("admits exactly the limit of a burst of 200 concurrent requests", async () => {
    const { key } = await t.provider();
    const statuses = await Promise.all(Array.from({ length: 200 }, () => read(t, key).then((r) => r.status)));
    expect(statuses.filter((s) => s === 404)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(140);
  });

  it("refuses the 2001st request of a day, and keeps the day count across an idle afternoon", async () => {
    const { id, key } = await t.provider();
    await t.call("PATCH", `/api/v1/lead_providers/${id}/`, {
      auth: await t.token(),
      body: { rate_limit_per_minute: 100000 },
    });
    for (let batch = 0; batch < 100; batch++) {
      const statuses = await Promise.all(Array.from({ length: 19 }, () => read(t, key).then((r) => r.status)));
      expect(statuses.every((s) => s === 404)).toBe(true);
    }
    clock.advance(12 * 3600_000); // same UTC day, hours later
    const last = await Promise.all(Array.from({ length: 100 }, () => read(t, key).then((r) => r.status)));
    expect(last.filter((s) => s === 404)).toHaveLength(100);
    const over = await read(t, key);
    expect(over.status).toBe(429);
    const body = (await over.json()) as Json;
    expect(body).toMatchObject({ window: "day" });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(3600);
    clock.advance(12 * 3600_000); // the next UTC day
    expect((await read(t, key)).status).toBe(404);
  });

  it("applies a provider's own limits within seconds, and a refused request consumes nothing", async () => {
    const { id, key } = await t.provider("Tight limits", { rate_limit_per_minute: 5 });
    const statuses = [];
    for (let i = 0; i < 15; i++) statuses.push((await read(t, key)).status);
    expect(statuses.filter((s) => s === 404)).toHaveLength(5);
    await t.call("PATCH", `/api/v1/lead_providers/${id}/`, {
      auth: await t.token(),
      body: { rate_limit_per_minute: 6 },
    });
    // the 10 refusals took nothing: exactly one more request fits under the new limit
    expect((await read(t, key)).status).toBe(404);
    expect((await read(t, key)).status).toBe(429);
  });

  it("refuses an address after repeated failed authentications, then lets it try again", async () => {
    const tight = await startTestApp(
      { name: "pglite" },
      { ...storeEnv(store), AUTH_FAILURES_PER_MINUTE: "5" },
      { now: clock.now },
    );
    try {
      const bad = "lp_live_0000000000000000000000000000000000000000000000000";
      for (let i = 0; i < 5; i++) expect((await read(tight, bad)).status).toBe(401);
      const blocked = await read(tight, bad);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
      clock.advance(60_000);
      expect((await read(tight, bad)).status).toBe(401);
    } finally {
      await tight.stop();
    }
  }, 150_000);

  it("answers exactly the limit of 100 simultaneous failed authentications from one address with 401", async () => {
    const tight = await startTestApp(
      { name: "pglite" },
      { ...storeEnv(store), AUTH_FAILURES_PER_MINUTE: "5" },
      { now: clock.now },
    );
    try {
      // Malformed keys (refused at once, no lookup in between) and well-formed ones that exist nowhere.
      const { key } = await tight.provider();
      const bad = "lp_live_0000000000000000000000000000000000000000000000000";
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => read(tight, i % 2 ? bad : generateKey())),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(95);
      // The provider's own key still works: a valid credential is never refused by this limit.
      expect((await read(tight, key)).status).toBe(404);
    } finally {
      await tight.stop();
    }
  });
});

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";

describe("the failed-authentication limit cannot lock out valid callers", () => {
  let t: TestApp;
  let key: string;
  const clock = minuteClock();
  beforeAll(async () => {
    t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "5" }, { now: clock });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  it("charges nothing for CORS preflights and requests without a credential", async () => {
    clock.nextMinute();
    for (let i = 0; i < 12; i++) {
      await t.call("OPTIONS", LEADS, {
        headers: { origin: "https://app.example", "access-control-request-method": "POST" },
      });
      expect((await t.call("GET", `${LEADS}x/`)).status).toBe(401);
    }
    expect((await t.call("GET", `${LEADS}x/`, { auth: key })).status).toBe(404);
    const bad = await t.call("GET", `${LEADS}x/`, { auth: `${key.slice(0, -2)}zz` });
    expect(bad.status).toBe(401); // the first failed guess of this address still gets its 401
  });

  it("refuses an address that guesses keys, but never a valid key or JWT from it", async () => {
    clock.nextMinute();
    const guess = () => t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess" });
    for (let i = 0; i < 6; i++) await guess();
    const [before, blocked, after] = [clock.secondsLeft(), await guess(), clock.secondsLeft()];
    expect(blocked.status).toBe(429);
    // The seconds to the end of the minute, as the injected clock read them while it answered.
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(after);
    expect(Number(blocked.headers.get("retry-after"))).toBeLessThanOrEqual(before);
    expect((await t.call("GET", `${LEADS}x/`, { auth: key })).status).toBe(404);
    expect((await t.call("GET", P, { auth: await t.token() })).status).toBe(200);
  });
});

describe("the failed-authentication limit's client address behind a trusted proxy", () => {
  it("with TRUST_PROXY=1 limits the forwarded client, not the proxy everyone shares", async () => {
    const clock = minuteClock();
    const t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "1" }, { now: clock });
    try {
      clock.nextMinute();
      const from = (ip: string) =>
        t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess", headers: { "x-forwarded-for": ip } });
      for (let i = 0; i < 4; i++) await from("203.0.113.5");
      expect((await from("203.0.113.5")).status).toBe(429);
      expect((await from("203.0.113.6")).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);

  it("without TRUST_PROXY ignores X-Forwarded-For, so a guesser cannot escape by spoofing it", async () => {
    const clock = minuteClock();
    const t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "3" }, { now: clock });
    try {
      clock.nextMinute();
      const from = (ip: string) =>
        t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess", headers: { "x-forwarded-for": ip } });
      for (let i = 0; i < 4; i++) await from(`203.0.113.${i}`);
      expect((await from("198.51.100.1")).status).toBe(429);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe.runIf(process.env.REDIS_URL)("rate limits shared through Redis", () => {
  it("two instances admit exactly 60 of 120 requests spread over both", async () => {
    const clock = testClock();
    const env = storeEnv({ name: "redis" });
    const [a, b] = await Promise.all([
      startTestApp({ name: "pglite" }, env, { now: clock.now }),
      startTestApp({ name: "pglite" }, env, { now: clock.now }),
    ]);
    try {
      // Fresh databases: the first provider of each is id 1, i.e. the same provider to the limiter.
      const [pa, pb] = await Promise.all([a.provider("Shared"), b.provider("Shared")]);
      expect(pa.id).toBe(pb.id);
      const statuses = await Promise.all(
        Array.from({ length: 120 }, (_, i) => (i % 2 ? read(a, pa.key) : read(b, pb.key)).then((r) => r.status)),
      );
      expect(statuses.filter((s) => s === 404)).toHaveLength(60);
      expect(statuses.filter((s) => s === 429)).toHaveLength(60);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 270_000);

  it("answers exactly the limit of 100 simultaneous failed authentications with 401 when Redis is 20 ms away", async () => {
    // A Redis a network away: every answer is held 20 ms, so a count read first and written
    // after would let every simultaneous failure through before the first one was counted.
    const target = new URL(process.env.REDIS_URL as string);
    const far = await startLaggingProxy({ host: target.hostname, port: Number(target.port || 6379) }, 20);
    const clock = testClock();
    const t = await startTestApp(
      { name: "pglite" },
      { ...storeEnv({ name: "redis" }), REDIS_URL: `redis://127.0.0.1:${far.port}`, AUTH_FAILURES_PER_MINUTE: "5" },
      { now: clock.now },
    );
    try {
      const bad = "lp_live_0000000000000000000000000000000000000000000000000";
      const statuses = (await Promise.all(Array.from({ length: 100 }, () => read(t, bad)))).map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(95);
    } finally {
      await t.stop();
      await far.close();
    }
  });

  it("keeps serving when Redis stops, says so in /readyz, and enforces again when it returns", async () => {
    const port = await freePort();
    let redis = startRedis(port);
    const clock = testClock();
    const t = await startTestApp({ name: "pglite" }, { REDIS_URL: `redis://127.0.0.1:${port}` }, { now: clock.now });
    try {
      const { key } = await t.provider("Outage", { rate_limit_per_minute: 3 });
      expect((await t.call("POST", "/api/v1/public/leads/", { auth: key, body: leadBody() })).status).toBe(201);
      redis.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 5; i++) {
        expect((await t.call("POST", "/api/v1/public/leads/", { auth: key, body: leadBody() })).status).toBe(201);
      }
      const ready = await t.call("GET", "/readyz");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: "ready", checks: { redis: { ok: false } } });

      redis = startRedis(port);
      const deadline = Date.now() + 10_000;
      let statuses: number[] = [];
      while (Date.now() < deadline) {
        statuses = [];
        for (let i = 0; i < 4; i++) statuses.push((await read(t, key)).status);
        if (statuses.includes(429)) break;
        clock.advance(60_000);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(statuses).toEqual([404, 404, 404, 429]);
      expect(await (await t.call("GET", "/readyz")).json()).toMatchObject({ checks: { redis: { ok: true } } });
    } finally {
      await t.stop();
      redis.kill("SIGKILL");
    }
  }, 270_000);
});

/**
 * The same rules with WEB_CONCURRENCY=2 (the service as production starts it, on Postgres with
 * Redis): requests on fresh connections, which the primary hands to the two workers in turn.
 * A child process has no injected clock, so each test counts inside inOneMinute: one UTC minute of
 * the machine's clock (the service's too), or again from the next minute's start.
 */
describe.runIf(process.env.REDIS_URL && process.env.TEST_DATABASE_URL)("rate limits with two workers", () => {
  let c: ServiceProcess;
  beforeAll(async () => {
    c = await startServiceProcess({ WEB_CONCURRENCY: "2", ...storeEnv({ name: "redis" }), METRICS_TOKEN });
  }, 150_000);
  afterAll(async () => {
    expect(await c.stop()).toBe(0);
  });

  it("admits 60 requests a minute across REST and gRPC, on both workers, and refuses the 61st", async () => {
    await inOneMinute(20, async () => {
      const { key } = await c.provider();
      const first = await readFresh(c.port, key);
      expect(first.status).toBe(404);
      expect(first.headers["ratelimit-policy"]).toBe('"minute";q=60;w=60, "day";q=2000;w=86400');
      expect(first.headers.ratelimit).toMatch(/^"minute";r=59;t=\d+$/);
      for (let i = 0; i < 29; i++) expect((await readFresh(c.port, key)).status).toBe(404);
      const grpc = connectClient(PublicLeadService, c.port, "grpc");
      for (let i = 0; i < 30; i++) {
        const err = await grpc.getLead({ externalId: "none" }, bearer(key)).catch((e: unknown) => e as ConnectError);
        expect((err as ConnectError).code).toBe(Code.NotFound);
      }
      const refused = await readFresh(c.port, key);
      expect(refused.status).toBe(429);
      expect(refused.headers.ratelimit).toMatch(/^"minute";r=0;t=\d+$/);
      expect(JSON.parse(refused.body)).toMatchObject({ code: "rate_limited", window: "minute" });
      const overGrpc = await grpc.getLead({ externalId: "none" }, bearer(key)).catch((e: unknown) => e as ConnectError);
      expect((overGrpc as ConnectError).code).toBe(Code.ResourceExhausted);
    });
    expect(workersThatServed(c.output(), "/api/v1/public/leads/{external_id}/").size).toBe(2);
  }, 210_000);

  it("admits exactly the limit of a burst of 200 concurrent requests", async () => {
    await inOneMinute(15, async () => {
      const { key } = await c.provider();
      const before = await failedOpen(c);
      const statuses = await Promise.all(
        Array.from({ length: 200 }, () => readFresh(c.port, key).then((r) => r.status)),
      );
      // A request Redis does not answer within the limiter's 250 ms is admitted (fail open, counted
      // in lead_provider_rate_limit_fail_open_total), which a loaded machine can make happen: those
      // are the only admissions past the limit.
      const opened = (await failedOpen(c)) - before;
      const admitted = statuses.filter((s) => s === 404).length;
      expect(admitted).toBeGreaterThanOrEqual(60);
      expect(admitted, `${opened} admitted failing open`).toBeLessThanOrEqual(60 + opened);
      expect(statuses.filter((s) => s === 429)).toHaveLength(200 - admitted);
    });
  }, 210_000);

  it("applies a provider's own limits within seconds, and a refused request consumes nothing", async () => {
    await inOneMinute(25, async () => {
      const { id, key } = await c.provider("Tight limits", { rate_limit_per_minute: 5 });
      const statuses = [];
      for (let i = 0; i < 15; i++) statuses.push((await readFresh(c.port, key)).status);
      expect(statuses.filter((s) => s === 404)).toHaveLength(5);
      await c.call("PATCH", `/api/v1/lead_providers/${id}/`, {
        auth: await c.token(),
        body: { rate_limit_per_minute: 6 },
      });
      // The other worker may hold the old limit for its key cache's few seconds: its refusals take
      // nothing either, so exactly one more request fits, whichever worker answers.
      const after: number[] = [];
      const deadline = Date.now() + 10_000;
      while (!after.includes(404) && Date.now() < deadline) {
        after.push((await readFresh(c.port, key)).status);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(after.at(-1)).toBe(404);
      for (let i = 0; i < 4; i++) expect((await readFresh(c.port, key)).status).toBe(429);
    });
  }, 210_000);

  it("refuses an address after repeated failed authentications, whichever worker it reaches", async () => {
    const tight = await startServiceProcess({
      WEB_CONCURRENCY: "2",
      ...storeEnv({ name: "redis" }),
      AUTH_FAILURES_PER_MINUTE: "5",
    });
    try {
      await inOneMinute(10, async () => {
        const bad = "lp_live_0000000000000000000000000000000000000000000000000";
        for (let i = 0; i < 5; i++) expect((await readFresh(tight.port, bad)).status).toBe(401);
        const before = secondsLeftInMinute();
        const blocked = await readFresh(tight.port, bad);
        const after = secondsLeftInMinute();
        expect(blocked.status).toBe(429);
        // The seconds to this minute's end, as the service's clock (this machine's) read them.
        expect(Number(blocked.headers["retry-after"])).toBeGreaterThanOrEqual(after);
        expect(Number(blocked.headers["retry-after"])).toBeLessThanOrEqual(before);
      });
      expect(workersThatServed(tight.output(), "/api/v1/public/leads/{external_id}/").size).toBe(2);
    } finally {
      expect(await tight.stop()).toBe(0);
    }
  }, 330_000);
});

const minuteNow = () => Math.floor(Date.now() / 60_000);

const METRICS_TOKEN = "rate-limit-test-metrics-token-0123";

/** How many requests the service admitted because its rate-limit store did not answer, all workers. */
async function failedOpen(c: ServiceProcess): Promise<number> {
  const text = await (
    await fetch(`${c.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  return Number(/^lead_provider_rate_limit_fail_open_total (\d+)$/m.exec(text)?.[1] ?? 0);
}

/** What the service names as the seconds to this minute's end, by the machine's clock now. */
const secondsLeftInMinute = () => Math.max(1, Math.ceil((60_000 - (Date.now() % 60_000)) / 1000));

/** Waits for the next minute's start (and half a second). */
const nextMinute = () => new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 500));

/**
 * Runs `count`, which counts requests against the service's minute window, inside one UTC minute
 * of the machine's clock (the service's clock too: a child process has no injected one). It starts
 * at once when `seconds` are left in this minute, else at the next minute's start. When the minute
 * turned while `count` ran, its requests fell in two windows and its outcome, pass or fail, proves
 * nothing: it runs again from the next minute's start, with the whole minute for it.
 */
async function inOneMinute(seconds: number, count: () => Promise<void>): Promise<void> {
  if (60 - (Date.now() % 60_000) / 1000 < seconds + 1) await nextMinute();
  const first = minuteNow();
  try {
    await count();
    if (minuteNow() === first) return;
  } catch (err) {
    if (minuteNow() === first) throw err;
  }
  await nextMinute();
  const second = minuteNow();
  await count();
  if (minuteNow() !== second) throw new Error("the requests took more than a minute: no one window held them all");
}

/** A GET of an unknown lead on a connection of its own (so the primary may hand it to either worker). */
function readFresh(port: number, key: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        host: "127.0.0.1",
        path: "/api/v1/public/leads/none/",
        agent: false,
        headers: { authorization: `Bearer ${key}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The pids of the workers whose access log shows a request to `route`. */
function workersThatServed(output: string, route: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split("\n")) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { pid: number; route: string };
    if (entry.route === route) pids.add(entry.pid);
  }
  return pids;
}

function startRedis(port: number): ChildProcess {
  return spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
