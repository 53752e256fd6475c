/**
 * `make bench-scale`: the service on Postgres seeded at a size (bench/scale/seed.ts),
 * then p50/p95 of the paths a user or a job hits, one request at a time, and the statuses seen;
 * each background job's runs; the storage per table. With the other size's results at hand
 * (bench/results/scale-<size>.json), each path is compared with it, and the EXPLAIN ANALYZE of
 * the statements of every path whose p95 grew (over 1.5× and over 5 ms more) is printed.
 *
 *   node bench/scale/run.ts [small|plans|large] [--reuse] [--seed-only]
 *
 * small ≈ 50k leads, plans ≈ 1M (what test/scale-plans.test.ts seeds), large ≈ 5M (about 15 to
 * 20 minutes to seed on a 2-core machine). The database is `lp_scale_<size>` on SCALE_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test); `--reuse` keeps an existing one; `--seed-only` seeds
 * (and builds the indexes) without measuring, for a later `--reuse`. Writes
 * bench/results/scale-<size>.md and .json. SCALE_ROUNDS sets the requests per path (40);
 * SCALE_PATHS, a regular expression, measures only the paths it matches and writes nothing;
 * SCALE_EXPLAIN=1 prints the plans of every path measured, not only of those that grew.
 * Not part of `make test`.
 */
import { createSecretKey } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SignJWT } from "jose";
import pg from "pg";
import { createApp } from "../../src/app.ts";
import { DEV_JWT_SECRET, loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/database.ts";
import { buildBigTableIndexes } from "../../src/db/indexes.ts";
import { migrateToLatest } from "../../src/db/migrator.ts";
import { createOutboxRetention } from "../../src/events/outbox-retention.ts";
import { createLogger } from "../../src/logger.ts";
import { periodsThrough, rolledThrough } from "../../src/stats/stats.repository.ts";
import { makeLead, restBody } from "../lib/leads.ts";
import { Latencies } from "../lib/stats.ts";
import { BACKLOG_DAYS, SIZES, seed, WINDOWS } from "./seed.ts";

const sizeName = (process.argv[2] ?? "small") as keyof typeof SIZES;
const size = SIZES[sizeName];
if (!size) throw new Error(`size must be one of ${Object.keys(SIZES).join(", ")}`);
const reuse = process.argv.includes("--reuse");
const seedOnly = process.argv.includes("--seed-only");
const adminUrl = process.env.SCALE_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const dbName = `lp_scale_${sizeName}`;
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
const databaseUrl = url.toString();
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 40);
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);

/**
 * Every statement the process sends while `capturing` (the service runs in this process, on the
 * same `pg`): the text and values of one request's queries, to EXPLAIN when its path grew.
 */
const captured: { text: string; values: unknown[] }[] = [];
let capturing = false;
const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  if (capturing) {
    const [config, values] = args;
    const text = typeof config === "string" ? config : (config as { text?: string } | undefined)?.text;
    const vals = Array.isArray(values) ? values : ((config as { values?: unknown[] } | undefined)?.values ?? []);
    if (text) captured.push({ text, values: vals });
  }
  return clientQuery.apply(this, args);
};

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
  /** The largest answer's body, in bytes. */
  readonly bytes?: number;
}

async function main(): Promise<void> {
  await prepareDatabase();
  if (seedOnly) return;
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
  // The measured providers' own limits out of the way (the seed gives every provider 600 a minute).
  await pool.query(
    "update providers set rate_limit_per_minute = 1000000, rate_limit_per_day = 100000000 where id = any($1)",
    [[big, small]],
  );
  const key = async (id: number, mode: "live" | "test") => {
    const r = await call("POST", `/api/v1/lead_providers/${id}/generate_api_key/`, admin, JSON.stringify({ mode }));
    return ((await r.json()) as { api_key: string }).api_key;
  };
  const keys = { big: await key(big, "live"), bigTest: await key(big, "test"), small: await key(small, "live") };
  const found = (
    await pool.query<{ external_id: string; email: string; phone_number: string }>(
      "select external_id, email, phone_number from leads where provider_id = $1 and livemode order by id desc limit 1 offset 500",
      [big],
    )
  ).rows[0];
  const someLead = found?.external_id;
  // What an administrator types: part of a customer's email address, or a surname (1 in 60 leads).
  const emailPart = encodeURIComponent(found?.email.split("@")[0]?.slice(2) ?? "");
  const phone = encodeURIComponent(found?.phone_number ?? "");
  // A whole email address (one customer, looked up exactly), and a phone's last seven digits (a substring).
  const email = encodeURIComponent(found?.email.toUpperCase() ?? "");
  const phonePart = encodeURIComponent(found?.phone_number.slice(-8) ?? "");
  // Ranges of business days ending today, for the stats paths: a year, 26 weeks.
  const businessDay = (d: Date) => new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York" }).format(d);
  const today = businessDay(new Date());
  const daysBack = (n: number) => businessDay(new Date(Date.now() - n * 86_400_000));
  const lastYear = `from=${daysBack(364)}&to=${today}`;
  const lastHalf = `from=${daysBack(181)}&to=${today}`;
  // A request log entry of the big provider: its address, external id and request id.
  const entry = (
    await pool.query<{ client_ip: string; external_id: string; request_id: string }>(
      "select client_ip, external_id, request_id from request_log where provider_id = $1 order by created_at desc limit 1 offset 100",
      [big],
    )
  ).rows[0];
  const order = (
    await pool.query<{ order_number: string }>(
      "select order_number from leads where provider_id = $1 and livemode order by id desc limit 1 offset 900",
      [big],
    )
  ).rows[0]?.order_number;
  const csv = { accept: "text/csv" };
  const hourAgo = new Date(Date.now() - 3600_000).toISOString();
  const yearAgo = new Date(Date.now() - 365 * 86_400_000);
  const weekAfter = new Date(yearAgo.getTime() + 7 * 86_400_000);
  // Statement months in the broker's calendar (the default BUSINESS_TIMEZONE).
  const monthIn = (d: Date) =>
    new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York", year: "numeric", month: "2-digit" })
      .format(d)
      .slice(0, 7);
  const thisMonth = monthIn(new Date());
  const yearAgoMonth = monthIn(yearAgo);

  // A portal user of the big provider, signed in (the portal's lists are measured with its cookie).
  const origin = { origin: base };
  const invited = (await (
    await call(
      "POST",
      `/api/v1/lead_providers/${big}/portal_users/`,
      admin,
      JSON.stringify({ email: `scale-${Date.now()}@portal.example`, name: "Scale Reader" }),
    )
  ).json()) as { invite_url: string; user: { email: string } };
  const password = "violet tundra harbor 87 quay";
  const token = invited.invite_url.split("#invite=")[1] ?? "";
  const accepted = await call(
    "POST",
    "/api/v1/portal/invite/accept/",
    undefined,
    JSON.stringify({ token, password }),
    origin,
  );
  if (!accepted.ok) throw new Error(`the portal invite was refused: ${accepted.status} ${await accepted.text()}`);
  const signedIn = await call(
    "POST",
    "/api/v1/portal/sign_in/",
    undefined,
    JSON.stringify({ email: invited.user.email, password }),
    origin,
  );
  if (!signedIn.ok) throw new Error(`the portal sign-in was refused: ${signedIn.status} ${await signedIn.text()}`);
  const cookie = { cookie: (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };

  // The stats rollup as production has it: every past day rolled up (a fresh seed has none; the
  // job rolls up to 31 days a minute). Timed per run: a background job's batch.
  const rollStarted = performance.now();
  let rollRuns = 0;
  let slowestRoll = 0;
  const watermarks = async () => `${await rolledThrough(app.database.db)} ${await periodsThrough(app.database.db)}`;
  // The service's own loop stopped meanwhile: its run holding the lock would make one of these a
  // no-op, which would read as caught up. The seed's state history is not a backlog of moves (the
  // leads were written as they ended up): the rollup starts past it, as a running service is.
  await app.statsRollup.stop();
  await pool.query("update lead_stats_rollup set history_id = (select coalesce(max(id), 0) from lead_state_history)");
  for (;;) {
    const before = await watermarks();
    const t0 = performance.now();
    await app.statsRollup.runOnce();
    slowestRoll = Math.max(slowestRoll, performance.now() - t0);
    rollRuns += 1;
    if ((await watermarks()) === before) break;
  }
  // The rollup rewrites today's rows every run: a database reused run after run (or a server
  // with autovacuum off, as on the development machine) keeps their dead versions, which the
  // day's index scans then walk. A running service's autovacuum keeps up; so does this.
  await pool.query("vacuum analyze lead_stats_daily, lead_stats_periods, lead_stats_running");
  app.statsRollup.start();
  const jobs: string[] = [
    `stats rollup caught up in ${rollRuns} runs of up to 31 days (92 into the periods), ${((performance.now() - rollStarted) / 1000).toFixed(1)} s; slowest run ${slowestRoll.toFixed(0)} ms`,
  ];
  log(jobs[0] as string);

  // Retention as a running service does it, on the seed's backlog (a day past each window): the
  // runs until each job has caught up, before the paths are measured in the steady state.
  const retentionStarted = performance.now();
  let sandboxRuns = 0;
  while ((await app.sandbox.expire(1000)) > 0 && sandboxRuns < 1000) sandboxRuns += 1;
  const outbox = createOutboxRetention({
    db: app.database.db,
    logger: createLogger("silent"),
    eventRetentionDays: WINDOWS.eventDays,
    deliveryRetentionDays: WINDOWS.deliveryDays,
    onJobRun: (job, run) => app.metrics.jobRun(job, run),
  });
  let outboxRuns = 0;
  for (;;) {
    outboxRuns += 1;
    if (!(await outbox.runOnce()).behind || outboxRuns > 1000) break;
  }
  log(
    `retention caught up on a ${BACKLOG_DAYS}-day backlog in ${((performance.now() - retentionStarted) / 1000).toFixed(1)} s`,
  );

  // A new sandbox:quote test lead must reach QUOTE within seconds.
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
  jobs.push(`a new sandbox:quote test lead reached QUOTE after ${movedAfter.toFixed(1)} s (${probeCreated.status})`);
  log(jobs.at(-1) as string);

  let created = 0;
  const providerGet = (path: string) => () => call("GET", path, admin);
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
    ["GET /public/leads/?state=ORDER", () => call("GET", "/api/v1/public/leads/?state=ORDER", keys.big)],
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
    [
      "GET /public/requests/?outcome=rejected",
      () => call("GET", "/api/v1/public/requests/?outcome=rejected", keys.big),
    ],
    ["GET /public/stats/ (30 days)", () => call("GET", "/api/v1/public/stats/", keys.big)],
    [
      "GET /public/stats/ by month, 12 months",
      () => call("GET", `/api/v1/public/stats/?granularity=month&${lastYear}`, keys.big),
    ],
    [
      "GET /public/stats/ by day, a year, CSV",
      () => call("GET", `/api/v1/public/stats/?${lastYear}`, keys.big, undefined, csv),
    ],
    [
      "GET /public/stats/ by week, 26 weeks",
      () => call("GET", `/api/v1/public/stats/?granularity=week&${lastHalf}`, keys.big),
    ],
    [
      "GET /public/stats/?group_by=sub_id by month, 12 months",
      () => call("GET", `/api/v1/public/stats/?granularity=month&group_by=sub_id&${lastYear}`, keys.big),
    ],
    [
      "GET /public/requests/?code=validation_error",
      () => call("GET", "/api/v1/public/requests/?code=validation_error", keys.big),
    ],
    ["GET /public/intake_rules/", () => call("GET", "/api/v1/public/intake_rules/", keys.big)],
    ["GET /portal/me/", () => call("GET", "/api/v1/portal/me/", undefined, undefined, cookie)],
    ["GET /portal/leads/", () => call("GET", "/api/v1/portal/leads/", undefined, undefined, cookie)],
    [
      "GET /portal/leads/?mode=test",
      () => call("GET", "/api/v1/portal/leads/?mode=test", undefined, undefined, cookie),
    ],
    ["GET /portal/events/", () => call("GET", "/api/v1/portal/events/", undefined, undefined, cookie)],
    ["GET /portal/requests/", () => call("GET", "/api/v1/portal/requests/", undefined, undefined, cookie)],
    ["GET /portal/stats/", () => call("GET", "/api/v1/portal/stats/", undefined, undefined, cookie)],
    [
      "GET /portal/stats/?group_by=sub_id, CSV",
      () => call("GET", "/api/v1/portal/stats/?group_by=sub_id", undefined, undefined, { ...cookie, ...csv }),
    ],
    [
      "GET /portal/webhook/deliveries/",
      () => call("GET", "/api/v1/portal/webhook/deliveries/", undefined, undefined, cookie),
    ],
    ["GET /lead_providers/ (page 1)", providerGet("/api/v1/lead_providers/")],
    ["GET /lead_providers/?search=", providerGet("/api/v1/lead_providers/?search=provider%2019")],
    ["GET /lead_providers/{id}/ (big)", providerGet(`/api/v1/lead_providers/${big}/`)],
    ["GET /lead_providers/{id}/usage/ (big)", providerGet(`/api/v1/lead_providers/${big}/usage/`)],
    ["GET /lead_providers/{id}/webhook_deliveries/", providerGet(`/api/v1/lead_providers/${big}/webhook_deliveries/`)],
    ["GET /lead_providers/{id}/portal_users/", providerGet(`/api/v1/lead_providers/${big}/portal_users/`)],
    ["GET /admin/leads/", providerGet("/api/v1/admin/leads/")],
    ["GET /admin/leads/?q= (part of an email)", providerGet(`/api/v1/admin/leads/?q=${emailPart}`)],
    ["GET /admin/leads/?q= (a surname)", providerGet("/api/v1/admin/leads/?q=kowalski")],
    ["GET /admin/leads/?q= (a whole email)", providerGet(`/api/v1/admin/leads/?q=${email}`)],
    ["GET /admin/leads/?q= (phone)", providerGet(`/api/v1/admin/leads/?q=${phone}`)],
    ["GET /admin/leads/?q= (part of a phone)", providerGet(`/api/v1/admin/leads/?q=${phonePart}`)],
    ["GET /admin/leads/?q= (an order number)", providerGet(`/api/v1/admin/leads/?q=${order}`)],
    ["GET /admin/leads/?q= (an external id)", providerGet(`/api/v1/admin/leads/?q=${someLead}`)],
    ["GET /admin/leads/?q= (a first and last name)", providerGet("/api/v1/admin/leads/?q=james%20smith")],
    ["GET /admin/leads/?q= (a common part of an email)", providerGet("/api/v1/admin/leads/?q=mes.smit")],
    ["GET /admin/leads/?provider_id= (big)", providerGet(`/api/v1/admin/leads/?provider_id=${big}`)],
    ["GET /admin/leads/?state=ORDER", providerGet("/api/v1/admin/leads/?state=ORDER")],
    ["GET /admin/leads/?duplicate=true", providerGet("/api/v1/admin/leads/?duplicate=true")],
    [
      "GET /admin/leads/ (a week a year ago)",
      providerGet(
        `/api/v1/admin/leads/?created_after=${yearAgo.toISOString()}&created_before=${weekAfter.toISOString()}`,
      ),
    ],
    ["GET /admin/audit_log/ (small provider)", providerGet(`/api/v1/admin/audit_log/?provider_id=${small}`)],
    ["GET /admin/audit_log/ (big provider)", providerGet(`/api/v1/admin/audit_log/?provider_id=${big}`)],
    ["GET /admin/requests/", providerGet("/api/v1/admin/requests/")],
    ["GET /admin/requests/?provider_id= (big)", providerGet(`/api/v1/admin/requests/?provider_id=${big}`)],
    [
      "GET /admin/requests/?provider_id=&outcome=rejected (big)",
      providerGet(`/api/v1/admin/requests/?provider_id=${big}&outcome=rejected`),
    ],
    ["GET /admin/requests/?status=422", providerGet("/api/v1/admin/requests/?status=422")],
    ["GET /admin/requests/?status=201", providerGet("/api/v1/admin/requests/?status=201")],
    ["GET /admin/requests/?code=", providerGet("/api/v1/admin/requests/?code=invalid_phone_number")],
    ["GET /admin/requests/?code= (none such)", providerGet("/api/v1/admin/requests/?code=validation_error")],
    ["GET /admin/requests/?client_ip=", providerGet(`/api/v1/admin/requests/?client_ip=${entry?.client_ip}`)],
    [
      "GET /admin/requests/?client_ip= (no such address)",
      providerGet("/api/v1/admin/requests/?client_ip=198.51.100.77"),
    ],
    ["GET /admin/requests/?external_id=", providerGet(`/api/v1/admin/requests/?external_id=${entry?.external_id}`)],
    ["GET /admin/requests/?request_id=", providerGet(`/api/v1/admin/requests/?request_id=${entry?.request_id}`)],
    ["GET /admin/requests/?livemode=false", providerGet("/api/v1/admin/requests/?livemode=false")],
    ["GET /admin/requests/?livemode=true", providerGet("/api/v1/admin/requests/?livemode=true")],
    ["GET /admin/stats/", providerGet("/api/v1/admin/stats/")],
    ["GET /admin/stats/ by month, 12 months", providerGet(`/api/v1/admin/stats/?granularity=month&${lastYear}`)],
    ["GET /admin/stats/ by week, 26 weeks", providerGet(`/api/v1/admin/stats/?granularity=week&${lastHalf}`)],
    ["GET /admin/stats/ by day, a year", providerGet(`/api/v1/admin/stats/?${lastYear}`)],
    ["GET /admin/stats/?group_by=provider (30 days, a page)", providerGet("/api/v1/admin/stats/?group_by=provider")],
    [
      "GET /admin/stats/?group_by=provider, CSV",
      () => call("GET", "/api/v1/admin/stats/?group_by=provider", admin, undefined, csv),
    ],
    [
      "GET /admin/stats/?group_by=provider by month, 12 months",
      providerGet(`/api/v1/admin/stats/?group_by=provider&granularity=month&sort=-accepted&${lastYear}`),
    ],
    ["GET /admin/stats/?group_by=sub_id (30 days)", providerGet("/api/v1/admin/stats/?group_by=sub_id")],
    [
      "GET /admin/stats/?provider_id= (big) by week, 26 weeks",
      providerGet(`/api/v1/admin/stats/?provider_id=${big}&granularity=week&${lastHalf}`),
    ],
    ["GET /public/balance/ (big)", () => call("GET", "/api/v1/public/balance/", keys.big)],
    ["GET /public/balance_transactions/ (big)", () => call("GET", "/api/v1/public/balance_transactions/", keys.big)],
    [
      "GET /public/balance_transactions/?type=settlement",
      () => call("GET", "/api/v1/public/balance_transactions/?type=settlement", keys.big),
    ],
    [
      "GET /public/balance_transactions/?type=payout (none)",
      () => call("GET", "/api/v1/public/balance_transactions/?type=payout", keys.big),
    ],
    [
      "GET /public/balance_transactions/?external_id=",
      () => call("GET", `/api/v1/public/balance_transactions/?external_id=${someLead}`, keys.big),
    ],
    [
      "GET /public/balance_transactions/?created_before=a year ago",
      () => call("GET", `/api/v1/public/balance_transactions/?created_before=${yearAgo.toISOString()}`, keys.big),
    ],
    [
      "GET /public/balance_transactions/ (small)",
      () => call("GET", "/api/v1/public/balance_transactions/", keys.small),
    ],
    ["GET /public/statements/ (big)", () => call("GET", "/api/v1/public/statements/", keys.big)],
    [
      "GET /public/statements/{month}/ (big, this month)",
      () => call("GET", `/api/v1/public/statements/${thisMonth}/`, keys.big),
    ],
    [
      "GET /public/statements/{month}/ (big, a year ago)",
      () => call("GET", `/api/v1/public/statements/${yearAgoMonth}/`, keys.big),
    ],
    [
      "GET /public/statements/{month}/?format=csv (big, a year ago)",
      () => call("GET", `/api/v1/public/statements/${yearAgoMonth}/?format=csv`, keys.big),
    ],
    ["GET /lead_providers/{id}/balance/ (big)", providerGet(`/api/v1/lead_providers/${big}/balance/`)],
    ["GET /admin/payables/", providerGet("/api/v1/admin/payables/")],
    ["GET /admin/payables/?format=csv", providerGet("/api/v1/admin/payables/?format=csv")],
    ["GET /admin/ledger/trial_balance/", providerGet("/api/v1/admin/ledger/trial_balance/")],
    ["GET /admin/ledger/spend/?days=30", providerGet("/api/v1/admin/ledger/spend/?days=30")],
    ["GET /admin/ledger/spend/?days=365", providerGet("/api/v1/admin/ledger/spend/?days=365")],
    ["GET /portal/balance/", () => call("GET", "/api/v1/portal/balance/", undefined, undefined, cookie)],
    [
      "GET /portal/balance_transactions/",
      () => call("GET", "/api/v1/portal/balance_transactions/", undefined, undefined, cookie),
    ],
    ["GET /portal/statements/", () => call("GET", "/api/v1/portal/statements/", undefined, undefined, cookie)],
    [
      "GET /portal/earnings/?days=30",
      () => call("GET", "/api/v1/portal/earnings/?days=30", undefined, undefined, cookie),
    ],
    [
      "GET /portal/earnings/?days=365",
      () => call("GET", "/api/v1/portal/earnings/?days=365", undefined, undefined, cookie),
    ],
    ["GET /metrics", () => call("GET", "/metrics", "scale-metrics-token-0123456789")],
  ];

  // Rounds interleaved: each round asks every path once, in order, so a spell of load from
  // elsewhere on the machine lands on one round of many paths, not on every round of one path.
  // SCALE_PATHS (a regular expression) measures only the paths it matches.
  const only = process.env.SCALE_PATHS ? new RegExp(process.env.SCALE_PATHS) : undefined;
  const chosen = paths.filter(([path]) => only === undefined || only.test(path));
  const seen = chosen.map(() => ({ latencies: new Latencies(), statuses: new Map<number, number>(), largest: 0 }));
  for (let i = 0; i < ROUNDS; i++) {
    for (const [k, [, request]] of chosen.entries()) {
      const m = seen[k] as (typeof seen)[number];
      const t = performance.now();
      const res = await request();
      m.largest = Math.max(m.largest, (await res.arrayBuffer()).byteLength);
      m.latencies.add(performance.now() - t);
      m.statuses.set(res.status, (m.statuses.get(res.status) ?? 0) + 1);
    }
  }
  const rows: Row[] = chosen.map(([path], k) => {
    const m = seen[k] as (typeof seen)[number];
    const [p50, p95] = m.latencies.percentiles([50, 95]) as [number, number];
    const statuses = [...m.statuses].map(([s, n]) => `${n}×${s}`).join(" ");
    log(`${path}: p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${statuses}, ${m.largest} bytes)`);
    return { path, p50, p95, statuses, bytes: m.largest };
  });

  // The jobs: the big provider's purge of its test data, then each job's runs from the metrics.
  let t = performance.now();
  const purged = await call("POST", `/api/v1/lead_providers/${big}/purge_test_data/`, admin);
  const purgedBody = await purged.text();
  jobs.push(
    `purge_test_data of the big provider: ${purged.status} ${purgedBody} in ${(performance.now() - t).toFixed(0)} ms`,
  );
  t = performance.now();
  const expired = await app.sandbox.expire(1000);
  jobs.push(`one more sandbox retention run: ${expired} test leads in ${(performance.now() - t).toFixed(0)} ms`);
  const metric = async (name: string) =>
    ((await app.metrics.registry.getSingleMetric(name)?.get())?.values ?? []) as {
      value: number;
      labels: Record<string, string | number>;
      metricName?: string;
    }[];
  const batchSeconds = await metric("lead_provider_job_batch_seconds");
  const rowsDeleted = await metric("lead_provider_job_rows_total");
  const jobRows: JobRow[] = [];
  for (const job of ["sandbox_retention", "test_data_purge", "event_retention", "delivery_retention"]) {
    const of = (suffix: string, le?: number) =>
      batchSeconds.find(
        (v) =>
          v.labels.job === job && String(v.metricName).endsWith(suffix) && (le === undefined || v.labels.le === le),
      )?.value ?? 0;
    const runs = of("_count");
    const row: JobRow = {
      job,
      runs,
      rows: rowsDeleted.find((v) => v.labels.job === job)?.value ?? 0,
      withinOneSecond: of("_bucket", 1),
      meanSlowestMs: runs > 0 ? (of("_sum") / runs) * 1000 : 0,
    };
    jobRows.push(row);
    jobs.push(
      `${job}: ${row.runs} runs, ${row.rows} rows; the slowest batch of ${row.withinOneSecond} of ${row.runs} runs ≤ 1 s (mean of each run's slowest ${row.meanSlowestMs.toFixed(0)} ms)`,
    );
  }
  jobs.push(
    `outbox retention (${WINDOWS.eventDays}-day events, ${WINDOWS.deliveryDays}-day deliveries) caught up in ${outboxRuns} runs; sandbox retention in ${sandboxRuns + 1}`,
  );
  for (const j of jobs) log(j);

  // Compared with the other size, when its results are at hand; the plans of the paths that grew.
  const out = join(import.meta.dirname, "..", "results");
  const other = sizeName === "large" ? "small" : sizeName === "small" ? "large" : undefined;
  const otherFile = other && join(out, `scale-${other}.json`);
  const theirs =
    otherFile && existsSync(otherFile) ? (JSON.parse(readFileSync(otherFile, "utf8")) as { rows: Row[] }).rows : [];
  const baseOf = (path: string) =>
    sizeName === "large" ? theirs.find((r) => r.path === path) : rows.find((r) => r.path === path);
  const bigOf = (path: string) =>
    sizeName === "large" ? rows.find((r) => r.path === path) : theirs.find((r) => r.path === path);
  const grew = (path: string) => {
    const [a, b] = [baseOf(path), bigOf(path)];
    return a !== undefined && b !== undefined && b.p95 > 1.5 * a.p95 && b.p95 > a.p95 + 5;
  };
  const plans: string[] = [];
  for (const [path, request] of chosen) {
    const mine = rows.find((r) => r.path === path) as Row;
    const explain = process.env.SCALE_EXPLAIN === "1";
    if (!explain && !grew(path) && !(mine.p95 > 50) && !(theirs.length === 0 && mine.p95 > 20)) continue;
    if (path.startsWith("POST")) continue; // EXPLAIN ANALYZE would write
    captured.length = 0;
    capturing = true;
    await (await request()).arrayBuffer();
    capturing = false;
    const statements = captured.filter((c) => /^\s*(select|with)\b/i.test(c.text));
    const explained: { ms: number; plan: string; text: string }[] = [];
    for (const s of statements) {
      const r = await pool.query(`explain (analyze, buffers) ${s.text}`, s.values);
      const lines = r.rows.map((row) => String(row["QUERY PLAN"]));
      const ms = Number(/Execution Time: ([\d.]+)/.exec(lines.at(-1) ?? "")?.[1] ?? 0);
      explained.push({ ms, plan: lines.join("\n"), text: s.text });
    }
    explained.sort((a, b) => b.ms - a.ms);
    plans.push(`### ${path}`, "");
    for (const e of explained.slice(0, explain ? explained.length : 2)) {
      plans.push("```sql", e.text.replace(/\s+/g, " ").slice(0, 600), "```", "```", e.plan, "```", "");
    }
  }

  // Storage: each table with its indexes and TOAST, and per lead.
  const tables = await pool.query<{ name: string; rows: string; bytes: string }>(
    `select c.relname as name, c.reltuples::bigint as rows, pg_total_relation_size(c.oid) as bytes
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind = 'r' order by pg_total_relation_size(c.oid) desc limit 12`,
  );
  const counts = await pool.query<{ leads: string; events: string; deliveries: string; bytes: string }>(
    `select (select count(*) from leads) as leads, (select count(*) from lead_events) as events,
            (select count(*) from webhook_deliveries) as deliveries, pg_database_size(current_database()) as bytes`,
  );
  const c = counts.rows[0];
  const leadCount = Number(c?.leads);
  const summary = `${leadCount.toLocaleString("en-US")} leads, ${Number(c?.events).toLocaleString("en-US")} events, ${Number(c?.deliveries).toLocaleString("en-US")} deliveries, database ${(Number(c?.bytes) / 2 ** 30).toFixed(2)} GiB`;
  const storage = tables.rows.map(
    (r) =>
      `| ${r.name} | ${Number(r.rows).toLocaleString("en-US")} | ${(Number(r.bytes) / 2 ** 20).toFixed(0)} | ${(Number(r.bytes) / leadCount).toFixed(0)} |`,
  );

  const fmt = (v: number | undefined) => (v === undefined ? "—" : v.toFixed(1));
  const kib = (bytes: number | undefined) => (bytes === undefined ? "—" : (bytes / 1024).toFixed(1));
  const table =
    theirs.length > 0
      ? [
          "| path | p50 ms | p95 ms | statuses | KiB | 50k p95 ms | 5M p95 ms | 5M ÷ 50k | ≤ 50 ms, and ≤ 1.5× or + 5 ms; ≤ 1 MB |",
          "|---|--:|--:|---|--:|--:|--:|--:|---|",
          ...rows.map((r) => {
            const [a, b] = [baseOf(r.path), bigOf(r.path)];
            const ok =
              a &&
              b &&
              b.p95 <= 50 &&
              (b.p95 <= 1.5 * a.p95 || b.p95 <= a.p95 + 5) &&
              !/×5\d\d/.test(r.statuses) &&
              (r.bytes ?? 0) <= 1_000_000;
            return `| ${r.path} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.statuses} | ${kib(r.bytes)} | ${fmt(a?.p95)} | ${fmt(b?.p95)} | ${a && b ? (b.p95 / a.p95).toFixed(2) : "—"} | ${a && b ? (ok ? "yes" : "**no**") : "—"} |`;
          }),
        ]
      : [
          "| path | p50 ms | p95 ms | statuses | KiB |",
          "|---|--:|--:|---|--:|",
          ...rows.map(
            (r) => `| ${r.path} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.statuses} | ${kib(r.bytes)} |`,
          ),
        ];
  const md = [
    `# Scale run: ${sizeName} (${summary}), ${new Date().toISOString()}`,
    "",
    `${ROUNDS} requests per path, one at a time, in rounds that ask every path once (interleaved), in-process service on Postgres.`,
    "",
    ...table,
    "",
    "## Background jobs",
    "",
    ...jobs.map((j) => `- ${j}`),
    "",
    "## Storage",
    "",
    "| table (with indexes and TOAST) | rows | MiB | bytes per lead |",
    "|---|--:|--:|--:|",
    ...storage,
    "",
    ...(plans.length > 0 ? ["## Plans of the paths that grew", "", ...plans] : []),
  ].join("\n");
  // A run of some paths (SCALE_PATHS) is printed only: the results keep whole runs.
  if (only === undefined) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, `scale-${sizeName}.md`), md);
    writeFileSync(
      join(out, `scale-${sizeName}.json`),
      `${JSON.stringify({ summary, rows, jobs: jobRows }, null, 2)}\n`,
    );
  }
  process.stdout.write(md);
  await pool.end();
  await app.stop();
}

interface JobRow {
  readonly job: string;
  readonly runs: number;
  readonly rows: number;
  /** Runs whose slowest batch took at most a second. */
  readonly withinOneSecond: number;
  readonly meanSlowestMs: number;
}

await main();
