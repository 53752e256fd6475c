/**
 * One process per embedded data directory (src/db/data-dir-lock.ts), with real processes: the
 * lock belongs to the directory, not to the path it was named by. While one service holds a
 * DATA_DIR, a second `node src/main.ts` given another path to the same directory (a symlink, a
 * path with `/./`, one through `..`) exits 78 naming the holder's pid, before it opens anything;
 * a holder killed with SIGKILL leaves the directory free for the next start.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runToExit, SECRETS, startService } from "./helpers/processes.ts";

const LISTENING = '"lead provider api listening"';

/** `node src/main.ts` on `dataDir`, and its output so far. */
function serve(dataDir: string, port: number): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "info",
      ...SECRETS,
      DATA_DIR: dataDir,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d) => {
    output += String(d);
  });
  child.stderr?.on("data", (d) => {
    output += String(d);
  });
  return { child, output: () => output };
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()));

/** A second `node src/main.ts` on `dataDir`: how it ended, or `started` when it took the directory (then killed). */
async function runSecond(dataDir: string): Promise<{ code: number | null; started: boolean; output: string }> {
  const { child, output } = serve(dataDir, await freePort());
  const deadline = Date.now() + 120_000;
  while (child.exitCode === null && !output().includes(LISTENING) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const started = output().includes(LISTENING);
  if (child.exitCode === null) child.kill("SIGKILL");
  await exited(child);
  return { code: child.exitCode, started, output: output() };
}

describe("the data directory's lock", () => {
  let base: string;
  let dir: string;
  let holder: ReturnType<typeof serve>;
  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), "lp-dir-lock-"));
    dir = join(base, "data");
    mkdirSync(join(base, "sibling"));
    holder = serve(dir, await freePort());
    const deadline = Date.now() + 150_000; // a first start migrates the new database
    while (!holder.output().includes(LISTENING)) {
      if (holder.child.exitCode !== null || Date.now() > deadline) throw new Error(`holder: ${holder.output()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 180_000);
  afterAll(async () => {
    holder?.child.kill("SIGKILL");
    if (holder) await exited(holder.child);
    rmSync(base, { recursive: true, force: true });
  });

  it.each([
    [
      "a symlink to it",
      () => {
        const link = join(base, "link");
        symlinkSync(dir, link);
        return link;
      },
    ],
    ["a path through /./", () => `${base}/./data`],
    ["a path through ..", () => `${base}/sibling/../data`],
  ])(
    "refuses a second process given %s (78, naming the holder)",
    async (_what, path) => {
      const second = await runSecond(path());
      expect(second.started, second.output).toBe(false);
      expect(second.code, second.output).toBe(78);
      expect(second.output).toContain("is in use by another process");
      expect(second.output).toContain(`pid ${holder.child.pid}`);
      expect(holder.child.exitCode).toBeNull(); // the holder is untouched
    },
    180_000,
  );
});

describe("one service per data directory", () => {
  it("refuses a second process on the directory (78, naming it and the holder's pid), and a kill -9 frees it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lp-lock-"));
    try {
      const first = await startService({ DATA_DIR: dir });
      const second = await runToExit({ DATA_DIR: dir, PORT: String(await freePort()) });
      expect(second.code).toBe(78);
      // One line besides the development-secret warnings (on stdout; the refusal is on stderr, and
      // which pipe's bytes arrive first is not fixed).
      const lines = second.output
        .trim()
        .split("\n")
        .filter((l) => !l.includes("development secret"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(dir);
      expect(lines[0]).toContain(`pid ${first.child.pid}`);
      expect(second.output).not.toContain("    at "); // one line, no stack trace

      // What the first acknowledged survives; the second never touched the directory.
      const admin = await fetch(`${first.url}/api/v1/lead_providers/create/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(admin.status).toBe(401);

      first.child.kill("SIGKILL");
      await first.exited;
      const third = await startService({ DATA_DIR: dir });
      expect((await fetch(`${third.url}/readyz`)).status).toBe(200);
      third.child.kill("SIGTERM");
      expect(await third.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Three starts of the service on the directory (the second refused).
  }, 390_000);
});
