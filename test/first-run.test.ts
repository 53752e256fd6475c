/**
 * What a new user trips over first, as they meet it: `make run`'s
 * banner and the landing page, a port already taken, a collection path without its slash, a
 * misspelt path, the test lead on the mock's GET, `livemode` on every event, the documented
 * `lead_status` values, an expired admin token, and `make token`'s `--ttl`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { SANDBOX_SCENARIOS } from "../src/sandbox/sandbox.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { type Prism, ROOT, startPrism } from "./helpers/prism.ts";
import { runToExit, SECRETS } from "./helpers/processes.ts";
import { START_MS, tail } from "./helpers/timing.ts";

const LEADS = "/api/v1/public/leads/";
const SPEC = join(ROOT, "openapi", "openapi.yaml");
/** A reader's shell: none of the make flags of the `make test` running this. */
const { MAKEFLAGS: _f, MFLAGS: _m, MAKELEVEL: _l, ...SHELL_ENV } = process.env;

/** Starts `command` in its own process group and collects what it prints. */
function start(command: string, args: string[], env: Record<string, string>) {
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: { ...SHELL_ENV, NODE_ENV: "development", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const seen = { stdout: "", stderr: "" };
  child.stdout?.on("data", (c: Buffer) => {
    seen.stdout += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    seen.stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, seen, exited };
}

async function until<T>(what: string, probe: () => T | undefined, ms: number, output: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms; the output ends:\n${tail(output())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("make run", () => {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.pid) process.kill(-c.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 500));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it("says what it is doing, prints one banner with the real port's addresses, and / links them", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "first-run-"));
    dirs.push(dataDir);
    const run = start("make", ["-s", "run"], { PORT: "0", DATA_DIR: dataDir });
    children.push(run.child);
    const all = () => run.seen.stdout + run.seen.stderr;
    const port = await until("ready banner", () => /is ready on port (\d+)/.exec(run.seen.stderr)?.[1], START_MS, all);
    expect(run.seen.stdout).toContain("starting the service");
    const base = `http://localhost:${port}`;
    for (const path of ["/api/v1/", "/admin/", "/docs", "/openapi.yaml"])
      expect(run.seen.stderr).toContain(`${base}${path}`);
    expect(run.seen.stderr.match(/is ready on port/g)).toHaveLength(1);

    // Every address in the banner answers.
    for (const url of run.seen.stderr.match(/http:\/\/localhost:\d+\S*/g) ?? []) {
      const res = await fetch(url.replace("localhost", "127.0.0.1"));
      expect(res.status, url).toBe(200);
    }
    const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: "text/html" } });
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    for (const path of ["/admin/", "/docs", "/openapi.yaml", "/api/v1/"]) expect(html).toContain(`href="${path}"`);
    const json = (await (
      await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: "application/json" } })
    ).json()) as Json;
    expect(json.links.admin.href).toBe("/admin/");
    expect(json.links.docs.href).toBe("/docs");
    const index = (await (await fetch(`http://127.0.0.1:${port}/api/v1/`)).json()) as Json;
    expect(index.routes).toContain("/api/v1/public/leads/");

    // A second service on the same port: one line naming the port, no stack trace.
    const otherDir = await mkdtemp(join(tmpdir(), "first-run-"));
    dirs.push(otherDir);
    const second = start(process.execPath, ["src/main.ts"], { PORT: port, DATA_DIR: otherDir });
    children.push(second.child);
    expect(await second.exited).toBe(78);
    const lines = second.seen.stderr.split("\n").filter((l) => l.trim() !== "" && !l.includes("development secret"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`port ${port} is already in use`);
    expect(second.seen.stderr).not.toMatch(/\n\s+at /);
    // make run (its install step and the service's start), then a second service refused.
  }, 270_000);
});

describe("make token", () => {
  it("documents --ttl in make help", async () => {
    const { stdout } = await promisify(execFile)("make", ["help"], { cwd: ROOT, env: SHELL_ENV });
    expect(stdout).toMatch(/token .*--ttl/);
  });
});

describe("a port already in use", () => {
  it("prints one line naming the port and exits 78", async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const { code, output } = await runToExit({ ...SECRETS, DATA_DIR: "memory://", PORT: String(port) });
      expect(code).toBe(78);
      expect(output.trim().split("\n").at(-1)).toBe(
        `port ${port} is already in use (another process listens on 127.0.0.1:${port}); stop it or set PORT`,
      );
      expect(output).not.toContain("    at ");
    } finally {
      blocker.close();
    }
  }, 150_000);
});

describe.each(BACKENDS)("first requests ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  let testKey: string;
  let spec: { paths: Record<string, unknown> };

  beforeAll(async () => {
    t = await startTestApp(backend);
    const p = await t.provider();
    key = p.key;
    const issued = await t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
      auth: await t.token(),
      body: { mode: "test" },
    });
    testKey = ((await issued.json()) as Json).api_key;
    spec = parse(await readFile(SPEC, "utf8")) as typeof spec;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("answers a collection path without its slash 308 to the slash form, keeping method and body", async () => {
    const body = leadBody();
    const res = await fetch(`${t.url}/api/v1/public/leads`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(LEADS);
    // A client that follows it (fetch does, as curl -L does) creates the lead.
    const followed = await fetch(`${t.url}/api/v1/public/leads`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    expect(followed.status).toBe(201);
    expect(((await followed.json()) as Json).external_id).toBe(body.external_id);
    // The query string goes along; no key is asked for before the path is right.
    const list = await fetch(`${t.url}/api/v1/public/leads?state=LEAD&page_size=5`, { redirect: "manual" });
    expect(list.status).toBe(308);
    expect(list.headers.get("location")).toBe(`${LEADS}?state=LEAD&page_size=5`);
  });

  it("redirects every route of the contract that has a slash form", async () => {
    const routes = Object.keys(spec.paths).filter((p) => p.startsWith("/api/") && p.endsWith("/"));
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const path = route.replace(/\{[^}]+\}/g, "7").slice(0, -1);
      const res = await fetch(`${t.url}${path}`, { redirect: "manual" });
      expect(res.status, path).toBe(308);
      expect(res.headers.get("location"), path).toBe(`${path}/`);
    }
  });

  it("answers an unknown path 404 naming the closest route, with or without a key", async () => {
    for (const [path, closest] of [
      ["/api/v1/public/lead/", "/api/v1/public/leads/"],
      ["/api/v1/public/event/", "/api/v1/public/events/"],
      ["/api/v1/lead_provider/", "/api/v1/lead_providers/"],
      ["/api/v1/admin/audit/", "/api/v1/admin/audit_log/"],
    ] as const) {
      for (const auth of [undefined, key]) {
        const res = await t.call("GET", path, { ...(auth && { auth }) });
        expect(res.status, path).toBe(404);
        const problem = (await res.json()) as Json;
        expect(problem.code).toBe("not_found");
        expect(problem.closest_route, path).toBe(closest);
        expect(problem.detail).toContain(closest);
      }
    }
  });

  it("answers a malformed percent-escape in the path with a clear 400, and never suggests a route outside the API", async () => {
    const res = await fetch(`${t.url}/api/v1/public/leads/%E0%A4%A/`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as Json;
    expect(problem.code).toBe("validation_error");
    expect(problem.errors).toEqual([
      { field: "path", code: "invalid", message: "the path has a malformed percent-escape" },
    ]);
    for (const path of ["/api/v1/foo", "/api/v1"]) {
      const res = await t.call("POST", path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as Json).closest_route, path).toMatch(/^\/api\//);
    }
  });

  it("puts livemode at the top of every events-feed item, live and test", async () => {
    await t.call("POST", LEADS, { auth: testKey, body: leadBody() });
    for (const [k, mode] of [
      [key, true],
      [testKey, false],
    ] as const) {
      const feed = (await (await t.call("GET", "/api/v1/public/events/", { auth: k })).json()) as Json;
      expect(feed.results.length).toBeGreaterThan(0);
      for (const item of feed.results) {
        expect(item.livemode).toBe(mode);
        expect(item.data.lead.livemode).toBe(mode);
      }
    }
  });

  it("says when an expired admin token expired", async () => {
    const exp = Math.floor(Date.now() / 1000) - 600;
    const res = await t.call("GET", "/api/v1/lead_providers/", { auth: await t.token({ exp }) });
    expect(res.status).toBe(401);
    const problem = (await res.json()) as Json;
    expect(problem.code).toBe("invalid_token");
    expect(problem.detail).toBe(`the token expired at ${new Date(exp * 1000).toISOString()}`);
    // A forged token's expiry is never read out: it is just invalid.
    const forged = `${(await t.token({ exp })).slice(0, -4)}AAAA`;
    const other = (await (await t.call("GET", "/api/v1/lead_providers/", { auth: forged })).json()) as Json;
    expect(other.detail).toBe("the bearer token is missing or invalid");
  });
});

describe("the contract's lead_status", () => {
  it("documents every value the sandbox sets", async () => {
    const spec = parse(await readFile(SPEC, "utf8")) as Json;
    const described: string = spec.components.schemas.Lead.properties.lead_status.description;
    const values = new Set<string>(["LEAD"]);
    for (const steps of Object.values(SANDBOX_SCENARIOS))
      for (const step of steps as readonly { to: string; leadStatus?: string }[])
        values.add(step.leadStatus ?? step.to);
    for (const v of values) expect(described).toContain(`\`${v}\``);
  });
});

describe("the mock", () => {
  let mock: Prism;
  beforeAll(async () => {
    mock = await startPrism(["mock", SPEC]);
  }, 150_000);
  afterAll(async () => {
    await mock?.stop();
  });

  it("answers the test lead on GET as on POST", async () => {
    const res = await fetch(`${mock.url}${LEADS}crm-test-0001/`, {
      headers: { authorization: "Bearer lp_test_any", prefer: "example=test_lead" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ livemode: false, external_id: "crm-test-0001" });
  });
});
