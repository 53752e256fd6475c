/** Formats the results as the markdown written to bench/results/latest.md. */
import type { CpuShares } from "./cpu.ts";
import type { ProfileSummary } from "./profile.ts";
import type { LoadResult } from "./stats.ts";

export interface Row {
  readonly label: string;
  readonly connections: number;
  readonly result: LoadResult;
  /** Service RSS (MiB) right after the scenario; undefined for pgbench. */
  readonly rssMb?: number;
  /** Service CPU time (user + system, all threads) per successful request, ms. */
  readonly cpuMsPerRequest?: number;
  /** Where the machine's CPU went meanwhile. */
  readonly cpu?: CpuShares;
  /** The row this one is compared with (pgbench at the same count); undefined for baselines. */
  readonly baseline?: LoadResult;
}

export interface Target {
  readonly name: string;
  readonly measured: string;
  readonly pass: boolean;
}

export const fmt = {
  rps: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—"),
  ms: (n: number) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : "—"),
  ratio: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : "—"),
  mb: (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? "—" : n.toFixed(0)),
};

function cpuShares(c: CpuShares | undefined): string {
  if (!c) return "—";
  return [c.service, c.postgres, c.loadGenerator, c.other].map((p) => p.toFixed(0)).join(" / ");
}

export function resultsTable(rows: readonly Row[], versus = "pgbench"): string {
  const out = [
    `| Operation | Conns | req/s | p50 ms | p99 ms | Errors | RSS MiB | Service CPU ms/req | CPU % svc / pg / gen / other | req/s ÷ ${versus} | p50 ÷ ${versus} | p99 ÷ ${versus} |`,
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const r of rows) {
    const b = r.baseline;
    const ratio = (a: number, base: number | undefined) => (base === undefined ? "" : fmt.ratio(a / base));
    out.push(
      `| ${r.label} | ${r.connections} | ${fmt.rps(r.result.rps)} | ${fmt.ms(r.result.p50)} | ${fmt.ms(r.result.p99)} | ${r.result.errors} | ${fmt.mb(r.rssMb)} | ${r.cpuMsPerRequest === undefined ? "—" : r.cpuMsPerRequest.toFixed(2)} | ${cpuShares(r.cpu)} | ${ratio(r.result.rps, b?.rps)} | ${ratio(r.result.p50, b?.p50)} | ${ratio(r.result.p99, b?.p99)} |`,
    );
  }
  return out.join("\n");
}

/** One scenario as the floor table shows it. */
export interface FloorRow {
  readonly label: string;
  readonly connections: number;
  readonly result: LoadResult;
  readonly cpuMsPerRequest: number;
  readonly peakMb: number;
  readonly cpu: CpuShares;
  /** The bare-Node floor's figures for the same operation; undefined for the floor's own rows. */
  readonly floor?: { readonly result: LoadResult; readonly cpuMsPerRequest: number };
}

export function floorTable(rows: readonly FloorRow[]): string {
  const out = [
    "| Operation | Conns | req/s | ÷ floor | p50 ms | p99 ms | Errors | CPU ms/req | ÷ floor's | Peak RSS MiB | CPU % svc / pg / gen / other |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const r of rows) {
    const f = r.floor;
    out.push(
      `| ${r.label} | ${r.connections} | ${fmt.rps(r.result.rps)} | ${f ? fmt.ratio(r.result.rps / f.result.rps) : ""} | ${fmt.ms(r.result.p50)} | ${fmt.ms(r.result.p99)} | ${r.result.errors} | ${r.cpuMsPerRequest.toFixed(3)} | ${f ? fmt.ratio(r.cpuMsPerRequest / f.cpuMsPerRequest) : ""} | ${fmt.mb(r.peakMb)} | ${cpuShares(r.cpu)} |`,
    );
  }
  return out.join("\n");
}

export function targetsTable(targets: readonly Target[]): string {
  return [
    "| Target | Measured | Result |",
    "|---|---|---|",
    ...targets.map((t) => `| ${t.name} | ${t.measured} | ${t.pass ? "PASS" : "**FAIL**"} |`),
  ].join("\n");
}

export function profileSection(title: string, s: ProfileSummary, top: number, note = ""): string {
  const pct = (p: number) => `${p.toFixed(1)}%`;
  return [
    `#### ${title}`,
    "",
    `Main thread busy ${(s.busyMs / 1000).toFixed(1)} s of ${(s.totalMs / 1000).toFixed(1)} s sampled. ${note}`,
    "",
    "Self time by package:",
    "",
    "| Package | Self | Share of busy |",
    "|---|--:|--:|",
    ...s.packages.slice(0, 10).map((l) => `| ${l.name} | ${l.ms.toFixed(0)} ms | ${pct(l.percent)} |`),
    "",
    `Top ${top} functions by self time:`,
    "",
    "| Function | Self | Share of busy |",
    "|---|--:|--:|",
    ...s.functions
      .slice(0, top)
      .map((l) => `| \`${l.name.replaceAll("|", "\\|")}\` | ${l.ms.toFixed(0)} ms | ${pct(l.percent)} |`),
  ].join("\n");
}
