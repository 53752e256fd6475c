/**
 * Child processes of the bench (the service, pgbench): every one is registered so that an error,
 * SIGINT or SIGTERM kills exactly the processes this bench started, and nothing else.
 */
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { once } from "node:events";

const children = new Set<ChildProcess>();

export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (or signal). */
export async function terminate(child: ChildProcess, graceMs = 10_000): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  const exited = once(child, "exit") as Promise<[number | null, string | null]>;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return code ?? signal;
}

/** Kills every process still running (synchronously: safe in an exit handler). */
export function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
}

let interrupted = false;

/** True once SIGINT/SIGTERM arrived: failures after that are the interruption's doing. */
export const wasInterrupted = () => interrupted;

/** Runs cleanups once on SIGINT/SIGTERM, then exits 130/143; kills children on any exit. */
export function onInterrupt(cleanup: () => Promise<void>): void {
  const handler = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\nbench: ${signal}, cleaning up\n`);
    for (const child of children) child.kill("SIGTERM");
    cleanup()
      .catch((err: unknown) => process.stderr.write(`bench: cleanup failed: ${String(err)}\n`))
      .finally(() => {
        killAll();
        process.exit(signal === "SIGINT" ? 130 : 143);
      });
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  process.on("exit", killAll);
}

/** Runs a command to completion, collecting its output. */
export async function run(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnTracked(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}
