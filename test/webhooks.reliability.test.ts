/**
 * Webhook delivery under the conditions that lose events in weaker designs: two instances sharing
 * one Postgres outbox (each event sent exactly once in a healthy run), and the service killed
 * with SIGKILL while a delivery is in flight (the event is delivered after the restart).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { createTestDatabase } from "./helpers/database.ts";
import { createProviderKey, SECRETS, type ServiceProcess, startService, waitFor } from "./helpers/processes.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";

const PROVIDERS = "/api/v1/lead_providers/";
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
