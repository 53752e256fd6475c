/**
 * `make bench-scale` (issue 25): the service on Postgres seeded at a size (bench/scale/seed.ts),
 * then p50/p95 of the paths a user or a job hits, one request at a time, and the statuses seen.
 *
 *   node bench/scale/run.ts [small|plans|large] [--reuse]
 *
 * small ≈ 50k leads, plans ≈ 1M (what test/scale-plans.test.ts seeds), large ≈ 5M (about 15 to
 * 20 minutes to seed on a 2-core machine). The database is `lp_scale_<size>` on SCALE_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test); `--reuse` keeps an existing one. Writes
 * bench/results/scale-<size>.md. Not part of `make test`.
 */
import { createSecretKey } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import pg from "pg";
import { createApp } from "../../src/app.ts";
import { DEV_JWT_SECRET, loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { buildBigTableIndexes } from "../../src/db/indexes.ts";
import { migrateToLatest } from "../../src/db/migrator.ts";
import { rolledThrough } from "../../src/stats/stats.repository.ts";
import { makeLead, restBody } from "../lib/leads.ts";
import { Latencies } from "../lib/stats.ts";
import { SIZES, seed } from "./seed.ts";

const sizeName = (process.argv[2] ?? "small") as keyof typeof SIZES;
const size = SIZES[sizeName];
if (!size) throw new Error(`size must be one of ${Object.keys(SIZES).join(", ")}`);
const reuse = process.argv.includes("--reuse");
const adminUrl = process.env.SCALE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const dbName = `lp_scale_${sizeName}`;
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
const databaseUrl = url.toString();
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 40);
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

async function prepareDatabase(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = (await admin.query("select 1 from pg_database where datname = $1", [dbName])).rowCount === 1;
  if (exists && reuse) {
    await admin.end();
    log(`reusing ${dbName}`);
    return;
  }
  if (exists) await admin.query(`drop database ${dbName} with (force)`);
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const handle = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 2, timeoutMs: 60_000 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  log(`seeding ${dbName}: ${size.leads.toLocaleString("en-US")} leads`);
  await seed(databaseUrl, size, (step) => log(`  ${step}`));
  // The indexes after the data, as an upgrade on a big database builds them.
  const started = Date.now();
  const again = await openDatabase({ databaseUrl, dataDir: "memory://", poolSize: 2, timeoutMs: 600_000 });
  try {
    const built = await buildBigTableIndexes(again.db, again.kind);
    log(`  indexes built concurrently: ${built.join(", ")} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } finally {
    await again.close();
  }
}

interface Row {
  readonly path: string;
  readonly p50: number;
  readonly p95: number;
  readonly statuses: string;
}

async function main(): Promise<void> {
  await prepareDatabase();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_URL: databaseUrl,
    METRICS_TOKEN: "scale-metrics-token-0123456789",
    RATE_LIMIT_PER_MINUTE: "1000000",
    RATE_LIMIT_PER_DAY: "100000000",
    REQUEST_LOG_READS_PER_MINUTE: "100000",
  });
  const app = await createApp(config);
  const port = await app.listen();
  const base = `http://127.0.0.1:${port}`;
  const secret = createSecretKey(Buffer.from(config.jwt.secret ?? DEV_JWT_SECRET, "utf8"));
  const admin = await new SignJWT({ position: "ADMIN" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("scale-bench")
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(secret);
  const call = (method: string, path: string, auth?: string, body?: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...(auth && { authorization: `Bearer ${auth}` }),
        ...(body && { "content-type": "application/json" }),
        ...headers,
      },
      ...(body && { body }),
    });

  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const ids = (await pool.query<{ id: string }>("select id from providers order by id")).rows.map((r) => Number(r.id));
  const big = ids[0] as number;
  const small = ids.at(-1) as number;
  const key = async (id: number, mode: "live" | "test") => {
    const r = await call("POST", `/api/v1/lead_providers/${id}/generate_api_key/`, admin, JSON.stringify({ mode }));
    return ((await r.json()) as { api_key: string }).api_key;
  };
  const keys = { big: await key(big, "live"), bigTest: await key(big, "test"), small: await key(small, "live") };
  const someLead = (
    await pool.query<{ external_id: string }>(
      "select external_id from leads where provider_id = $1 and livemode order by id desc limit 1 offset 500",
      [big],
    )
  ).rows[0]?.external_id;
  const hourAgo = new Date(Date.now() - 3600_000).toISOString();
  const yearAgo = new Date(Date.now() - 365 * 86_400_000);
  const weekAfter = new Date(yearAgo.getTime() + 7 * 86_400_000);

  // The stats rollup as production has it: every past day rolled up (a fresh seed has none; the
  // job rolls up to 31 days a minute). Timed per run: a background job's batch.
  const rollStarted = performance.now();
  let rollRuns = 0;
  let slowestRoll = 0;
  for (;;) {
    const before = await rolledThrough(app.database.db);
    const t0 = performance.now();
    await app.statsRollup.runOnce();
    slowestRoll = Math.max(slowestRoll, performance.now() - t0);
    rollRuns += 1;
    if ((await rolledThrough(app.database.db)) === before) break;
  }
  const rollup = `stats rollup caught up in ${rollRuns} runs of up to 31 days, ${((performance.now() - rollStarted) / 1000).toFixed(1)} s; slowest run ${slowestRoll.toFixed(0)} ms`;
  log(rollup);

  // A new sandbox:quote test lead must reach QUOTE within seconds, even while retention is busy
  // deleting the seed's expired test leads (it starts with the service).
  const probe = makeLead(`scale-sandbox-${Date.now()}`);
  const probeStart = performance.now();
  const probeCreated = await call(
    "POST",
    "/api/v1/public/leads/",
    keys.bigTest,
    JSON.stringify({ ...JSON.parse(restBody(probe)), note_from_shipper: "sandbox:quote" }),
  );
  let movedAfter = Number.NaN;
  if (probeCreated.status === 201) {
    for (let i = 0; i < 300; i++) {
      const r = await call("GET", `/api/v1/public/leads/${probe.externalId}/`, keys.bigTest);
      if (((await r.json()) as { state?: string }).state === "QUOTE") {
        movedAfter = (performance.now() - probeStart) / 1000;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  log(`a new sandbox:quote lead reached QUOTE after ${movedAfter.toFixed(1)} s (${probeCreated.status})`);

  let created = 0;
  const paths: [string, () => Promise<Response>][] = [
    [
      "POST /public/leads/ (create)",
      () => call("POST", "/api/v1/public/leads/", keys.big, restBody(makeLead(`scale-${Date.now()}-${created++}`))),
    ],
    ["GET /public/leads/ (big provider)", () => call("GET", "/api/v1/public/leads/", keys.big)],
    ["GET /public/leads/ (small provider)", () => call("GET", "/api/v1/public/leads/", keys.small)],
    [
      "GET /public/leads/?updated_after=1h",
      () => call("GET", `/api/v1/public/leads/?updated_after=${hourAgo}`, keys.big),
    ],
    ["GET /public/leads/{external_id}/", () => call("GET", `/api/v1/public/leads/${someLead}/`, keys.big)],
    ["GET /public/leads/ (test key)", () => call("GET", "/api/v1/public/leads/", keys.bigTest)],
    ["GET /public/events/", () => call("GET", "/api/v1/public/events/", keys.big)],
    [
      "GET /public/events/?created_after=1h",
      () => call("GET", `/api/v1/public/events/?created_after=${hourAgo}`, keys.big),
    ],
    [
      "GET /public/events/?type= (test key)",
      () => call("GET", "/api/v1/public/events/?type=lead.quoted", keys.bigTest),
    ],
    ["GET /public/requests/", () => call("GET", "/api/v1/public/requests/", keys.big)],
    ["GET /public/stats/ (30 days)", () => call("GET", "/api/v1/public/stats/", keys.big)],
    ["GET /public/intake_rules/", () => call("GET", "/api/v1/public/intake_rules/", keys.big)],
    ["GET /lead_providers/ (page 1)", () => call("GET", "/api/v1/lead_providers/", admin)],
    [
      "GET /lead_providers/{id}/webhook_deliveries/",
      () => call("GET", `/api/v1/lead_providers/${big}/webhook_deliveries/`, admin),
    ],
    ["GET /admin/leads/", () => call("GET", "/api/v1/admin/leads/", admin)],
    ["GET /admin/leads/?q= (search)", () => call("GET", "/api/v1/admin/leads/?q=person12345", admin)],
    [
      "GET /admin/leads/ (a week a year ago)",
      () =>
        call(
          "GET",
          `/api/v1/admin/leads/?created_after=${yearAgo.toISOString()}&created_before=${weekAfter.toISOString()}`,
          admin,
        ),
    ],
    [
      "GET /admin/audit_log/ (small provider)",
      () => call("GET", `/api/v1/admin/audit_log/?provider_id=${small}`, admin),
    ],
    ["GET /admin/audit_log/ (big provider)", () => call("GET", `/api/v1/admin/audit_log/?provider_id=${big}`, admin)],
    ["GET /admin/requests/", () => call("GET", "/api/v1/admin/requests/", admin)],
    ["GET /admin/stats/", () => call("GET", "/api/v1/admin/stats/", admin)],
    ["GET /metrics", () => call("GET", "/metrics", "scale-metrics-token-0123456789")],
  ];

  const rows: Row[] = [];
  for (const [path, request] of paths) {
    const latencies = new Latencies();
    const statuses = new Map<number, number>();
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      const res = await request();
      await res.arrayBuffer();
      latencies.add(performance.now() - t);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
    const [p50, p95] = latencies.percentiles([50, 95]) as [number, number];
    const seen = [...statuses].map(([s, n]) => `${n}×${s}`).join(" ");
    rows.push({ path, p50, p95, statuses: seen });
    log(`${path}: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${seen})`);
  }

  // The jobs: the big provider's purge of its test data, then one retention run.
  const jobs: string[] = [rollup, `a new sandbox:quote test lead reached QUOTE after ${movedAfter.toFixed(1)} s`];
  let t = performance.now();
  const purged = await call("POST", `/api/v1/lead_providers/${big}/purge_test_data/`, admin);
  const purgedBody = await purged.text();
  jobs.push(
    `purge_test_data of the big provider: ${purged.status} ${purgedBody} in ${(performance.now() - t).toFixed(0)} ms`,
  );
  t = performance.now();
  const expired = await app.sandbox.expire(1000);
  jobs.push(
    `one sandbox retention run (1 s budget): ${expired} test leads in ${(performance.now() - t).toFixed(0)} ms`,
  );
  const metric = async (name: string) =>
    ((await app.metrics.registry.getSingleMetric(name)?.get())?.values ?? []) as {
      value: number;
      labels: Record<string, string>;
      metricName?: string;
    }[];
  const batchSeconds = await metric("lead_provider_job_batch_seconds");
  const rowsDeleted = await metric("lead_provider_job_rows_total");
  for (const job of ["sandbox_retention", "test_data_purge"]) {
    const of = (suffix: string) =>
      batchSeconds.find((v) => v.labels.job === job && String(v.metricName).endsWith(suffix))?.value ?? 0;
    const runs = of("_count");
    const rows = rowsDeleted.find((v) => v.labels.job === job)?.value ?? 0;
    jobs.push(
      `${job}: ${runs} runs, ${rows} rows, slowest batch per run ${runs > 0 ? ((of("_sum") / runs) * 1000).toFixed(0) : "—"} ms on average`,
    );
  }
  for (const j of jobs) log(j);

  const sizes = await pool.query<{ leads: string; events: string; bytes: string }>(
    `select (select count(*) from leads) as leads, (select count(*) from lead_events) as events,
            pg_database_size(current_database()) as bytes`,
  );
  const s = sizes.rows[0];
  const summary = `${Number(s?.leads).toLocaleString("en-US")} leads, ${Number(s?.events).toLocaleString("en-US")} events, database ${(Number(s?.bytes) / 2 ** 30).toFixed(2)} GiB`;
  const md = [
    `# Scale run: ${sizeName} (${summary}), ${new Date().toISOString()}`,
    "",
    `${ROUNDS} requests per path, one at a time, in-process service on Postgres.`,
    "",
    "| path | p50 ms | p95 ms | statuses |",
    "|---|--:|--:|---|",
    ...rows.map((r) => `| ${r.path} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.statuses} |`),
    "",
    ...jobs.map((j) => `- ${j}`),
    "",
  ].join("\n");
  const out = join(import.meta.dirname, "..", "results");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `scale-${sizeName}.md`), md);
  process.stdout.write(md);
  await pool.end();
  await app.stop();
}

await main();
