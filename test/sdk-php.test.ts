/**
 * The PHP SDK (sdks/php) against the real service on port 0, on Postgres when TEST_DATABASE_URL is
 * set, else PGlite (the SDK's behaviour does not depend on the database; the TypeScript SDK's tests
 * run the same refusals, retries and lost answers on both): this file starts the service, creates the providers, keys, rules, terms and a returned
 * lead the PHPUnit tests need, puts a real TCP proxy in front of the service (every PHP request
 * passes it; it loses the answers of two providers' first create after the service stored the
 * lead), a webhook receiver and a small control endpoint (the service's clock, its request log,
 * the webhooks received), and runs Debian's `phpunit` with all of it in the environment. PHPUnit
 * must pass with every test run: none skipped, incomplete or risky, as many as tests/ holds. Then:
 * each lost answer left exactly one lead; every provider-key operation of the SDK's table
 * (Operations::ALL) went through the proxy; the SDK README's quick start and the main README's
 * example run with plain `php`, no Composer, and its offline example against the Prism mock. Needs php (with curl) and phpunit; without them this file is skipped with a note, and
 * `make test`'s summary names the group (.ci/run installs them, and its strict run refuses a skip).
 */
import { execFile, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { freshLead, freshPhone, ISSUE_TERMS, movableClock } from "./helpers/money.ts";
import { type Prism, SPEC_FILE, startPrism } from "./helpers/prism.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";
import { type ResetProxy, startResetProxy } from "./helpers/reset-proxy.ts";
import { operationsNotCalled, PROVIDERS, ruledProvider, storedWith, testKeyOf } from "./helpers/sdk.ts";
import { START_MS, tail } from "./helpers/timing.ts";

const run = promisify(execFile);
const SDK = join(import.meta.dirname, "..", "sdks", "php");
const ZONE = "America/New_York";
const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;

const HAVE_PHP =
  spawnSync("php", ["-r", "exit(extension_loaded('curl') ? 0 : 1);"], { stdio: "ignore" }).status === 0 &&
  spawnSync("phpunit", ["--version"], { stdio: "ignore" }).status === 0;
if (!HAVE_PHP) {
  console.warn(
    "sdk-php.test: SKIPPING the PHP SDK's tests: no php with ext-curl, or no phpunit " +
      "(apt-get install -y php-cli php-curl phpunit; make test and .ci/run install them)",
  );
}

/** The test methods tests/ holds: PHPUnit must run exactly these. */
function phpTestCount(): number {
  const dir = join(SDK, "tests");
  return readdirSync(dir)
    .filter((f) => f.endsWith("Test.php"))
    .reduce((n, f) => n + [...readFileSync(join(dir, f), "utf8").matchAll(/public function test\w+\(/g)].length, 0);
}

/** A JUnit report's totals (PHPUnit's --log-junit): the outer testsuite's attributes. */
function junitTotals(xml: string): Record<string, number> {
  const suite = /<testsuite\b([^>]*)>/.exec(xml)?.[1] ?? "";
  const totals: Record<string, number> = {};
  for (const m of suite.matchAll(/(\w+)="([\d.]+)"/g)) totals[m[1] as string] = Number(m[2]);
  return totals;
}

/** The first ```php block after a heading of a markdown file. */
function phpAfter(file: string, heading: string): string {
  const markdown = readFileSync(file, "utf8");
  const at = markdown.indexOf(`\n${heading}\n`);
  const block = at === -1 ? undefined : /```php\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!block) throw new Error(`no php block under ${heading} in ${file}`);
  return block;
}

describe.skipIf(!HAVE_PHP).each(BACKENDS.slice(-1))("the PHP SDK against the service ($name)", (backend) => {
  let t: TestApp;
  let mock: Prism;
  let receiver: Receiver;
  let proxy: ResetProxy;
  let control: http.Server;
  let out: string;
  const clock = movableClock();
  const env: Record<string, string> = {};
  /** Keys whose first create loses its answer, and those that already lost it. */
  const resetKeys = new Set<string>();
  const reset = new Set<string>();

  beforeAll(async () => {
    [t, mock] = await Promise.all([
      startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" }, { now: clock.now }),
      startPrism(["mock", SPEC_FILE]),
    ]);
    const admin = await t.token();
    receiver = await startReceiver();
    out = mkdtempSync(join(tmpdir(), "lp-sdk-php-"));
    proxy = await startResetProxy({ host: "127.0.0.1", port: t.port }, ({ line, headers }) => {
      const key = (headers.authorization ?? "").replace(/^Bearer /, "");
      if (line !== "POST /api/v1/public/leads/" || !resetKeys.has(key) || reset.has(key)) return false;
      reset.add(key);
      return true;
    });
    control = http.createServer((req, res) => {
      const answer = (body: unknown) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      const [, what, arg] = /^\/([a-z/-]+?)(?:\/(\d+))?$/.exec(req.url ?? "") ?? [];
      const now = DateTime.fromJSDate(clock.now());
      if (req.method === "POST" && what === "clock/before-minute-end") {
        clock.set(now.startOf("minute").plus({ minutes: 1 }).minus(Number(arg)).toJSDate());
        answer({ now: clock.now() });
      } else if (req.method === "POST" && what === "clock/before-day-end") {
        clock.set(now.setZone(ZONE).plus({ days: 1 }).startOf("day").minus(Number(arg)).toJSDate());
        answer({ now: clock.now() });
      } else if (req.method === "POST" && what === "clock/reset") {
        clock.reset();
        answer({ now: clock.now() });
      } else if (req.method === "POST" && what === "request-log/flush") {
        void t.app.requestLog?.flush().then(() => answer({ flushed: true }));
      } else if (req.method === "GET" && what === "webhooks") {
        answer(receiver.received.map((r) => ({ headers: r.headers, body: r.body })));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));

    const provider = (fields: Json = {}, rules?: Json) => ruledProvider(t, fields, rules);
    const main = await provider();
    const openDay = DAYS[DateTime.now().setZone(ZONE).plus({ days: 3 }).weekday - 1] as string;
    const [reject, cap, capWait, closed, paused, limited, resetOne, resetOnce, paging, hooked, money] =
      await Promise.all([
        provider({}, { duplicate_policy: "reject" }),
        provider({}, { caps: { day: 1 } }),
        provider({}, { caps: { day: 1 } }),
        provider({}, { schedule: { [openDay]: [{ open: "09:00", close: "17:00" }] } }),
        provider({}, { paused: true, paused_reason: "Holiday week" }),
        provider({ rate_limit_per_minute: 1 }),
        provider(),
        provider(),
        provider(),
        provider({ webhook_url: receiver.url }),
        provider(),
      ]);
    resetKeys.add(resetOne.key).add(resetOnce.key);
    const endpoint = (await (await t.call("GET", `${PROVIDERS}${hooked.id}/webhook/`, { auth: admin })).json()) as Json;
    // The money provider: terms whose monthly cap allows its one lead back, and that lead returned.
    const terms = { ...ISSUE_TERMS, returns: { ...ISSUE_TERMS.returns, max_rate: 1 } };
    expect((await t.call("PUT", `${PROVIDERS}${money.id}/terms/`, { auth: admin, body: terms })).status).toBe(200);
    const returned = (await (
      await t.call("POST", "/api/v1/public/leads/", { auth: money.key, body: freshLead() })
    ).json()) as Json;
    const filed = await t.call("POST", `/api/v1/admin/leads/${returned.id}/returns/`, {
      auth: admin,
      body: { reason: "invalid_contact", note: "Number disconnected" },
    });
    expect(filed.status, await filed.clone().text()).toBe(201);

    Object.assign(env, {
      LP_BASE_URL: t.url,
      LP_PROXY_URL: proxy.url,
      LP_CONTROL_URL: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
      LP_OUT_DIR: out,
      LP_KEY: main.key,
      LP_TEST_KEY: await testKeyOf(t, main.id),
      LP_REJECT_KEY: reject.key,
      LP_CAP_KEY: cap.key,
      LP_CAP_WAIT_KEY: capWait.key,
      LP_CLOSED_KEY: closed.key,
      LP_PAUSED_KEY: paused.key,
      LP_LIMITED_KEY: limited.key,
      LP_RESET_KEY: resetOne.key,
      LP_RESET_ONCE_KEY: resetOnce.key,
      LP_PAGING_KEY: paging.key,
      LP_WEBHOOK_KEY: hooked.key,
      LP_WEBHOOK_SECRET: endpoint.secret,
      LP_MONEY_KEY: money.key,
      LP_RETURNED_EXTERNAL_ID: returned.external_id,
      LP_PHONES: Array.from({ length: 60 }, () => freshPhone()).join(","),
    });
  }, 30_000 + START_MS);
  afterAll(async () => {
    await mock?.stop();
    await proxy?.close();
    await receiver?.close();
    await new Promise((resolve) => (control ? control.close(resolve) : resolve(undefined)));
    await t?.stop();
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("passes PHPUnit against the service with every test run", async () => {
    const junit = join(out, "junit.xml");
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        "phpunit",
        ["--configuration", "phpunit.xml.dist", "--log-junit", junit, "--do-not-cache-result"],
        { cwd: SDK, env: { ...process.env, ...env } },
      );
      let output = "";
      child.stdout.on("data", (d: Buffer) => {
        output += d.toString();
      });
      child.stderr.on("data", (d: Buffer) => {
        output += d.toString();
      });
      child.on("close", (code) => resolve({ code, output }));
    });
    expect(result.code, tail(result.output, 60)).toBe(0);
    const totals = junitTotals(readFileSync(junit, "utf8"));
    expect(totals, tail(result.output, 60)).toMatchObject({
      tests: phpTestCount(),
      failures: 0,
      errors: 0,
      skipped: 0,
      warnings: 0,
    });
    expect(totals.assertions).toBeGreaterThan(phpTestCount());
  }, 150_000);

  it("lost the answers of exactly the two creates it was told to, and each left one lead", async () => {
    expect(proxy.resets).toBe(2);
    expect(reset).toEqual(resetKeys);
    const externalId = readFileSync(join(out, "reset-external-id"), "utf8");
    expect(await storedWith(t, externalId)).toBe(1);
  });

  it("called every provider-key operation of the PHP SDK's table through the proxy", async () => {
    const { stdout } = await run(
      "php",
      ["-r", 'require "autoload.php"; echo json_encode(LeadProvider\\Operations::ALL);'],
      {
        cwd: SDK,
      },
    );
    const table = JSON.parse(stdout) as Record<string, { http: string; method: string }>;
    expect(Object.keys(table).length).toBeGreaterThan(0);
    expect(operationsNotCalled(proxy.requests, table)).toEqual([]);
  });

  it("runs the README's quick start with plain php, without Composer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lp-sdk-php-quickstart-"));
    try {
      // As a user without Composer has it: the folder copied next to the script.
      cpSync(join(SDK, "autoload.php"), join(dir, "lead-provider-sdk", "autoload.php"));
      cpSync(join(SDK, "src"), join(dir, "lead-provider-sdk", "src"), { recursive: true });
      writeFileSync(join(dir, "quickstart.php"), phpAfter(join(SDK, "README.md"), "## Quick start"));
      const p = await t.provider();
      const { stdout, stderr } = await run("php", ["quickstart.php"], {
        cwd: dir,
        env: { ...process.env, LEAD_PROVIDER_API_KEY: p.key, LEAD_PROVIDER_BASE_URL: t.url },
      });
      expect(stderr).toBe("");
      const lines = stdout.trim().split("\n");
      expect(lines[0]).toMatch(/^LP-[A-Z0-9]{10} LEAD live$/);
      expect(lines.slice(1)).toEqual([expect.stringMatching(/^crm-\d+ LEAD$/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs its offline example against the Prism mock (make mock)", async () => {
    const { stdout, stderr } = await run("php", [join(SDK, "examples", "mock.php")], {
      env: { ...process.env, LEAD_PROVIDER_BASE_URL: mock.url },
    });
    expect(stderr).toBe("");
    // The contract's first examples: the created lead, the one-lead page, the validation error.
    expect(stdout.trim().split("\n")).toEqual([
      "created LP-7K3M9Q2X4D LEAD",
      "listed crm-48213",
      expect.stringMatching(/^refused validation_error [\w.[\],]+$/),
    ]);
  });

  it("runs the main README's PHP example beside the curl tour", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lp-sdk-php-readme-"));
    try {
      // As the README says: from the repository's directory (sdks/php there), with the tour's lead.json.
      cpSync(join(SDK, "autoload.php"), join(dir, "sdks", "php", "autoload.php"));
      cpSync(join(SDK, "src"), join(dir, "sdks", "php", "src"), { recursive: true });
      const example = phpAfter(join(SDK, "..", "..", "README.md"), "### With an SDK");
      writeFileSync(join(dir, "create.php"), example.replaceAll("http://localhost:8080", t.url));
      writeFileSync(join(dir, "lead.json"), JSON.stringify(freshLead()));
      const p = await t.provider();
      const { stdout, stderr } = await run("php", ["create.php"], {
        cwd: dir,
        env: { ...process.env, LEAD_PROVIDER_API_KEY: p.key },
      });
      expect(stderr).toBe("");
      expect(stdout.trim()).toMatch(/^LP-[A-Z0-9]{10} LEAD 1$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
