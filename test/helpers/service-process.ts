/**
 * The service as production starts it, in a child process: `node <package.json start flags>
 * src/main.ts` against a fresh Postgres database (TEST_DATABASE_URL), e.g. with WEB_CONCURRENCY=2.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { productionEnv, productionNodeFlags } from "../../bench/lib/service.ts";
import { type ServiceClient, serviceClient } from "./app.ts";
import { createTestDatabase } from "./database.ts";
import { passedEnv } from "./env.ts";
import { busy, pollUntil, START_MS, StopWaiting, tail } from "./timing.ts";

export interface ServiceProcess extends ServiceClient {
  readonly child: ChildProcess;
  /** Everything the service printed so far. */
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | string | null>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Runs `node src/main.ts` with `env` until `stop()`; resolves once `readyLine` was logged. */
export async function startServiceProcess(
  env: Record<string, string>,
  readyLine = '"all workers listening"',
): Promise<ServiceProcess> {
  const database = await createTestDatabase({ name: "postgres" });
  const port = await freePort();
  const secret = randomBytes(32).toString("hex");
  const child = spawn(process.execPath, [...productionNodeFlags(), "src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      ...productionEnv(),
      NODE_ENV: "production",
      LOG_LEVEL: "info",
      HOST: "127.0.0.1",
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: database.url as string,
      JWT_SECRET: secret,
      API_KEY_SECRET: randomBytes(32).toString("hex"),
      AUTH_FAILURES_PER_MINUTE: "100000",
      ...passedEnv(),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  // Ready when it logs `readyLine`, however long the machine takes (up to START_MS).
  try {
    await pollUntil(
      `the service (pid ${child.pid}) to log ${readyLine}`,
      () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new StopWaiting(`it exited (${child.exitCode ?? child.signalCode}) first`);
        return output.includes(readyLine);
      },
      { timeoutMs: START_MS, intervalMs: 50, pending: () => `${busy(child.pid)}; its output ends:\n${tail(output)}` },
    );
  } catch (err) {
    child.kill("SIGKILL");
    await database.drop().catch(() => {});
    throw err;
  }
  return {
    ...serviceClient(port, { secret }),
    child,
    output: () => output,
    async stop(graceMs = 20_000) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
      }
      await database.drop();
      return child.exitCode ?? child.signalCode;
    },
  };
}
