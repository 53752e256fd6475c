/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and aggregates self time by function and by
 * package. Usable alone: `node bench/lib/profile.ts file.cpuprofile [top]`.
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileLine {
  readonly name: string;
  readonly ms: number;
  /** Share of the busy (non-idle) time, 0–100. */
  readonly percent: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly busyMs: number;
  readonly functions: readonly ProfileLine[];
  readonly packages: readonly ProfileLine[];
}

const ROOT_URL = new URL("../..", import.meta.url).href;

/** Which package (or part of the service) a script URL belongs to. */
export function packageOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node (core)";
  const nm = url.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const parts = url.slice(nm + "/node_modules/".length).split("/");
    return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  if (url.startsWith(ROOT_URL)) {
    const rel = url.slice(ROOT_URL.length).split("/");
    return rel.length > 2 ? `${rel[0]}/${rel[1]}` : rel.join("/");
  }
  return url;
}

function shortUrl(url: string): string {
  if (url.startsWith(ROOT_URL)) return url.slice(ROOT_URL.length);
  const nm = url.lastIndexOf("/node_modules/");
  return nm >= 0 ? url.slice(nm + "/node_modules/".length) : url;
}

const IDLE = new Set(["(idle)", "(program)"]);

/** Microseconds on the monotonic clock, the one V8 stamps samples with (process.hrtime). */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time per function and package. With `window` (monotonic µs, see monotonicUs), only the
 * samples taken inside it count: the load, without start-up and warm-up.
 */
export function summarize(profile: CpuProfile, top = 15, window?: { from: number; to: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window && (at < window.from || at > window.to)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const fns = new Map<string, number>();
  const pkgs = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (IDLE.has(functionName)) {
      idle += us;
      continue;
    }
    const fn = url === "" ? functionName : `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
  }
  const busy = total - idle;
  const lines = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: us / 1000, percent: (100 * us) / busy }));
  return { totalMs: total / 1000, busyMs: busy / 1000, functions: lines(fns), packages: lines(pkgs) };
}

export function summarizeFile(file: string, top = 15, window?: { from: number; to: number }): ProfileSummary {
  return summarize(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, top, window);
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: node bench/lib/profile.ts file.cpuprofile [top]\n");
    process.exit(2);
  }
  const s = summarizeFile(file, Number(top ?? 25));
  process.stdout.write(`busy ${s.busyMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms sampled\n\nby package:\n`);
  for (const l of s.packages) process.stdout.write(`${l.percent.toFixed(1).padStart(6)}%  ${l.name}\n`);
  process.stdout.write("\nby function (self time):\n");
  for (const l of s.functions) process.stdout.write(`${l.percent.toFixed(1).padStart(6)}%  ${l.name}\n`);
}
