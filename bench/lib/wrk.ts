/**
 * REST load with wrk (Debian's `wrk`): C, two threads, N keep-alive HTTP/1.1 connections, each
 * request made by a Lua script: a random bench key per request, a random seeded lead for GET,
 * and for POST a body from one of many lead templates with a fresh external id each time. wrk
 * counts a status ≥ 400 as an error; the script's done() hands the figures over as one JSON line.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeLead, restBody } from "./leads.ts";
import { run } from "./processes.ts";
import type { LoadResult } from "./stats.ts";

export interface WrkOptions {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly op: "create" | "get";
  readonly keys: readonly string[];
  /** GET targets: `${prefix}1` … `${prefix}${count}`. */
  readonly targets: { readonly prefix: string; readonly count: number };
  /** Makes the created external ids unique across runs. */
  readonly runId: string;
}

const lua = (s: string) => `[==[${s}]==]`;
const MARK = "__EXTERNAL_ID__";

function script(o: WrkOptions): string {
  const keys = `local keys = {${o.keys.map((k) => lua(`Bearer ${k}`)).join(",")}}`;
  const templates = Array.from({ length: 64 }, () => restBody(makeLead(MARK)).split(MARK));
  const bodies = `local bodies = {${templates.map(([a, b]) => `{${lua(a ?? "")},${lua(b ?? "")}}`).join(",")}}`;
  const request =
    o.op === "get"
      ? `function request()
  local path = "/api/v1/public/leads/${o.targets.prefix}" .. math.random(${o.targets.count}) .. "/"
  return wrk.format("GET", path, { ["Authorization"] = keys[math.random(#keys)] })
end`
      : `local n = 0
function request()
  n = n + 1
  local t = bodies[math.random(#bodies)]
  local body = t[1] .. "wrk-${o.runId}-" .. tid .. "-" .. n .. t[2]
  return wrk.format("POST", "/api/v1/public/leads/", {
    ["Authorization"] = keys[math.random(#keys)], ["Content-Type"] = "application/json" }, body)
end`;
  return `${keys}
${bodies}
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  math.randomseed(os.time() * 1000 + tid)
end
${request}
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nWRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

/** Whether a command is on PATH (wrk, h2load come from Debian packages, not npm). */
export function onPath(command: string): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && existsSync(join(dir, command)));
}

export async function runWrk(o: WrkOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "lp-wrk-"));
  try {
    const file = join(dir, `${o.op}.lua`);
    writeFileSync(file, script(o));
    const out = await run("wrk", [
      "-t",
      "2",
      "-c",
      String(o.connections),
      "-d",
      `${o.seconds}s`,
      "--timeout",
      "10s",
      "-s",
      file,
      o.url,
    ]);
    const line = /WRK_RESULT (\{.*\})/.exec(out.stdout)?.[1];
    if (out.code !== 0 || line === undefined) throw new Error(`wrk failed (${out.code}):\n${out.stderr}${out.stdout}`);
    const r = JSON.parse(line) as Record<string, number>;
    const n = (k: string) => r[k] ?? 0;
    const socketErrors = n("connect") + n("read") + n("write") + n("timeout");
    const errors = n("status") + socketErrors;
    const ok = n("requests") - n("status");
    const seconds = n("duration_us") / 1e6;
    const samples: string[] = [];
    if (n("status") > 0) samples.push(`${n("status")} answers with a status ≥ 400`);
    if (socketErrors > 0) samples.push(`socket errors: ${JSON.stringify(r)}`);
    return {
      ok,
      errors,
      seconds,
      rps: ok / seconds,
      p50: n("p50_us") / 1000,
      p99: n("p99_us") / 1000,
      errorSamples: samples,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
