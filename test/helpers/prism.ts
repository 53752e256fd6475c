/**
 * Starts Stoplight Prism (the npm-installed CLI, run by this Node, never through npx) as a child
 * process on a free loopback port, waits until it listens, and stops it by its own pid so the port
 * is freed at once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pollUntil, START_MS, StopWaiting, tail } from "./timing.ts";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const SPEC_FILE = join(ROOT, "openapi", "openapi.yaml");

export interface Prism {
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** The CLI script behind node_modules/.bin/prism. */
function prismCli(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("@stoplight/prism-cli/package.json")), "dist", "index.js");
}

/** A port that was free a moment ago (Prism needs a number; it cannot report a port 0 choice). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `prism mock <spec>` or `prism proxy <spec> <upstream>` plus `args`, on 127.0.0.1 and a free port.
 * Rejects with Prism's output when it exits first or does not listen within START_MS.
 */
export async function startPrism(args: readonly string[]): Promise<Prism> {
  const port = await freePort();
  return launch(process.execPath, [prismCli(), ...args, "--host", "127.0.0.1", "--port", String(port)], port);
}

/**
 * `make mock PORT=<free port>`, exactly as an integrator runs it (`-o node_modules/.installed`: never
 * reinstall dependencies from inside a test run).
 */
export async function startMakeMock(): Promise<Prism> {
  const port = await freePort();
  // Not a sub-make of `make test`: its flags and command-line variables (MAKEFLAGS) stay out.
  const { MAKEFLAGS: _flags, MFLAGS: _mflags, MAKELEVEL: _level, ...env } = process.env;
  return launch("make", ["-s", "-o", "node_modules/.installed", "mock", `PORT=${port}`], port, env);
}

async function launch(
  command: string,
  args: readonly string[],
  port: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Prism> {
  const label = command === process.execPath ? ["prism", ...args.slice(1)].join(" ") : [command, ...args].join(" ");
  // Its own process group, so stop() ends the whole tree it started (make → prism) and only that.
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  let log = "";
  const append = (chunk: Buffer) => {
    log += chunk.toString("utf8");
    // Keep the tail only: Prism logs every request.
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = (name: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, name);
    } catch {
      // already gone
    }
  };

  const stop = async () => {
    if (!running()) return;
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
    signal("SIGKILL"); // whatever of the group outlived its leader (prism under make)
  };

  try {
    await pollUntil(
      `${label} to listen on port ${port}`,
      () => {
        if (!running()) throw new StopWaiting(`it exited (${child.exitCode ?? child.signalCode})`);
        return /Prism is listening on/.test(log);
      },
      { timeoutMs: START_MS, pending: () => `its output ends:\n${tail(log)}` },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, port, stop };
}
