/**
 * Real processes for the reliability tests: the service started with `node src/main.ts` (so it
 * can be SIGKILLed or SIGTERMed), and a private Postgres cluster in a temp dir (so the test may
 * stop or kill its database without touching anyone else's).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { passedEnv } from "./env.ts";
import { busy, pollUntil, START_MS, StopWaiting, tail } from "./timing.ts";

export const PG_BIN = "/usr/lib/postgresql/15/bin";
export const HAS_POSTGRES_BINARIES = existsSync(join(PG_BIN, "initdb"));

export const SECRETS = {
  JWT_SECRET: `test-jwt-secret-${"x".repeat(32)}`,
  API_KEY_SECRET: `test-api-key-secret-${"y".repeat(32)}`,
};

/** Production's settings on the test secrets, with the public base URL production requires. */
export const PRODUCTION = {
  NODE_ENV: "production",
  JWT_SECRET: SECRETS.JWT_SECRET,
  API_KEY_SECRET: SECRETS.API_KEY_SECRET,
  PUBLIC_BASE_URL: "https://api.example.com",
};

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it is true; on giving up names `what`, the last error seen and `pending()`. */
export function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
  pending?: () => string,
): Promise<void> {
  return pollUntil(what, check, { timeoutMs, ...(pending && { pending }) });
}

export interface ServiceProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal name). */
  readonly exited: Promise<number | string>;
}

export async function startService(env: Record<string, string>, port?: number): Promise<ServiceProcess> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      PORT: String(p),
      LOG_LEVEL: "warn",
      ...SECRETS,
      ...passedEnv(),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  const exited = new Promise<number | string>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const url = `http://127.0.0.1:${p}`;
  // Ready when /healthz answers 200, however long the machine takes to start it (up to START_MS).
  try {
    await pollUntil(
      `the service (pid ${child.pid}) to answer ${url}/healthz`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new StopWaiting(`it exited (${child.exitCode ?? child.signalCode}) before answering`);
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) });
        await res.arrayBuffer();
        return { ok: res.ok, seen: `HTTP ${res.status}` };
      },
      { timeoutMs: START_MS, intervalMs: 200, pending: () => `${busy(child.pid)}; its output ends:\n${tail(out)}` },
    );
  } catch (err) {
    child.kill("SIGKILL"); // never leave a half-started service behind
    throw err;
  }
  return { url, port: p, child, output: () => out, exited };
}

/** Runs `node src/main.ts` with `env` to its exit (killed after `timeoutMs`); its code and everything it printed. */
export function runToExit(
  env: Record<string, string>,
  timeoutMs = START_MS,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

export interface PrivatePostgres {
  readonly url: string;
  start(): void;
  /** `immediate` is a crash (no checkpoint); `fast` a clean stop. */
  stop(mode: "immediate" | "fast"): void;
  destroy(): void;
}

/** A throw-away Postgres cluster on a free port, loopback only, run as the postgres user. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "lp-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const port = await freePort();
  const asPostgres = (cmd: string, args: string[]) => {
    const runAs =
      process.getuid?.() === 0
        ? ["runuser", ["-u", "postgres", "--", join(PG_BIN, cmd), ...args]]
        : [join(PG_BIN, cmd), args];
    execFileSync(runAs[0] as string, runAs[1] as string[], { stdio: "pipe" });
  };
  asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const pgCtl = (args: string[]) => asPostgres("pg_ctl", ["-D", data, ...args]);
  const start = () =>
    pgCtl([
      "start",
      "-w",
      "-l",
      join(dir, "log"),
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on`,
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop: (mode) => pgCtl(["stop", "-w", "-m", mode]),
    destroy() {
      try {
        pgCtl(["stop", "-m", "immediate"]);
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const randomName = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

/** Creates a provider with generous limits on a running service and returns its key. */
export async function createProviderKey(url: string): Promise<{ id: number; key: string }> {
  const { SignJWT } = await import("jose");
  const token = await new SignJWT({ position: "ADMIN" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject("reliability-test")
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(SECRETS.JWT_SECRET));
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const created = await fetch(`${url}/api/v1/lead_providers/create/`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      name: randomName("reliability"),
      rate_limit_per_minute: 100000,
      rate_limit_per_day: 10000000,
    }),
  });
  const { id } = (await created.json()) as { id: number };
  const issued = await fetch(`${url}/api/v1/lead_providers/${id}/generate_api_key/`, { method: "POST", headers });
  const { api_key } = (await issued.json()) as { api_key: string };
  return { id, key: api_key };
}
