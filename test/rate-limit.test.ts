import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

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
  });
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
  });
});

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
