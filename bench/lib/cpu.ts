/**
 * Where the machine's CPU went during a scenario, from /proc: the service, Postgres (backends of
 * the bench database and the server's own processes), the load generator (this process and its
 * other children, e.g. pgbench), and everything else, so a result taken on a busy machine says so.
 * Processes are sampled every 200 ms; one that lives shorter than that is missed.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface CpuShares {
  /** Percent of one core (200 = both cores of a 2-core machine). Postgres: the bench database's
   * backends and the server's own processes; other: everything else (other databases' backends too). */
  readonly service: number;
  readonly postgres: number;
  readonly loadGenerator: number;
  readonly other: number;
}

type Kind = keyof CpuShares;

const TICKS_PER_SECOND = 100; // USER_HZ

interface Stat {
  readonly ppid: number;
  readonly ticks: number;
}

function readStat(pid: string): Stat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined; // exited meanwhile
  }
}

function readCmdline(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

export function watchCpu(servicePid: number | undefined, databaseName: string): { stop(): CpuShares } {
  const self = process.pid;
  const started = performance.now();
  const seen = new Map<number, { kind: Kind; first: number; last: number }>();
  let initial = true;

  const classify = (pid: number, stat: Stat): Kind => {
    if (pid === servicePid || (servicePid !== undefined && stat.ppid === servicePid)) return "service";
    if (pid === self || stat.ppid === self) return "loadGenerator";
    const cmd = readCmdline(String(pid));
    if (cmd.startsWith("postgres: ") || cmd.includes("/bin/postgres ")) {
      // "postgres: [cluster: ]user database host(port) state" for backends; the server's own
      // processes (postmaster, WAL writer, checkpointer…) name no database and count as Postgres.
      if (cmd.includes(` ${databaseName} `)) return "postgres";
      return /\slp_\w+\s/.test(cmd) ? "other" : "postgres";
    }
    return "other";
  };

  const sample = () => {
    for (const name of readdirSync("/proc")) {
      const pid = Number(name);
      if (!Number.isInteger(pid)) continue;
      const stat = readStat(name);
      if (!stat) continue;
      const known = seen.get(pid);
      if (known) known.last = stat.ticks;
      // A process first seen after the first sample started inside the window: all its ticks count.
      else seen.set(pid, { kind: classify(pid, stat), first: initial ? stat.ticks : 0, last: stat.ticks });
    }
    initial = false;
  };
  sample();
  const timer = setInterval(sample, 200);
  timer.unref();

  return {
    stop() {
      clearInterval(timer);
      sample();
      const seconds = (performance.now() - started) / 1000;
      const totals: Record<Kind, number> = { service: 0, postgres: 0, loadGenerator: 0, other: 0 };
      for (const p of seen.values()) totals[p.kind] += p.last - p.first;
      const pct = (ticks: number) => (100 * ticks) / TICKS_PER_SECOND / seconds;
      return {
        service: pct(totals.service),
        postgres: pct(totals.postgres),
        loadGenerator: pct(totals.loadGenerator),
        other: pct(totals.other),
      };
    },
  };
}
