/**
 * One process per embedded data directory. PGlite keeps no lock of its own, so two processes on
 * one DATA_DIR would both start and each overwrite the other's writes. The lock is a listening
 * Unix socket in Linux's abstract namespace, named after the directory's device and inode: the
 * kernel lets one socket hold a name at a time and frees it the moment its process ends, however
 * it ends (kill -9 included), so a crash never leaves a stale lock behind. The holder answers a
 * connection with its pid, so a refused start can name it. Elsewhere (no abstract namespace) the
 * socket is a file in the directory; one nobody answers on is stale and is replaced.
 */
import { statSync, unlinkSync } from "node:fs";
import net from "node:net";
import { join, resolve } from "node:path";

export class DataDirLockedError extends Error {
  readonly dir: string;
  readonly holderPid: number | undefined;
  constructor(dir: string, holderPid: number | undefined) {
    super(
      `DATA_DIR ${dir} is in use by another process${holderPid === undefined ? "" : ` (pid ${holderPid})`}; ` +
        "one process per data directory: stop it, or give this one another DATA_DIR or a DATABASE_URL",
    );
    this.name = "DataDirLockedError";
    this.dir = dir;
    this.holderPid = holderPid;
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

function socketAddress(dir: string): string {
  if (process.platform === "linux") {
    const { dev, ino } = statSync(dir, { bigint: true });
    return `\0lead-provider-api:data-dir:${dev}:${ino}`;
  }
  return join(dir, ".lock.sock");
}

function listen(address: string): Promise<net.Server> {
  return new Promise((ok, fail) => {
    const server = net.createServer((socket) => socket.end(`${process.pid}\n`));
    server.once("error", fail);
    server.listen(address, () => {
      server.off("error", fail);
      server.unref(); // the lock never keeps the process alive
      ok(server);
    });
  });
}

/** The pid the holder answers with; undefined when nobody answers (a stale socket file). */
function askHolder(address: string): Promise<{ answered: boolean; pid: number | undefined }> {
  return new Promise((done) => {
    const socket = net.connect(address);
    let text = "";
    const timer = setTimeout(() => socket.destroy(), 2000);
    socket.on("data", (d) => {
      text += String(d);
    });
    socket.on("connect", () => undefined);
    socket.on("error", () => {
      clearTimeout(timer);
      done({ answered: false, pid: undefined });
    });
    socket.on("close", (hadError) => {
      clearTimeout(timer);
      if (hadError) return;
      const pid = Number.parseInt(text, 10);
      done({ answered: true, pid: Number.isSafeInteger(pid) ? pid : undefined });
    });
  });
}

/** Takes the directory's lock or throws DataDirLockedError naming the holder. */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const shown = resolve(dir);
  const address = socketAddress(dir);
  for (let tries = 0; ; tries++) {
    try {
      const server = await listen(address);
      return {
        release: () => new Promise<void>((done) => server.close(() => done())),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
      const holder = await askHolder(address);
      if (holder.answered || address.startsWith("\0") || tries > 0) throw new DataDirLockedError(shown, holder.pid);
      unlinkSync(address); // a socket file its dead owner left behind
    }
  }
}
