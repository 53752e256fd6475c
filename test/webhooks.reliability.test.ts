/**
 * Webhook delivery under the conditions that lose events in weaker designs: two instances sharing
 * one Postgres outbox (each event sent exactly once in a healthy run), the service killed with
 * SIGKILL while a delivery is in flight (the event is delivered after the restart), a backlog
 * of hundreds at one slow, failing endpoint (another provider's deliveries still go at once), an
 * endpoint that never answers (it holds at most its share of the slots, test mode its own share),
 * and a replay asked for while the attempt it repeats still runs (it waits for that attempt).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS, createTestDatabase } from "./helpers/database.ts";
import { createProviderKey, SECRETS, type ServiceProcess, startService, waitFor } from "./helpers/processes.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";
import { START_MS } from "./helpers/timing.ts";

const PROVIDERS = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";
const UNLIMITED = { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" };

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

async function delivered(app: TestApp["app"]): Promise<number> {
  const metric = await app.metrics.registry.getSingleMetric("lead_provider_webhook_deliveries_total")?.get();
  return metric?.values.find((v) => v.labels.outcome === "delivered")?.value ?? 0;
}

describe.runIf(process.env.TEST_DATABASE_URL)("two instances sharing one Postgres", () => {
  let a: TestApp | undefined;
  let b: TestApp | undefined;
  afterEach(async () => {
    await b?.stop();
    await a?.stop();
  });

  it("deliver each of 500 events exactly once, both taking part", async () => {
    receiver = await startReceiver();
    // A receiver with some latency, as real ones have, so deliveries overlap across instances.
    receiver.answer = () => new Promise((r) => setTimeout(() => r(204), 5));
    a = await startTestApp({ name: "postgres" }, UNLIMITED);
    b = await startTestApp({ name: "postgres" }, { ...UNLIMITED, DATABASE_URL: a.app.config.databaseUrl ?? "" });
    const p = await a.provider(undefined, { webhook_url: receiver.url });
    const apps = [a, b];
    let n = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (n < 500) {
          n += 1;
          const app = apps[n % 2] as TestApp;
          const res = await app.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: p.key });
          expect(res.status).toBe(201);
        }
      }),
    );
    await receiver.waitFor((all) => new Set(all.map((r) => r.headers["webhook-id"])).size >= 500, 60_000, "500 events");
    await new Promise((r) => setTimeout(r, 1000)); // nothing arrives twice later either
    const ids = receiver.received.map((r) => r.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(500);
    expect(ids).toHaveLength(500);
    const [byA, byB] = [await delivered(a.app), await delivered(b.app)];
    console.log(`two instances: ${byA} + ${byB} deliveries`);
    expect(byA + byB).toBe(500);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
  });
});

const BACKEND_ENVS = [
  {
    name: "embedded",
    env: async () => ({ env: { DATA_DIR: mkdtempSync(join(tmpdir(), "lp-webhook-")) }, drop: async () => {} }),
  },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: "postgres",
          env: async () => {
            const db = await createTestDatabase({ name: "postgres" });
            return { env: { DATABASE_URL: db.url ?? "" }, drop: db.drop };
          },
        },
      ]
    : []),
];

describe.each(BACKEND_ENVS)("SIGKILL mid-delivery ($name)", (backend) => {
  let service: ServiceProcess | undefined;
  afterEach(async () => {
    service?.child.kill("SIGKILL");
    await service?.exited;
  });

  it("delivers the event after a restart: nothing is dropped", async () => {
    receiver = await startReceiver();
    const { env, drop } = await backend.env();
    // A short attempt timeout keeps the lease (timeout + 5 s) short for the test.
    const serviceEnv = { ...env, WEBHOOK_TIMEOUT_MS: "1000", LOG_LEVEL: "warn" };
    try {
      service = await startService(serviceEnv);
      const { id, key } = await createProviderKey(service.url);
      const admin = await new SignJWT({ position: "ADMIN" })
        .setProtectedHeader({ alg: "HS256" })
        .setSubject("webhook-reliability")
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(new TextEncoder().encode(SECRETS.JWT_SECRET));
      const patched = await fetch(`${service.url}${PROVIDERS}${id}/`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ webhook_url: receiver.url }),
      });
      expect(patched.status).toBe(200);
      // The first attempt never gets an answer: the service is killed while it waits.
      receiver.answer = (_r, i) => (i === 0 ? "hang" : 204);
      const created = await fetch(`${service.url}/api/v1/public/leads/`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(leadBody()),
      });
      expect(created.status).toBe(201);
      await receiver.waitFor((all) => all.length >= 1, 10_000, "the first attempt");
      service.child.kill("SIGKILL");
      await service.exited;

      const port = service.port;
      service = await startService(serviceEnv, port);
      await receiver.waitFor((all) => all.length >= 2, 30_000, "the attempt after the restart");
      const [first, second] = receiver.received;
      expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
      const url = service.url;
      await waitFor(
        async () => {
          const res = await fetch(`${url}${PROVIDERS}${id}/webhook_deliveries/`, {
            headers: { authorization: `Bearer ${admin}` },
          });
          const [d] = ((await res.json()) as Json).results;
          return d?.state === "delivered" && d.attempts === 2;
        },
        10_000,
        "the delivery to be recorded as delivered on the second attempt",
      );
    } finally {
      service?.child.kill("SIGKILL");
      await service?.exited;
      service = undefined;
      await drop();
      if ("DATA_DIR" in env) rmSync(env.DATA_DIR as string, { recursive: true, force: true });
    }
    // Two service starts, a kill and a lease to expire: 10–20 s on a busy 2-core machine.
  }, 60_000);
});

describe.each(BACKENDS)("a backlog at one slow, failing endpoint ($name)", (backend) => {
  let t: TestApp | undefined;
  let fine: Receiver | undefined;
  afterEach(async () => {
    await t?.stop();
    await fine?.close();
  });

  it("leaves another provider's 20 deliveries to arrive within 8 s while 600 wait behind the slow one", async () => {
    // The defaults: 16 slots (a claim scans 64 due rows), 4 per endpoint.
    t = await startTestApp(backend, UNLIMITED);
    receiver = await startReceiver();
    let inFlight = 0;
    let most = 0;
    receiver.answer = async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 500));
      inFlight -= 1;
      return 500;
    };
    fine = await startReceiver();
    const slow = await t.provider(undefined, { webhook_url: receiver.url });
    const other = await t.provider(undefined, { webhook_url: fine.url });
    const first = await t.call("POST", "/api/v1/public/leads/", { auth: slow.key, body: leadBody() });
    expect(first.status).toBe(201);
    // 600 more events of the slow provider, queued the outbox's way (each delivery made by the
    // lead_events trigger), a minute older than anything else, of no lead so the per-lead order
    // holds none back: every one is a due row ahead of the other provider's in the claims' scan.
    const db = t.app.database.db;
    await sql`insert into lead_events (event_id, provider_id, lead_id, type, created_at, livemode, data)
      select 'evt_' || md5(random()::text || g::text), e.provider_id, null, e.type, e.created_at - interval '1 minute',
             e.livemode, e.data
      from lead_events e, generate_series(1, 600) g where e.provider_id = ${slow.id}`.execute(db);
    await sql`update webhook_deliveries set next_attempt_at = now() - interval '1 minute'
      where provider_id = ${slow.id} and attempts = 0`.execute(db);
    await receiver.waitFor((all) => all.length >= 4, 15_000, "the slow endpoint's first attempts");

    for (let i = 0; i < 20; i += 1) {
      const created = await t.call("POST", "/api/v1/public/leads/", { auth: other.key, body: leadBody() });
      expect(created.status).toBe(201);
    }
    const committed = Date.now();
    await fine.waitFor((all) => all.length >= 20, 8_000, "the other provider's 20 deliveries within 8 s");
    expect(Math.max(...fine.received.map((r) => r.at)) - committed).toBeLessThan(8_000);
    // The backlog was real: most of it still waits for its first attempt.
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries
      where provider_id = ${slow.id} and state = 'pending' and attempts = 0`.execute(db);
    expect(rows[0]?.n).toBeGreaterThan(450);
    // The slow endpoint never had more than its share in flight.
    expect(most).toBeLessThanOrEqual(4);
  }, 120_000);
});

describe.each(BACKENDS)("an endpoint that hangs ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    // The default 16 slots, and a 10 s timeout: the hanging attempts hold their slots throughout.
    t = await startTestApp(backend, { WEBHOOK_TIMEOUT_MS: "10000" });
    admin = await t.token();
  });
  afterAll(() => t.stop());

  const testKey = async (id: number) =>
    (
      (await (
        await t.call("POST", `${PROVIDERS}${id}/generate_api_key/`, { auth: admin, body: { mode: "test" } })
      ).json()) as Json
    ).api_key as string;

  it("delivers another provider's event within 2 s while one endpoint hangs with 20 deliveries queued", async () => {
    const hanging = await startReceiver();
    hanging.answer = () => "hang";
    const fine = await startReceiver();
    try {
      const s = await t.provider(undefined, { webhook_url: hanging.url });
      const f = await t.provider(undefined, { webhook_url: fine.url });
      for (let i = 0; i < 20; i++) {
        expect((await t.call("POST", LEADS, { auth: s.key, body: leadBody() })).status).toBe(201);
      }
      await hanging.waitFor((all) => all.length >= 4, 5000, "S's first deliveries");
      const created = await t.call("POST", LEADS, { auth: f.key, body: leadBody() });
      expect(created.status).toBe(201);
      const committed = Date.now();
      await fine.waitFor((all) => all.length >= 1, 2000, "F's lead.created within 2 s");
      expect(fine.received[0]?.at ?? Number.POSITIVE_INFINITY).toBeLessThan(committed + 2000);
      // The cap: the hanging endpoint never had more than 4 deliveries in flight.
      expect(hanging.received.length).toBe(4);
    } finally {
      await hanging.close();
      await fine.close();
    }
  }, 30_000);

  it("gives test-mode deliveries a bounded share: five hanging sandbox endpoints leave live ones room", async () => {
    const receivers = await Promise.all(Array.from({ length: 5 }, () => startReceiver()));
    for (const r of receivers) r.answer = () => "hang";
    const fine = await startReceiver();
    try {
      for (const r of receivers) {
        const p = await t.provider(undefined, { webhook_url: r.url });
        const key = await testKey(p.id);
        for (let i = 0; i < 4; i++) {
          expect((await t.call("POST", LEADS, { auth: key, body: leadBody() })).status).toBe(201);
        }
      }
      // 5 × 4 hanging test deliveries would fill all 16 slots; the test share (4) holds them.
      await waitFor(async () => receivers.reduce((n, r) => n + r.received.length, 0) >= 4, 5000, "test deliveries");
      await new Promise((r) => setTimeout(r, 300));
      expect(receivers.reduce((n, r) => n + r.received.length, 0)).toBe(4);
      const f = await t.provider(undefined, { webhook_url: fine.url });
      expect((await t.call("POST", LEADS, { auth: f.key, body: leadBody() })).status).toBe(201);
      const committed = Date.now();
      await fine.waitFor((all) => all.length >= 1, 2000, "the live event within 2 s");
      expect(fine.received[0]?.at ?? Number.POSITIVE_INFINITY).toBeLessThan(committed + 2000);
    } finally {
      await Promise.all([...receivers, fine].map((r) => r.close()));
    }
  }, 30_000);
});

describe.each(BACKENDS)("a replay while the attempt it repeats still runs ($name)", (backend) => {
  it("waits for the lease of an attempt still running when its delivery was disabled mid-send", async () => {
    // The first attempt hangs until its 10 s time-out: long enough that it still runs when the
    // replay comes, however slowly the machine gets there.
    const t = await startTestApp(backend, { WEBHOOK_TIMEOUT_MS: "10000" });
    const hanging = await startReceiver();
    hanging.answer = () => "hang";
    try {
      const admin = await t.token();
      const p = await t.provider(undefined, { webhook_url: hanging.url });
      await t.call("POST", LEADS, { auth: p.key, body: leadBody() });
      await hanging.waitFor((all) => all.length === 1, START_MS, "the first attempt");
      // The endpoint is disabled while that attempt hangs (what a 410 from it would do).
      const db = t.app.database.db;
      await db.updateTable("webhook_deliveries").set({ state: "disabled" }).where("provider_id", "=", p.id).execute();
      const [delivery] = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("provider_id", "=", p.id)
        .execute();
      const replayed = await t.call("POST", `${PROVIDERS}${p.id}/webhook_deliveries/${delivery?.id}/replay/`, {
        auth: admin,
      });
      expect(replayed.status).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 1500));
      expect(hanging.received).toHaveLength(1); // not sent again while the first attempt runs
      const after = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("id", "=", delivery?.id as number)
        .executeTakeFirstOrThrow();
      expect(after.state).toBe("pending");
      expect(new Date(after.next_attempt_at as unknown as string).getTime()).toBeGreaterThanOrEqual(
        new Date(delivery?.lease_expires_at as Date).getTime() - 5,
      );
    } finally {
      await hanging.close();
      await t.stop();
    }
  }, 150_000);
});
