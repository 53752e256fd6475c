/**
 * Nothing acknowledged is lost: creates run concurrently while the service (or its database) is
 * killed; afterwards every lead that got a 201 exists with all its vehicles, and no lead exists
 * half-written (each stored lead has exactly the vehicles that were sent and its history entry).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type Json, leadBody } from "./helpers/app.ts";
import {
  createProviderKey,
  HAS_POSTGRES_BINARIES,
  type PrivatePostgres,
  type ServiceProcess,
  startPrivatePostgres,
  startService,
  waitFor,
} from "./helpers/processes.ts";
import { START_MS } from "./helpers/timing.ts";

interface Load {
  readonly sent: Map<string, number>; // external_id → vehicles sent
  readonly acknowledged: Set<string>;
  stop(): Promise<void>;
}

const ZIPS = ["90210", "10001", "33101", "60601", "98101"];

/** Eight loops creating leads with 1–3 vehicles until stopped; remembers what got a 201. */
function startLoad(url: string, key: string): Load {
  const sent = new Map<string, number>();
  const acknowledged = new Set<string>();
  let running = true;
  let n = 0;
  const loop = async () => {
    while (running) {
      n += 1;
      const vehicles = Array.from({ length: 1 + (n % 3) }, (_, i) => ({
        year: 2015 + i,
        make: "Ford",
        model: `Model ${i}`,
        type: "CAR",
        tariff: 1000 + i,
        deposit: 100,
      }));
      const body = leadBody({ origin_zip: ZIPS[n % ZIPS.length], vehicles });
      sent.set(body.external_id as string, vehicles.length);
      try {
        const res = await fetch(`${url}/api/v1/public/leads/`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status === 201) acknowledged.add(body.external_id as string);
        await res.arrayBuffer();
      } catch {
        await new Promise((r) => setTimeout(r, 50)); // the service or its database is down
      }
    }
  };
  const loops = Array.from({ length: 8 }, loop);
  return {
    sent,
    acknowledged,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * Starts the service, loads it until `minAcknowledged` creates got a 201, SIGKILLs it mid-load and
 * starts it again on the same database and port.
 */
async function killMidLoadAndRestart(env: Record<string, string>, minAcknowledged: number) {
  const first = await startService(env);
  const { key } = await createProviderKey(first.url);
  const load = startLoad(first.url, key);
  await waitFor(
    async () => load.acknowledged.size >= minAcknowledged,
    START_MS,
    `${minAcknowledged} acknowledged leads`,
    () => `${load.acknowledged.size} of ${load.sent.size} creates acknowledged so far`,
  );
  first.child.kill("SIGKILL");
  await first.exited;
  await load.stop();
  return { service: await startService(env, first.port), key, load };
}

/** Every acknowledged lead is readable with all its vehicles. */
async function expectAcknowledgedIntact(url: string, key: string, load: Load): Promise<void> {
  let lost = 0;
  for (const externalId of load.acknowledged) {
    const res = await fetch(`${url}/api/v1/public/leads/${externalId}/`, {
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.status !== 200) {
      lost += 1;
      continue;
    }
    const lead = (await res.json()) as Json;
    expect(lead.vehicles).toHaveLength(load.sent.get(externalId) as number);
    expect(lead.history[0]).toMatchObject({ to_state: "LEAD" });
  }
  console.log(`durability: ${load.acknowledged.size} leads acknowledged, ${lost} lost`);
  expect(lost).toBe(0);
}

/** No stored lead is half-written: vehicles as sent, and one creation history entry. */
async function expectNoHalfWritten(databaseUrl: string, load: Load): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ external_id: string; vehicles: string; history: string }>(`
      select l.external_id,
        (select count(*) from vehicles v where v.lead_id = l.id) as vehicles,
        (select count(*) from lead_state_history h where h.lead_id = l.id) as history
      from leads l`);
    const ours = rows.filter((row) => load.sent.has(row.external_id));
    expect(ours.length).toBeGreaterThanOrEqual(load.acknowledged.size);
    for (const row of rows) {
      // earlier tests' leads share this database: every lead is whole, ours exactly as sent
      expect(Number(row.vehicles), row.external_id).toBe(load.sent.get(row.external_id) ?? Number(row.vehicles));
      expect(Number(row.vehicles), row.external_id).toBeGreaterThan(0);
      expect(Number(row.history), row.external_id).toBe(1);
    }
  } finally {
    await client.end();
  }
}

describe.runIf(HAS_POSTGRES_BINARIES)("durability on Postgres", () => {
  let pgServer: PrivatePostgres;
  let service: ServiceProcess | undefined;
  afterAll(() => {
    service?.child.kill("SIGKILL");
    pgServer?.destroy();
  });

  it("loses no acknowledged lead when the service is killed with SIGKILL mid-load", async () => {
    pgServer = await startPrivatePostgres();
    const run = await killMidLoadAndRestart({ DATABASE_URL: pgServer.url }, 100);
    service = run.service;
    const { key, load } = run;
    await expectAcknowledgedIntact(service.url, key, load);
    await expectNoHalfWritten(pgServer.url, load);
    service.child.kill("SIGKILL");
    await service.exited;
    service = undefined;
    // A private Postgres, two service starts and the load between them.
  }, 420_000);

  it("loses no acknowledged lead when Postgres crashes mid-load, and recovers without a restart", async () => {
    pgServer ??= await startPrivatePostgres();
    service = await startService({ DATABASE_URL: pgServer.url });
    const { key } = await createProviderKey(service.url);
    const load = startLoad(service.url, key);
    const acknowledged = () => `${load.acknowledged.size} of ${load.sent.size} creates acknowledged so far`;
    await waitFor(async () => load.acknowledged.size >= 100, START_MS, "100 acknowledged leads", acknowledged);
    pgServer.stop("immediate");
    const before = load.acknowledged.size;
    await new Promise((r) => setTimeout(r, 1000));
    pgServer.start();
    // the same service process recovers by itself: new creates are acknowledged again
    await waitFor(
      async () => load.acknowledged.size >= before + 50,
      START_MS,
      `creates to succeed after the restart (${before} before it)`,
      acknowledged,
    );
    await load.stop();
    await expectAcknowledgedIntact(service.url, key, load);
    await expectNoHalfWritten(pgServer.url, load);
    // The service and Postgres (when the test before did not start them) and Postgres's restart.
  }, 420_000);

  it("answers 503 problem+json within 5 s while Postgres is down, /readyz says not ready, then recovers", async () => {
    pgServer ??= await startPrivatePostgres();
    service ??= await startService({ DATABASE_URL: pgServer.url });
    const { key } = await createProviderKey(service.url);
    pgServer.stop("fast");
    try {
      const started = Date.now();
      const res = await fetch(`${service.url}/api/v1/public/leads/`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(leadBody()),
      });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(res.status).toBe(503);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(await res.json()).toMatchObject({ status: 503, code: "service_unavailable" });
      const ready = await fetch(`${service.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: "not_ready", checks: { database: { ok: false } } });
    } finally {
      pgServer.start();
    }
    await waitFor(async () => (await fetch(`${service?.url}/readyz`)).status === 200, START_MS, "readiness to return");
    const res = await fetch(`${service.url}/api/v1/public/leads/`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(leadBody()),
    });
    expect(res.status).toBe(201);
  }, 390_000);
});

describe("durability on the embedded database", () => {
  it("loses no acknowledged lead when the service is killed with SIGKILL mid-load", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lp-durable-"));
    let service: ServiceProcess | undefined;
    try {
      const run = await killMidLoadAndRestart({ DATA_DIR: dir }, 50);
      service = run.service;
      await expectAcknowledgedIntact(service.url, run.key, run.load);
    } finally {
      service?.child.kill("SIGKILL");
      await service?.exited;
      rmSync(dir, { recursive: true, force: true });
    }
    // Load, a kill and a restart of the embedded database: 12–22 s on a busy 2-core machine, more
    // on a loaded one; each start waits for /healthz up to START_MS.
  }, 300_000);
});
