/**
 * `make bench`: the service against the database's own limit.
 *
 * 1. A fresh Postgres database (BENCH_DATABASE_URL's server), the service started as production
 *    runs it, bench providers with raised limits, GET targets seeded in SQL.
 * 2. pgbench baselines (lead-shaped INSERT, keyed SELECT, and the statements the service sends)
 *    at each client count; the rows pgbench inserted are deleted afterwards.
 * 3. The bare-Node floor (bench/floor.ts), then the service's REST (wrk) and gRPC (pre-encoded h2c
 *    frames) create and get, in turn, BENCH_ROUNDS times; each figure is the median round's.
 * 3b. WEB_CONCURRENCY=2 (with Redis) against the single process, REST get, in turn.
 * 4. Scale check: 1,000,000 leads across 100 providers seeded in SQL, REST get/create again.
 * 4b. Webhooks: REST create with and without a webhook_url configured (a receiver process answering
 *    204), in one service, and how long the deliveries take to drain after the load.
 * 4c. Request log: REST create, then REST get, on two services started for the comparison, one
 *    with REQUEST_LOG_ENABLED=false, on the same database, at least five rounds, the side measured
 *    first alternating between rounds (compareServices).
 * 4d. Pricing: REST create the same way, against LEDGER_ENABLED=false (every bench provider has
 *    terms with price rules: each lead priced and its purchase posted in the ledger).
 * 5. CPU profiles (node --cpu-prof) of each operation, start-up on an existing embedded database.
 * 6. The table, printed and written to bench/results/latest.md (and latest.json).
 *
 * Environment: BENCH_DATABASE_URL, BENCH_DURATION (s per scenario), BENCH_WARMUP (s),
 * BENCH_CONNECTIONS ("64"), BENCH_ROUNDS (3), BENCH_SKIP_SCALE=1, BENCH_SKIP_PROFILE=1, BENCH_SKIP_WEBHOOKS=1,
 * BENCH_SKIP_CLUSTER=1, BENCH_SKIP_REQUEST_LOG=1, BENCH_SKIP_MONEY=1, BENCH_REDIS_URL, BENCH_SCALE_LEADS,
 * BENCH_POOL_SIZE, BENCH_GRPC_STREAMS (calls per HTTP/2 connection), BENCH_PROFILE_DURATION,
 * BENCH_OUTPUT, BENCH_STRICT=1 (exit 1 when a target fails), BENCH_SERVICE_DIR (run the service
 * from another checkout), PGBENCH (the pgbench binary).
 */
import { createSecretKey, randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, toBinary } from "@bufbuild/protobuf";
import { SignJWT } from "jose";
import {
  CreateLeadRequestSchema,
  GetLeadRequestSchema,
} from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type CpuShares, watchCpu } from "./lib/cpu.ts";
import {
  type BenchDatabase,
  createBenchDatabase,
  seedLeads,
  seedProviders,
  serverVersion,
  vacuumAnalyze,
} from "./lib/database.ts";
import { runH2cLoad } from "./lib/h2c-load.ts";
import { grpcRequest, makeLead } from "./lib/leads.ts";
import { findPgbench, runPgbench, type ScriptName } from "./lib/pgbench.ts";
import { onInterrupt, run, wasInterrupted } from "./lib/processes.ts";
import { monotonicUs, type ProfileSummary, summarizeFile } from "./lib/profile.ts";
import { startBenchReceiver } from "./lib/receiver.ts";
import {
  type FloorRow,
  floorTable,
  fmt,
  profileSection,
  type Row,
  resultsTable,
  type Target,
  targetsTable,
} from "./lib/report.ts";
import { procCpu, ROOT, type Service, startService, warmCompileCache } from "./lib/service.ts";
import type { LoadResult } from "./lib/stats.ts";
import { onPath, runWrk } from "./lib/wrk.ts";

// ---------------------------------------------------------------------------------------------
// Configuration

const env = process.env;
const int = (name: string, fallback: number) => {
  const v = env[name];
  if (v === undefined || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer (got "${v}")`);
  return n;
};
const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const config = {
  adminUrl: env.BENCH_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres",
  seconds: int("BENCH_DURATION", 10),
  warmup: int("BENCH_WARMUP", 3),
  connections: (env.BENCH_CONNECTIONS || "64").split(",").map((c) => {
    const n = Number(c.trim());
    if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CONNECTIONS: bad count "${c}"`);
    return n;
  }),
  skipScale: env.BENCH_SKIP_SCALE === "1",
  skipProfile: env.BENCH_SKIP_PROFILE === "1",
  skipWebhooks: env.BENCH_SKIP_WEBHOOKS === "1",
  skipCluster: env.BENCH_SKIP_CLUSTER === "1",
  skipRequestLog: env.BENCH_SKIP_REQUEST_LOG === "1",
  skipMoney: env.BENCH_SKIP_MONEY === "1",
  /** Redis for the WEB_CONCURRENCY=2 phase (workers share rate limits through it). */
  redisUrl: env.BENCH_REDIS_URL || "redis://127.0.0.1:6379",
  scaleLeads: int("BENCH_SCALE_LEADS", 1_000_000),
  scaleProviders: 100,
  poolSize: int("BENCH_POOL_SIZE", 20),
  grpcStreams: int("BENCH_GRPC_STREAMS", 16),
  /** Rounds of the floor/service comparison; each figure is the median round's (runs vary ±20 % here). */
  rounds: int("BENCH_ROUNDS", 3),
  profileSeconds: int("BENCH_PROFILE_DURATION", 5),
  /** Bench providers (with keys): spreads the load over several rate-limit buckets. */
  providers: 8,
  /** GET targets per bench provider on the "empty" database. */
  seedPerProvider: 2500,
  output: env.BENCH_OUTPUT || join(BENCH_DIR, "results", "latest.md"),
  strict: env.BENCH_STRICT === "1",
};
const maxConnections = Math.max(...config.connections);

const secrets = {
  JWT_SECRET: randomBytes(32).toString("hex"),
  API_KEY_SECRET: randomBytes(32).toString("hex"),
};

const log = (message: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);
const summary = (r: LoadResult) =>
  `${fmt.rps(r.rps)} req/s, p50 ${fmt.ms(r.p50)} ms, p99 ${fmt.ms(r.p99)} ms, errors ${r.errors}` +
  (r.errorSamples.length > 0 ? ` (${r.errorSamples.join("; ")})` : "");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The service's side: providers, keys, and the four operations

interface Tenant {
  readonly id: number;
  readonly key: string;
}

async function adminToken(): Promise<string> {
  return new SignJWT({ position: "ADMIN" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("bench-admin")
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(createSecretKey(Buffer.from(secrets.JWT_SECRET, "utf8")));
}

/**
 * A typical provider's intake rules: the states the broker serves, the vehicle types it
 * ships, a few vehicles, a ship date within 90 days, duplicates flagged. No caps: they serialise a
 * provider's creates by design and would cut a load that has no business being this large.
 */
const TYPICAL_RULES = {
  origin_states: ["CA", "NY", "FL", "IL", "WA", "TX", "GA", "MA", "CO", "AZ", "NJ", "PA", "OH", "NC"],
  destination_states: ["CA", "NY", "FL", "IL", "WA", "TX", "GA", "MA", "CO", "AZ", "NJ", "PA", "OH", "NC"],
  vehicle_types: ["CAR", "SUV", "PICKUP", "VAN", "MINIVAN", "MOTORCYCLE"],
  max_vehicles: 5,
  ship_date_max_days: 90,
  duplicate_policy: "flag",
};

/** Terms with the rules a broker prices by (money/terms.ts): every bench lead is priced and posted. */
const TYPICAL_TERMS = {
  default_price_cents: 1500,
  extra_vehicle_cents: 500,
  price_rules: [
    { when: { sub_id: "fb-", overseas_type: "FOREIGN" }, price_cents: 2500 },
    { when: { origin_states: ["CA", "NY"], min_vehicles: 2 }, price_cents: 2000 },
    { when: { destination_states: ["FL", "TX"], vehicle_run: true }, price_cents: 1800 },
  ],
  settlement_days: 7,
};

async function createTenants(
  service: Service,
  count: number,
  extra: { readonly namePrefix?: string; readonly webhookUrl?: string } = {},
): Promise<Tenant[]> {
  const admin = { authorization: `Bearer ${await adminToken()}`, "content-type": "application/json" };
  const tenants: Tenant[] = [];
  for (let i = 1; i <= count; i++) {
    const created = await fetch(`${service.url}/api/v1/lead_providers/create/`, {
      method: "POST",
      headers: admin,
      body: JSON.stringify({
        name: `${extra.namePrefix ?? "Bench provider"} ${i}`,
        ...(extra.webhookUrl !== undefined && { webhook_url: extra.webhookUrl }),
        contact_email: `bench${i}@provider.example`,
        // The maxima: rate limiting must not cut the load.
        rate_limit_per_minute: 100_000,
        rate_limit_per_day: 10_000_000,
      }),
    });
    if (created.status !== 201) throw new Error(`create provider: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: number };
    const issued = await fetch(`${service.url}/api/v1/lead_providers/${id}/generate_api_key/`, {
      method: "POST",
      headers: admin,
    });
    if (issued.status !== 201) throw new Error(`generate key: ${issued.status} ${await issued.text()}`);
    const rules = await fetch(`${service.url}/api/v1/lead_providers/${id}/intake_rules/`, {
      method: "PUT",
      headers: admin,
      body: JSON.stringify(TYPICAL_RULES),
    });
    if (rules.status !== 200) throw new Error(`intake rules: ${rules.status} ${await rules.text()}`);
    const terms = await fetch(`${service.url}/api/v1/lead_providers/${id}/terms/`, {
      method: "PUT",
      headers: admin,
      body: JSON.stringify(TYPICAL_TERMS),
    });
    if (terms.status !== 200) throw new Error(`terms: ${terms.status} ${await terms.text()}`);
    tenants.push({ id, key: ((await issued.json()) as { api_key: string }).api_key });
  }
  return tenants;
}

type Operation = "create" | "get";
type Transport = "REST" | "gRPC";

interface Workload {
  readonly tenants: readonly Tenant[];
  /** External ids readable by every tenant: `${prefix}1` … `${prefix}${count}`. */
  readonly targets: { prefix: string; count: number };
}

const runId = randomBytes(3).toString("hex");
let sequence = 0;
const newExternalId = () => `bench-${runId}-${++sequence}`;

/** Pre-encoded gRPC request messages: a fresh lead per CreateLead call, each seeded lead for GetLead. */
function grpcMessages(w: Workload, op: Operation, seconds: number): () => Uint8Array {
  if (op === "get") {
    const all = Array.from({ length: w.targets.count }, (_, i) =>
      toBinary(GetLeadRequestSchema, create(GetLeadRequestSchema, { externalId: `${w.targets.prefix}${i + 1}` })),
    );
    return () => all[Math.floor(Math.random() * all.length)] as Uint8Array;
  }
  // More than the fastest run could send (an external id is accepted once); made before the clock starts.
  const bodies = Array.from({ length: Math.max(5000, seconds * 5000) }, () =>
    toBinary(CreateLeadRequestSchema, create(CreateLeadRequestSchema, grpcRequest(makeLead(newExternalId())))),
  );
  let next = 0;
  return () => {
    if (next === bodies.length) next = 0; // would repeat an id: counted as errors, never silently
    return bodies[next++] as Uint8Array;
  };
}

const GRPC_PATHS: Record<Operation, string> = {
  create: "/leadprovider.v1.PublicLeadService/CreateLead",
  get: "/leadprovider.v1.PublicLeadService/GetLead",
};

/** REST through wrk, gRPC through pre-encoded h2c frames: generators far cheaper than the server. */
function load(
  target: { readonly url: string },
  w: Workload,
  transport: Transport,
  op: Operation,
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  if (transport === "REST") {
    return runWrk({
      url: target.url,
      connections,
      seconds,
      op,
      keys: w.tenants.map((t) => t.key),
      targets: w.targets,
      runId: `${runId}-${++sequence}`,
    });
  }
  return runH2cLoad({
    url: target.url,
    path: GRPC_PATHS[op],
    concurrency: connections,
    callsPerConnection: config.grpcStreams,
    seconds,
    authorizations: w.tenants.map((t) => `Bearer ${t.key}`),
    nextMessage: grpcMessages(w, op, seconds),
  });
}

interface Measured {
  readonly result: LoadResult;
  readonly rssMb: number;
  /** The highest RSS during this scenario (VmHWM, reset before it). */
  readonly peakMb: number;
  readonly cpuMsPerRequest: number;
  readonly cpu: CpuShares;
}

/** One measured scenario: the load, and the server's RSS, peak RSS and CPU time per request. */
async function measure(
  db: BenchDatabase,
  service: Service,
  w: Workload,
  transport: Transport,
  op: Operation,
  connections: number,
): Promise<Measured> {
  // The generator's inputs are made before the server's clock starts.
  service.resetPeak();
  const cpu0 = service.cpuSeconds();
  const watch = watchCpu(service.pid, db.name);
  const result = await load(service, w, transport, op, connections, config.seconds);
  const cpu = watch.stop();
  const cpuMsPerRequest = (1000 * (service.cpuSeconds() - cpu0)) / Math.max(1, result.ok);
  const { rssMb, peakMb } = service.memory();
  return { result, rssMb, peakMb, cpuMsPerRequest, cpu };
}

const shares = (c: CpuShares) =>
  `CPU % service ${c.service.toFixed(0)}, postgres ${c.postgres.toFixed(0)}, load generator ${c.loadGenerator.toFixed(0)}, other ${c.other.toFixed(0)}`;
const describe = (m: Measured) =>
  `${summary(m.result)}, RSS ${m.rssMb.toFixed(0)} MiB, ${m.cpuMsPerRequest.toFixed(2)} CPU ms/req; ${shares(m.cpu)}`;

const OPERATIONS: readonly { transport: Transport; op: Operation }[] = [
  { transport: "REST", op: "create" },
  { transport: "gRPC", op: "create" },
  { transport: "REST", op: "get" },
  { transport: "gRPC", op: "get" },
];
const label = (transport: Transport, op: Operation) => `${transport} ${op}`;

// ---------------------------------------------------------------------------------------------
// Phases

const PGBENCH_LABELS: Record<ScriptName, string> = {
  insert: "pgbench INSERT (baseline)",
  insertAsService: "pgbench, the service's create SQL",
  select: "pgbench SELECT (baseline)",
  selectAsService: "pgbench, the service's get SQL",
};

async function checkpoint(db: BenchDatabase): Promise<void> {
  // Every write scenario starts right after a checkpoint, so none of them pays for a timed one.
  await db.query("checkpoint").catch(() => {});
}

async function pgbenchPhase(db: BenchDatabase, tenants: readonly Tenant[]) {
  const results = new Map<string, { result: LoadResult; cpu: CpuShares }>();
  const ids = tenants.map((t) => t.id);
  const defines = { pmin: Math.min(...ids), pmax: Math.max(...ids), nseed: config.seedPerProvider };
  if (defines.pmax - defines.pmin + 1 !== ids.length) throw new Error("bench provider ids are not contiguous");
  await db.query(
    `create sequence if not exists pgbench_lead_ids start with ${(BigInt(Date.now() - 1_704_067_200_000) << 12n) + (1n << 40n)}`,
  );
  for (const clients of config.connections) {
    for (const script of ["insert", "insertAsService", "select", "selectAsService"] as const) {
      if (script.startsWith("insert")) await checkpoint(db);
      const watch = watchCpu(undefined, db.name);
      const result = await runPgbench({ url: db.url, script, clients, seconds: config.seconds, defines });
      const cpu = watch.stop();
      log(`${PGBENCH_LABELS[script]} ×${clients}: ${summary(result)}; ${shares(cpu)}`);
      results.set(`${script}/${clients}`, { result, cpu });
    }
  }
  return results;
}

/**
 * The service and the floor, one scenario after the other for each operation (floor REST, service
 * REST, service gRPC), so a drift of the shared machine touches all three alike.
 */
async function servicePhase(
  db: BenchDatabase,
  service: Service,
  floor: Service,
  w: Workload,
  connections: readonly number[],
) {
  const results = new Map<string, Measured>();
  for (const { transport, op } of OPERATIONS) {
    await load(service, w, transport, op, maxConnections, config.warmup);
  }
  for (const op of ["create", "get"] as const) await load(floor, w, "REST", op, maxConnections, config.warmup);
  log(`warmed up (${config.warmup} s per operation)`);
  const rounds = new Map<string, Measured[]>();
  for (let round = 1; round <= config.rounds; round++) {
    for (const conns of connections) {
      for (const op of ["create", "get"] as const) {
        const runs = [
          { key: `floor/${op}/${conns}`, name: `floor REST ${op}`, target: floor, transport: "REST" },
          { key: `REST/${op}/${conns}`, name: label("REST", op), target: service, transport: "REST" },
          { key: `gRPC/${op}/${conns}`, name: label("gRPC", op), target: service, transport: "gRPC" },
        ] as const;
        for (const r of runs) {
          if (op === "create") await checkpoint(db);
          await sleep(500);
          const m = await measure(db, r.target, w, r.transport, op, conns);
          log(`round ${round}: ${r.name} ×${conns}: ${describe(m)}`);
          rounds.set(r.key, [...(rounds.get(r.key) ?? []), m]);
        }
      }
    }
  }
  for (const [key, ms] of rounds) results.set(key, medianOf(ms));
  return results;
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};

/**
 * One scenario's rounds as one row: the round of median throughput (its latencies and CPU
 * shares), the median CPU time per request, the highest peak RSS and every error of every round.
 */
function medianOf(ms: readonly Measured[]): Measured {
  const mid = ms.find((m) => m.result.rps === median(ms.map((x) => x.result.rps))) as Measured;
  const errors = ms.reduce((n, m) => n + m.result.errors, 0);
  return {
    ...mid,
    result: { ...mid.result, errors, errorSamples: ms.flatMap((m) => m.result.errorSamples) },
    cpuMsPerRequest: median(ms.map((m) => m.cpuMsPerRequest)),
    peakMb: Math.max(...ms.map((m) => m.peakMb)),
  };
}

async function clusterPhase(db: BenchDatabase, single: Service, w: Workload, env: Record<string, string>) {
  const cluster = await startService({
    env: { ...env, WEB_CONCURRENCY: "2", REDIS_URL: config.redisUrl, REDIS_NAMESPACE: `bench-${runId}` },
  });
  try {
    // /healthz answers once the first worker listens; give the second one time to start too.
    const deadline = performance.now() + 30_000;
    while (cluster.pids().length < 3 && performance.now() < deadline) await sleep(100);
    await sleep(3000);
    await load(cluster, w, "REST", "get", maxConnections, config.warmup);
    const ones: Measured[] = [];
    const twos: Measured[] = [];
    for (let round = 1; round <= config.rounds; round++) {
      await sleep(500);
      ones.push(await measure(db, single, w, "REST", "get", maxConnections));
      log(`round ${round}: REST get ×${maxConnections}, one process: ${describe(ones.at(-1) as Measured)}`);
      await sleep(500);
      twos.push(await measure(db, cluster, w, "REST", "get", maxConnections));
      log(`round ${round}: REST get ×${maxConnections}, WEB_CONCURRENCY=2: ${describe(twos.at(-1) as Measured)}`);
    }
    const [one, two] = [medianOf(ones), medianOf(twos)];
    return { one, two };
  } finally {
    await cluster.stop();
  }
}

/** One A/B comparison: the median round's figures of each side and the ratios (on ÷ off) of every round. */
interface Compared {
  readonly on: Measured;
  readonly off: Measured;
  readonly ratio: number;
  readonly ratios: number[];
}

/**
 * Two services started fresh for the comparison, the same but for `offEnv`, on the same database
 * and providers, measured in turn for at least five rounds: the first side alternates between
 * rounds (off, on, then on, off, …), so neither side always runs on a warmer database, and neither
 * carries the heap and history of the phases before. The median round's ratio, with every round's.
 */
async function compareServices(
  db: BenchDatabase,
  w: Workload,
  env: Record<string, string>,
  offEnv: Record<string, string>,
  ops: readonly Operation[],
  what: string,
): Promise<Record<string, Compared>> {
  const off = await startService({ env: { ...env, ...offEnv } });
  const on = await startService({ env });
  try {
    const result: Record<string, Compared> = {};
    for (const op of ops) {
      await load(off, w, "REST", op, maxConnections, config.warmup);
      await load(on, w, "REST", op, maxConnections, config.warmup);
      const ons: Measured[] = [];
      const offs: Measured[] = [];
      const ratios: number[] = [];
      for (let round = 1; round <= Math.max(5, config.rounds); round++) {
        const sides = round % 2 === 1 ? (["off", "on"] as const) : (["on", "off"] as const);
        for (const side of sides) {
          await checkpoint(db);
          await sleep(500);
          const m = await measure(db, side === "on" ? on : off, w, "REST", op, maxConnections);
          (side === "on" ? ons : offs).push(m);
          log(`round ${round}: REST ${op} ×${maxConnections}, ${what} ${side}: ${describe(m)}`);
        }
        ratios.push((ons.at(-1) as Measured).result.rps / (offs.at(-1) as Measured).result.rps);
      }
      result[op] = { on: medianOf(ons), off: medianOf(offs), ratio: median(ratios), ratios };
    }
    return result;
  } finally {
    await off.stop();
    await on.stop();
  }
}

/**
 * REST create and REST get with the request log on (the service as it runs everywhere) against
 * the same service with REQUEST_LOG_ENABLED=false (compareServices): what the log costs each
 * operation.
 */
async function requestLogPhase(db: BenchDatabase, w: Workload, env: Record<string, string>) {
  const r = await compareServices(db, w, env, { REQUEST_LOG_ENABLED: "false" }, ["create", "get"], "request log");
  const [{ n: entries } = { n: "0" }] = await db.query<{ n: string }>("select count(*) as n from request_log");
  log(`request log: ${Number(entries).toLocaleString("en-US")} entries written in the run`);
  return { create: r.create as Compared, get: r.get as Compared, entries: Number(entries) };
}

/**
 * REST create with pricing on (the service as it runs: each lead priced by its provider's terms
 * and its purchase posted in the same statement) against the same service with
 * LEDGER_ENABLED=false (compareServices).
 */
async function moneyPhase(db: BenchDatabase, w: Workload, env: Record<string, string>) {
  const r = await compareServices(db, w, env, { LEDGER_ENABLED: "false" }, ["create"], "pricing");
  const [{ n: purchases } = { n: "0" }] = await db.query<{ n: string }>(
    "select count(*) as n from ledger_transactions where type = 'lead_purchase'",
  );
  log(`pricing: ${Number(purchases).toLocaleString("en-US")} purchases posted in the run`);
  return { ...(r.create as Compared), purchases: Number(purchases) };
}

async function scalePhase(db: BenchDatabase, service: Service, w: Workload) {
  const extra = await seedProviders(db, config.scaleProviders - w.tenants.length);
  const providers = [...w.tenants.map((t) => t.id), ...extra];
  const perProvider = Math.floor(config.scaleLeads / providers.length);
  const t0 = performance.now();
  log(
    `scale: seeding ${(perProvider * providers.length).toLocaleString("en-US")} leads across ${providers.length} providers…`,
  );
  const seeded = await seedLeads(db, providers, perProvider, "scale-");
  await vacuumAnalyze(db);
  const seedSeconds = (performance.now() - t0) / 1000;
  const [counts] = await db.query<{ leads: string; vehicles: string; history: string; size: string }>(
    `select (select count(*) from leads) as leads, (select count(*) from vehicles) as vehicles,
       (select count(*) from lead_state_history) as history,
       pg_size_pretty(pg_database_size(current_database())) as size`,
  );
  log(
    `scale: seeded ${seeded.toLocaleString("en-US")} leads in ${seedSeconds.toFixed(0)} s; now ${JSON.stringify(counts)}`,
  );
  const big: Workload = { tenants: w.tenants, targets: { prefix: "scale-", count: perProvider } };
  // Warm up on the big database too: pool connections may have idled out while seeding.
  await load(service, big, "REST", "get", maxConnections, config.warmup);
  await load(service, big, "REST", "create", maxConnections, config.warmup);
  const results = new Map<Operation, Measured>();
  for (const op of ["get", "create"] as const) {
    if (op === "create") await checkpoint(db);
    await sleep(500);
    const m = await measure(db, service, big, "REST", op, maxConnections);
    log(`scale: REST ${op} ×${maxConnections}: ${describe(m)}`);
    results.set(op, m);
  }
  return { results, seeded, seedSeconds, counts };
}

/**
 * Creating leads with a webhook configured against creating them without, in one service and one
 * run. The service runs with NODE_ENV=development here, the one difference from the other phases:
 * production refuses to send to the loopback receiver.
 */
async function webhookPhase(db: BenchDatabase) {
  const receiver = await startBenchReceiver();
  const service = await startService({
    env: { ...secrets, DATABASE_URL: db.url, DATABASE_POOL_SIZE: String(config.poolSize), NODE_ENV: "development" },
  });
  try {
    const plain: Workload = {
      tenants: await createTenants(service, config.providers, { namePrefix: "Unhooked provider" }),
      targets: { prefix: "seed-", count: 0 },
    };
    const hooked: Workload = {
      tenants: await createTenants(service, config.providers, {
        namePrefix: "Hooked provider",
        webhookUrl: receiver.url,
      }),
      targets: { prefix: "seed-", count: 0 },
    };
    await load(service, plain, "REST", "create", maxConnections, config.warmup);
    await load(service, hooked, "REST", "create", maxConnections, config.warmup);
    const drain = async (expected: number) => {
      const t0 = performance.now();
      while ((await receiver.count()) < expected && performance.now() - t0 < 300_000) await sleep(100);
      return (performance.now() - t0) / 1000;
    };
    await drain(await pendingTotal(db));
    await checkpoint(db);
    await sleep(500);
    const without = await measure(db, service, plain, "REST", "create", maxConnections);
    log(`webhooks: REST create without a webhook ×${maxConnections}: ${describe(without)}`);
    await checkpoint(db);
    await sleep(500);
    const before = await receiver.count();
    const withHook = await measure(db, service, hooked, "REST", "create", maxConnections);
    const duringLoad = (await receiver.count()) - before;
    const drainSeconds = await drain(before + withHook.result.ok);
    const delivered = (await receiver.count()) - before;
    log(
      `webhooks: REST create with a webhook ×${maxConnections}: ${describe(withHook)}; ` +
        `${duringLoad} of ${withHook.result.ok} delivered during the load, all ${delivered} ${drainSeconds.toFixed(1)} s after it`,
    );
    return { without, withHook, duringLoad, delivered, drainSeconds };
  } finally {
    await service.stop();
    await receiver.stop();
  }
}

/** Deliveries the receiver should have seen so far (every delivered one). */
async function pendingTotal(db: BenchDatabase): Promise<number> {
  const [row] = await db.query<{ n: string }>("select count(*) as n from webhook_deliveries");
  return Number(row?.n ?? 0);
}

async function profilePhase(db: BenchDatabase, w: Workload) {
  const dir = mkdtempSync(join(tmpdir(), "lp-cpuprof-"));
  const keep = join(dirname(config.output), "profiles");
  mkdirSync(keep, { recursive: true });
  const summaries: {
    name: string;
    file: string;
    summary: ProfileSummary;
    result: LoadResult;
    cpu: { user: number; system: number; seconds: number };
  }[] = [];
  try {
    for (const { transport, op } of OPERATIONS) {
      const name = `${transport.toLowerCase()}-${op}`;
      const profDir = join(dir, name);
      const service = await startService({
        env: { ...secrets, DATABASE_URL: db.url, DATABASE_POOL_SIZE: String(config.poolSize) },
        nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profDir}`],
      });
      try {
        await load(service, w, transport, op, maxConnections, 2); // JIT warm-up, left out of the summary
        const cpu0 = procCpu(service.pid);
        const from = monotonicUs();
        const result = await load(service, w, transport, op, maxConnections, config.profileSeconds);
        const to = monotonicUs();
        const cpu1 = procCpu(service.pid);
        const cpu = { user: cpu1.user - cpu0.user, system: cpu1.system - cpu0.system, seconds: (to - from) / 1e6 };
        log(`profile ${label(transport, op)} ×${maxConnections}: ${summary(result)}`);
        await service.stop();
        const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
        if (!file) throw new Error(`no .cpuprofile written for ${name}:\n${service.tail()}`);
        const kept = join(keep, `${name}.cpuprofile`);
        copyFileSync(join(profDir, file), kept);
        summaries.push({
          name: label(transport, op),
          file: kept,
          summary: summarizeFile(kept, 15, { from, to }),
          result,
          cpu,
        });
      } finally {
        await service.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return summaries;
}

async function startupPhase() {
  const dataDir = mkdtempSync(join(tmpdir(), "lp-bench-pglite-"));
  try {
    const options = { env: { ...secrets, DATA_DIR: dataDir, LOG_LEVEL: "info" } };
    const first = await startService(options); // creates the database and runs the migrations
    await first.stop();
    const runs: { readyMs: number; startupMs: number | undefined; rssMb: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const s = await startService(options);
      await sleep(200);
      runs.push({ readyMs: s.readyMs, startupMs: s.startupMs(), rssMb: s.memory().rssMb });
      await s.stop();
    }
    const sorted = [...runs].sort((a, b) => a.readyMs - b.readyMs);
    const median = sorted[1] as (typeof runs)[number];
    log(
      `start-up on an existing embedded database: ready in ${runs.map((r) => r.readyMs.toFixed(0)).join(", ")} ms ` +
        `(startup_ms ${runs.map((r) => r.startupMs).join(", ")}), RSS ${median.rssMb.toFixed(0)} MiB`,
    );
    return { firstMs: first.readyMs, runs, median };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function machineInfo(db: BenchDatabase) {
  const pgbenchVersion = (await run(findPgbench(), ["--version"])).stdout.trim();
  return {
    date: new Date().toISOString(),
    cpu: `${cpus()[0]?.model ?? "unknown"} × ${availableParallelism()}`,
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    loadBefore: loadavg()
      .map((l) => l.toFixed(2))
      .join(" "),
    node: process.version,
    postgres: await serverVersion(db),
    pgbench: pgbenchVersion,
  };
}

async function main(): Promise<void> {
  let db: BenchDatabase | undefined;
  let service: Service | undefined;
  let floor: Service | undefined;
  for (const tool of ["wrk"]) {
    if (!onPath(tool)) throw new Error(`${tool} not found: it is Debian's package ${tool} (apt-get install ${tool})`);
  }
  onInterrupt(async () => {
    await floor?.stop();
    await service?.stop();
    await db?.drop();
  });
  try {
    db = await createBenchDatabase(config.adminUrl);
    log(`database ${db.name} created`);
    const machine = await machineInfo(db);
    log(`${machine.cpu}, Node ${machine.node}, Postgres ${machine.postgres}, load ${machine.loadBefore}`);

    const serviceEnv = { ...secrets, DATABASE_URL: db.url, DATABASE_POOL_SIZE: String(config.poolSize) };
    warmCompileCache(process.env.BENCH_SERVICE_DIR ?? ROOT);
    service = await startService({ env: serviceEnv });
    floor = await startService({ env: serviceEnv, script: "bench/floor.ts" });
    log(`service ready in ${service.readyMs.toFixed(0)} ms (pid ${service.pid}, ${service.url})`);
    const running = service;
    const tenants = await createTenants(running, config.providers).catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nservice output:\n${running.tail()}`);
    });
    await seedLeads(
      db,
      tenants.map((t) => t.id),
      config.seedPerProvider,
      "seed-",
    );
    await vacuumAnalyze(db);
    const workload: Workload = { tenants, targets: { prefix: "seed-", count: config.seedPerProvider } };
    log(`${tenants.length} providers, ${tenants.length * config.seedPerProvider} leads to read`);

    const baseline = await pgbenchPhase(db, tenants);
    // pgbench's inserts must not make the "small" database big: the scale check compares with it.
    const [{ n: removed } = { n: "0" }] = await db.query<{ n: string }>(
      `with ev as (delete from lead_events where lead_id in (select id from leads where external_id like 'pgb-%')),
        d as (delete from leads where external_id like 'pgb-%' returning 1) select count(*) as n from d`,
    );
    await vacuumAnalyze(db);
    log(`removed the ${Number(removed).toLocaleString("en-US")} leads pgbench inserted`);
    const measured = await servicePhase(db, service, floor, workload, config.connections);
    await floor.stop();
    floor = undefined;
    const clustered = config.skipCluster ? undefined : await clusterPhase(db, service, workload, serviceEnv);
    const logged = config.skipRequestLog ? undefined : await requestLogPhase(db, workload, serviceEnv);
    const priced = config.skipMoney ? undefined : await moneyPhase(db, workload, serviceEnv);
    const scale = config.skipScale ? undefined : await scalePhase(db, service, workload);
    const servicePeaks = [...measured.entries()].filter(([k]) => !k.startsWith("floor/")).map(([, m]) => m.peakMb);
    if (clustered) servicePeaks.push(clustered.one.peakMb, clustered.two.peakMb);
    if (logged) servicePeaks.push(logged.create.on.peakMb, logged.get.on.peakMb);
    if (priced) servicePeaks.push(priced.on.peakMb);
    const peakMb = Math.max(...servicePeaks, service.memory().peakMb);
    await service.stop();
    service = undefined;

    const webhooks = config.skipWebhooks ? undefined : await webhookPhase(db);
    const profiles = config.skipProfile ? [] : await profilePhase(db, workload);
    const startup = await startupPhase();

    // ---- report
    const rows: Row[] = [];
    const pgb = (name: string) => baseline.get(name) as { result: LoadResult; cpu: CpuShares };
    for (const conns of config.connections) {
      for (const op of ["create", "get"] as const) {
        const baseName = op === "create" ? "insert" : "select";
        const base = pgb(`${baseName}/${conns}`);
        rows.push({ label: PGBENCH_LABELS[baseName], connections: conns, ...base });
        const asService = `${baseName}AsService` as const;
        rows.push({
          label: PGBENCH_LABELS[asService],
          connections: conns,
          ...pgb(`${asService}/${conns}`),
          baseline: base.result,
        });
        for (const transport of ["REST", "gRPC"] as const) {
          const m = measured.get(`${transport}/${op}/${conns}`);
          if (m) rows.push({ label: label(transport, op), connections: conns, ...m, baseline: base.result });
        }
      }
    }

    const targets: Target[] = [];
    const get = (t: Transport, op: Operation, c: number) => measured.get(`${t}/${op}/${c}`)?.result as LoadResult;
    const floorRows: FloorRow[] = [];
    for (const c of config.connections) {
      for (const op of ["create", "get"] as const) {
        const f = measured.get(`floor/${op}/${c}`) as Measured;
        floorRows.push({ label: `bare Node floor, REST ${op}`, connections: c, ...f });
        for (const t of ["REST", "gRPC"] as const) {
          const m = measured.get(`${t}/${op}/${c}`) as Measured;
          floorRows.push({ label: `service, ${label(t, op)}`, connections: c, ...m, floor: f });
        }
      }
    }
    if (logged) {
      for (const op of ["create", "get"] as const) {
        const f = measured.get(`floor/${op}/${maxConnections}`) as Measured;
        floorRows.push(
          { label: `service, REST ${op}, request log off`, connections: maxConnections, ...logged[op].off, floor: f },
          { label: `service, REST ${op}, request log on`, connections: maxConnections, ...logged[op].on, floor: f },
        );
      }
    }
    if (priced) {
      const f = measured.get(`floor/create/${maxConnections}`) as Measured;
      floorRows.push(
        { label: "service, REST create, pricing off", connections: maxConnections, ...priced.off, floor: f },
        { label: "service, REST create, pricing on", connections: maxConnections, ...priced.on, floor: f },
      );
    }
    if (clustered) {
      const f = measured.get(`floor/get/${maxConnections}`) as Measured;
      floorRows.push(
        { label: "service, REST get, one process (again)", connections: maxConnections, ...clustered.one, floor: f },
        { label: "service, REST get, WEB_CONCURRENCY=2", connections: maxConnections, ...clustered.two, floor: f },
      );
    }
    const floorOf = (op: Operation) => measured.get(`floor/${op}/${maxConnections}`) as Measured;
    for (const [op, min] of [
      ["create", 0.9],
      ["get", 0.8],
    ] as const) {
      const r = get("REST", op, maxConnections);
      const f = floorOf(op).result;
      targets.push({
        name: `REST ${op} ≥ ${min} × the bare-Node floor, ${maxConnections} conns`,
        measured: `${fmt.rps(r.rps)} vs ${fmt.rps(f.rps)} req/s = ${fmt.ratio(r.rps / f.rps)}`,
        pass: r.rps >= min * f.rps,
      });
    }
    for (const { transport, op } of OPERATIONS) {
      const m = measured.get(`${transport}/${op}/${maxConnections}`) as Measured;
      const f = floorOf(op);
      targets.push({
        name: `service CPU per request ≤ 1.25 × the floor's: ${label(transport, op)}, ${maxConnections} conns`,
        measured: `${m.cpuMsPerRequest.toFixed(3)} vs ${f.cpuMsPerRequest.toFixed(3)} ms = ${fmt.ratio(m.cpuMsPerRequest / f.cpuMsPerRequest)}`,
        pass: m.cpuMsPerRequest <= 1.25 * f.cpuMsPerRequest,
      });
    }
    for (const c of config.connections) {
      const ins = pgb(`insert/${c}`).result;
      const sel = pgb(`select/${c}`).result;
      const rc = get("REST", "create", c);
      const rg = get("REST", "get", c);
      targets.push({
        name: `REST create ≥ 0.5 × pgbench INSERT, ${c} conns`,
        measured: `${fmt.rps(rc.rps)} vs ${fmt.rps(ins.rps)} tps = ${fmt.ratio(rc.rps / ins.rps)}`,
        pass: rc.rps >= 0.5 * ins.rps,
      });
      targets.push({
        name: `REST get ≥ 0.25 × pgbench SELECT, ${c} conns`,
        measured: `${fmt.rps(rg.rps)} vs ${fmt.rps(sel.rps)} tps = ${fmt.ratio(rg.rps / sel.rps)}`,
        pass: rg.rps >= 0.25 * sel.rps,
      });
      for (const op of ["create", "get"] as const) {
        const g = get("gRPC", op, c);
        const r = get("REST", op, c);
        targets.push({
          name: `gRPC ${op} ≥ REST ${op}, ${c} conns`,
          measured: `${fmt.rps(g.rps)} vs ${fmt.rps(r.rps)} req/s = ${fmt.ratio(g.rps / r.rps)}`,
          pass: g.rps >= r.rps,
        });
      }
    }
    for (const { transport, op } of OPERATIONS) {
      const r = get(transport, op, maxConnections);
      targets.push({
        name: `p99 < 25 ms at ${maxConnections} conns: ${label(transport, op)}`,
        measured: `${fmt.ms(r.p99)} ms`,
        pass: r.p99 < 25,
      });
    }
    if (webhooks) {
      const ratio = webhooks.withHook.result.rps / webhooks.without.result.rps;
      targets.push({
        name: `REST create with a webhook configured ≥ 0.9 × without, ${maxConnections} conns`,
        measured: `${fmt.rps(webhooks.withHook.result.rps)} vs ${fmt.rps(webhooks.without.result.rps)} req/s = ${fmt.ratio(ratio)}`,
        pass: ratio >= 0.9,
      });
      targets.push({
        name: "every webhook of the run delivered",
        measured: `${webhooks.delivered} deliveries for ${webhooks.withHook.result.ok} acknowledged creates, the last ${webhooks.drainSeconds.toFixed(1)} s after the load`,
        pass: webhooks.delivered >= webhooks.withHook.result.ok,
      });
    }
    const webhookErrors = webhooks ? webhooks.without.result.errors + webhooks.withHook.result.errors : 0;
    // The floor's own answers are not the service's.
    const allErrors = [...measured.entries()]
      .filter(([key]) => !key.startsWith("floor/"))
      .reduce((n, [, m]) => n + m.result.errors, webhookErrors);
    const scaleErrors =
      (scale ? [...scale.results.values()].reduce((n, m) => n + m.result.errors, 0) : 0) +
      (clustered ? clustered.one.result.errors + clustered.two.result.errors : 0) +
      (logged ? [logged.create, logged.get].reduce((n, m) => n + m.on.result.errors + m.off.result.errors, 0) : 0) +
      (priced ? priced.on.result.errors + priced.off.result.errors : 0);
    targets.push({
      name: "errors = 0 (every service scenario)",
      measured: String(allErrors + scaleErrors),
      pass: allErrors + scaleErrors === 0,
    });
    if (logged) {
      for (const [op, floor] of [
        ["create", 0.9],
        ["get", 0.95],
      ] as const) {
        const { on, off, ratio, ratios } = logged[op];
        const spread = `${fmt.ratio(Math.min(...ratios))}–${fmt.ratio(Math.max(...ratios))}`;
        const entries = op === "create" ? `; ${logged.entries.toLocaleString("en-US")} entries written` : "";
        targets.push({
          name: `REST ${op} with the request log on ≥ ${floor} × off, ${maxConnections} conns, median of ${ratios.length} rounds`,
          measured: `${fmt.ratio(ratio)} (rounds ${spread}; median rounds ${fmt.rps(on.result.rps)} vs ${fmt.rps(off.result.rps)} req/s${entries})`,
          pass: ratio >= floor,
        });
      }
    }
    if (priced) {
      const spread = `${fmt.ratio(Math.min(...priced.ratios))}–${fmt.ratio(Math.max(...priced.ratios))}`;
      targets.push({
        name: `REST create with pricing on ≥ 0.85 × pricing off (LEDGER_ENABLED=false), ${maxConnections} conns, median of ${priced.ratios.length} rounds`,
        measured: `${fmt.ratio(priced.ratio)} (rounds ${spread}; median rounds ${fmt.rps(priced.on.result.rps)} vs ${fmt.rps(priced.off.result.rps)} req/s; ${priced.purchases.toLocaleString("en-US")} purchases posted)`,
        pass: priced.ratio >= 0.85,
      });
    }
    if (clustered) {
      const ratio = clustered.two.result.rps / clustered.one.result.rps;
      targets.push({
        name: `WEB_CONCURRENCY=2 REST get ≥ 1.3 × one process, ${maxConnections} conns`,
        measured: `${fmt.rps(clustered.two.result.rps)} vs ${fmt.rps(clustered.one.result.rps)} req/s = ${fmt.ratio(ratio)}`,
        pass: ratio >= 1.3,
      });
    }
    targets.push({
      name: "service peak RSS ≤ 200 MiB (VmHWM, every scenario)",
      measured: `${peakMb.toFixed(0)} MiB`,
      pass: peakMb <= 200,
    });
    targets.push({
      name: "start-up on an existing embedded database < 1.5 s (spawn → /healthz 200, median of 3)",
      measured: `${(startup.median.readyMs / 1000).toFixed(2)} s (startup_ms ${startup.median.startupMs ?? "?"})`,
      pass: startup.median.readyMs < 1500,
    });
    if (scale) {
      for (const op of ["get", "create"] as const) {
        const empty = get("REST", op, maxConnections);
        const big = scale.results.get(op)?.result as LoadResult;
        targets.push({
          name: `scale: REST ${op} p99 with 1M leads ≤ 1.5 × empty, ${maxConnections} conns`,
          measured: `${fmt.ms(big.p99)} vs ${fmt.ms(empty.p99)} ms = ${fmt.ratio(big.p99 / empty.p99)}`,
          pass: big.p99 <= 1.5 * empty.p99,
        });
      }
    }

    const failed = targets.filter((t) => !t.pass);
    const md = [
      "# Benchmark results",
      "",
      `Written by \`make bench\` (bench/run.ts) on ${machine.date}.`,
      "",
      `- Machine: ${machine.cpu}, ${machine.memory} RAM; load average before the run: ${machine.loadBefore}`,
      `- Node ${machine.node}; PostgreSQL ${machine.postgres} on the same machine; ${machine.pgbench}`,
      `- ${config.seconds} s per scenario after a ${config.warmup} s warm-up per operation; service with` +
        ` NODE_ENV=production, LOG_LEVEL=warn, DATABASE_POOL_SIZE=${config.poolSize}, in-process rate limits` +
        ` (${config.providers} providers at 100,000/min); REST load: wrk, keep-alive HTTP/1.1 connections;` +
        ` gRPC load: pre-encoded h2c frames (bench/lib/h2c-load.ts), ${config.grpcStreams}` +
        " concurrent calls per HTTP/2 connection; the load generators run on the same 2 cores.",
      "- pgbench: `-M prepared -j 2`, same client counts; ratios compare each service figure with the pgbench" +
        ' baseline at the same count (create ↔ INSERT, get ↔ SELECT). The "service\'s SQL" rows run the exact' +
        " statements the service sends (create: the one lead+vehicles+history statement; get: the lead with" +
        " its vehicles and history as JSON).",
      "",
      "## The service against the bare-Node floor",
      "",
      "The floor (bench/floor.ts) is a plain `node:http` + `pg` server doing exactly the service's database" +
        " work per request: one API-key SELECT (the service's statement; the service caches it for 5 s), the" +
        " service's own lead statement as a named prepared statement, JSON in and out, nothing else. It runs" +
        " beside the service on the same database; each operation is measured floor, service REST, service" +
        " gRPC in turn. `÷ floor` is the service's req/s over the floor's for the same operation (gRPC rows too);" +
        " `÷ floor's` is CPU time per request (user + system, all threads) over the floor's. Peak RSS is VmHWM," +
        " reset before each scenario. REST load: wrk (2 threads, keep-alive HTTP/1.1, Lua: random key and lead," +
        " a fresh external id per create); gRPC load: bench/lib/h2c-load.ts, pre-encoded HTTP/2 frames over h2c," +
        ` ${config.grpcStreams} concurrent calls per connection, a distinct pre-encoded CreateLead body per call.`,
      "",
      floorTable(floorRows),
      "",
      "## Throughput and latency",
      "",
      resultsTable(rows),
      "",
      "## Targets",
      "",
      targetsTable(targets),
      "",
      failed.length === 0 ? "All targets met." : `${failed.length} of ${targets.length} targets not met.`,
      "",
    ];
    if (scale) {
      const c = scale.counts;
      md.push(
        "## Scale check",
        "",
        `Seeded ${scale.seeded.toLocaleString("en-US")} leads across ${config.scaleProviders} providers in SQL` +
          ` (${scale.seedSeconds.toFixed(0)} s incl. VACUUM ANALYZE); then ${c?.leads} leads, ${c?.vehicles} vehicles,` +
          ` ${c?.history} history rows, database ${c?.size}. GETs read random leads of the bench providers spread` +
          " over the whole table.",
        "",
        resultsTable(
          (["get", "create"] as const).flatMap((op): Row[] => {
            const empty = measured.get(`REST/${op}/${maxConnections}`);
            const big = scale.results.get(op);
            if (!empty || !big) return [];
            return [
              { label: `REST ${op}, small database`, connections: maxConnections, ...empty },
              { label: `REST ${op}, 1M leads`, connections: maxConnections, ...big, baseline: empty.result },
            ];
          }),
          "small db",
        ),
        "",
      );
    }
    if (webhooks) {
      md.push(
        "## Webhooks",
        "",
        "REST create at the highest connection count, in one service started with NODE_ENV=development (so it" +
          " may send to the loopback receiver, a separate process answering 204), first by providers without a" +
          " webhook_url, then by providers whose webhook_url is the receiver: each lead then also queues a" +
          ` delivery and the service's workers sign and POST it. ${webhooks.duringLoad} of the` +
          ` ${webhooks.withHook.result.ok} deliveries arrived during the load; all ${webhooks.delivered} had` +
          ` arrived ${webhooks.drainSeconds.toFixed(1)} s after it ended.`,
        "",
        resultsTable(
          [
            { label: "REST create, no webhook", connections: maxConnections, ...webhooks.without },
            {
              label: "REST create, webhook configured",
              connections: maxConnections,
              ...webhooks.withHook,
              baseline: webhooks.without.result,
            },
          ],
          "no webhook",
        ),
        "",
      );
    }
    md.push(
      "## Start-up on an existing embedded database (PGlite)",
      "",
      `First start (creates and migrates): ${startup.firstMs.toFixed(0)} ms. Restarts, spawn → /healthz 200: ` +
        `${startup.runs.map((r) => `${r.readyMs.toFixed(0)} ms`).join(", ")}; the service's own \`startup_ms\`: ` +
        `${startup.runs.map((r) => r.startupMs ?? "?").join(", ")}; RSS after start ${startup.median.rssMb.toFixed(0)} MiB.`,
      "",
    );
    if (profiles.length > 0) {
      md.push(
        "## CPU profile of the service",
        "",
        `\`node --cpu-prof\`, one service process per operation, ${maxConnections} connections; only the samples of` +
          ` the ${config.profileSeconds} s load after a 2 s warm-up are counted (start-up and JIT warm-up are left out);` +
          " whole profiles kept in bench/results/profiles/ (git-ignored). Self time: time spent in the function" +
          ' itself; "(native)" groups C++ functions called from JS. V8 samples the main thread\'s wall-clock' +
          " time, so a native frame such as `writev` (a socket write to a client or to Postgres) also holds the" +
          " time the thread waits for a core again after waking the reader on these 2 shared cores: that is why" +
          " it is large while the service's system CPU time (below each title) is small.",
        "",
      );
      for (const p of profiles) {
        const title = `${p.name} (${fmt.rps(p.result.rps)} req/s while profiled)`;
        const cpu =
          `Service CPU meanwhile (/proc, all threads): ${p.cpu.user.toFixed(1)} s user + ${p.cpu.system.toFixed(1)} s` +
          ` system in ${p.cpu.seconds.toFixed(1)} s.`;
        md.push(profileSection(title, p.summary, 15, cpu), "");
      }
    }
    const text = md.join("\n");
    mkdirSync(dirname(config.output), { recursive: true });
    writeFileSync(config.output, text);
    writeFileSync(
      config.output.replace(/\.md$/, ".json"),
      `${JSON.stringify({ machine, config: { ...config, adminUrl: undefined, output: undefined }, rows, targets, scale, webhooks, startup }, null, 2)}\n`,
    );
    process.stdout.write(`\n${text}\n`);
    log(`written to ${config.output}`);
    if (config.strict && failed.length > 0) process.exitCode = 1;
  } finally {
    await floor?.stop();
    await service?.stop();
    await db?.drop().catch((err: unknown) => log(`could not drop the bench database: ${String(err)}`));
  }
}

main().catch((err: unknown) => {
  if (wasInterrupted()) return;
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
