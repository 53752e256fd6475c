/**
 * Starts the service as production runs it (`node <flags> src/start.mjs`, NODE_ENV=production, explicit
 * secrets) in a child process, waits for /healthz, and reads its memory from /proc.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { spawnTracked, terminate } from "./processes.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServiceOptions {
  /** Environment on top of the production defaults below (DATABASE_URL or DATA_DIR, secrets…). */
  readonly env: Record<string, string>;
  /** Extra node flags, e.g. --cpu-prof. */
  readonly nodeArgs?: readonly string[];
  readonly startTimeoutMs?: number;
  /** The checkout to run (default: this one); BENCH_SERVICE_DIR compares another one. */
  readonly root?: string;
  /** The script to run instead of the service (bench/floor.ts), from this checkout. */
  readonly script?: string;
}

export interface Service {
  readonly pid: number;
  readonly url: string;
  /** Milliseconds from spawn until /healthz answered 200. */
  readonly readyMs: number;
  /** `startup_ms` from the "lead provider api listening" log line (needs LOG_LEVEL=info). */
  startupMs(): number | undefined;
  /** Current resident memory and its peak so far (VmRSS, VmHWM), in MiB: the largest process's
   * (with WEB_CONCURRENCY, the primary and each worker are measured on their own). */
  memory(): { rssMb: number; peakMb: number };
  /** CPU seconds used so far by the service's processes (the primary and its workers). */
  cpuSeconds(): number;
  /** The service's processes: its own pid and its workers'. */
  pids(): number[];
  /** Starts a new peak: VmHWM is set back to the current RSS (/proc/pid/clear_refs). */
  resetPeak(): void;
  /** The last lines the service wrote (for failures). */
  tail(): string;
  stop(): Promise<number | string | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function procMemory(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

/**
 * How production starts the service: package.json's `start` script (`NAME=value… node <flags>
 * <entry>`, the entry src/start.mjs, or src/main.ts in older checkouts), the one place it is
 * written: the environment it sets, node's flags and the entry.
 */
export function productionCommand(root = ROOT): { env: Record<string, string>; flags: string[]; entry: string } {
  const start = (JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as { scripts?: { start?: string } }).scripts
    ?.start;
  const words = (start ?? "").split(/\s+/);
  const node = words.indexOf("node");
  const entry = words.findIndex((w, i) => i > node && !w.startsWith("-"));
  if (node === -1 || entry === -1) return { env: {}, flags: [], entry: "src/main.ts" };
  const env: Record<string, string> = {};
  for (const word of words.slice(0, node)) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word);
    if (m) env[m[1] as string] = m[2] as string;
  }
  return { env, flags: words.slice(node + 1, entry), entry: words[entry] as string };
}

/** The environment production's start command sets (e.g. MALLOC_ARENA_MAX). */
export function productionEnv(root = ROOT): Record<string, string> {
  return productionCommand(root).env;
}

/** The node flags of production's start command. */
export function productionNodeFlags(root = ROOT): string[] {
  return productionCommand(root).flags;
}

/**
 * Fills Node's compile cache for the entry (src/start.mjs turns it on), as `make install` does
 * on a deployment: the entry is run with a configuration it refuses, so it loads every module
 * and exits (78) at once. A service started after this one never loads Node's type stripper.
 */
export function warmCompileCache(root = ROOT): void {
  const { entry } = productionCommand(root);
  spawnSync(process.execPath, [entry], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", PORT: "not-a-port" },
    stdio: "ignore",
  });
}

export async function startService(options: ServiceOptions): Promise<Service> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawnTracked(
    process.execPath,
    [
      ...(options.script ? [] : productionNodeFlags(options.root ?? process.env.BENCH_SERVICE_DIR ?? ROOT)),
      ...(options.nodeArgs ?? []),
      options.script ?? productionCommand(options.root ?? process.env.BENCH_SERVICE_DIR ?? ROOT).entry,
    ],
    {
      cwd: options.script ? ROOT : (options.root ?? process.env.BENCH_SERVICE_DIR ?? ROOT),
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        NODE_ENV: "production",
        LOG_LEVEL: "warn",
        HOST: "127.0.0.1",
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        ...(options.script ? {} : productionEnv(options.root ?? process.env.BENCH_SERVICE_DIR ?? ROOT)),
        ...options.env,
      },
    },
  );
  const lines: string[] = [];
  let startupMs: number | undefined;
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString().split("\n")) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > 50) lines.shift();
      if (line.includes('"lead provider api listening"')) {
        try {
          startupMs = (JSON.parse(line) as { startup_ms?: number }).startup_ms;
        } catch {}
      }
    }
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

  const url = `http://127.0.0.1:${port}`;
  const deadline = started + (options.startTimeoutMs ?? 60_000);
  let readyMs: number | undefined;
  while (readyMs === undefined) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${lines.join("\n")}`);
    if (performance.now() > deadline) {
      await terminate(child);
      throw new Error(`service did not answer /healthz in time:\n${lines.join("\n")}`);
    }
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) readyMs = performance.now() - started;
    } catch {}
    if (readyMs === undefined) await new Promise((r) => setTimeout(r, 10));
  }
  const pid = child.pid as number;
  return {
    pid,
    url,
    readyMs,
    startupMs: () => startupMs,
    memory: () => {
      const all = processTree(pid).map((p) => procMemory(p));
      return { rssMb: Math.max(...all.map((m) => m.rssMb)), peakMb: Math.max(...all.map((m) => m.peakMb)) };
    },
    cpuSeconds: () => processTree(pid).reduce((sum, p) => sum + procCpuSeconds(p), 0),
    pids: () => processTree(pid),
    resetPeak: () => {
      for (const p of processTree(pid)) writeFileSync(`/proc/${p}/clear_refs`, "5");
    },
    tail: () => lines.join("\n"),
    stop: () => terminate(child, 15_000),
  };
}

/** `pid` and its child processes (cluster workers). */
export function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    const p = Number(name);
    if (!Number.isInteger(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(p);
    } catch {
      // exited meanwhile
    }
  }
  return [pid, ...children];
}

/** CPU seconds the process (all its threads) has spent in user and in kernel mode so far. */
export function procCpu(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of /proc/pid/stat (utime, stime) in clock ticks; USER_HZ is 100 on Linux.
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** CPU seconds (user + system) the process has used so far. */
export function procCpuSeconds(pid: number): number {
  const { user, system } = procCpu(pid);
  return user + system;
}
