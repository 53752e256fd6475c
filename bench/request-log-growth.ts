/**
 * How fast requests without a provider can grow the request log: the service as production runs
 * it on a fresh Postgres database, wrk sending anonymous POSTs of a 64 KiB body as fast as it can
 * (no key, and a wrong key, in turn), from one address and from a new address each request
 * (TRUST_PROXY and X-Forwarded-For), and the growth of request_log and its tallies on disk.
 *
 *   node bench/request-log-growth.ts [seconds]     (BENCH_DATABASE_URL, default the local test database)
 *
 * Writes bench/results/request-log-growth.md. Needs wrk.
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createBenchDatabase } from "./lib/database.ts";
import { ROOT, startService } from "./lib/service.ts";
import { onPath } from "./lib/wrk.ts";

const seconds = Number(process.argv[2] ?? 10);
const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
if (!onPath("wrk")) throw new Error("wrk is not on PATH (apt-get install wrk)");

const secrets = {
  JWT_SECRET: randomBytes(32).toString("hex"),
  API_KEY_SECRET: randomBytes(32).toString("hex"),
  PUBLIC_BASE_URL: "https://api.example.com",
};

/** A wrk script: anonymous POSTs of a 64 KiB body; `spread` gives each request its own address. */
function script(spread: boolean): string {
  const body = JSON.stringify({ external_id: "x", email: "someone@example.com", padding: "p".repeat(64 * 1024 - 80) });
  return `
local body = [==[${body}]==]
local n = 0
function request()
  n = n + 1
  local headers = { ["Content-Type"] = "application/json" }
  if n % 2 == 0 then headers["Authorization"] = "Bearer lp_live_not-a-real-key-0000000000000000" end
  ${spread ? 'headers["X-Forwarded-For"] = string.format("10.%d.%d.%d", math.random(0, 255), math.random(0, 255), math.random(1, 254))' : ""}
  return wrk.format("POST", "/api/v1/public/leads/", headers, body)
end
function done(summary)
  io.write(string.format('\\nWRK_RESULT {"requests":%d,"duration_us":%d}\\n', summary.requests, summary.duration))
end
`;
}

interface Row {
  readonly scenario: string;
  readonly requests: number;
  readonly seconds: number;
  readonly grewBytes: number;
  readonly rows: number;
  readonly tallied: number;
}

async function scenario(name: string, spread: boolean): Promise<Row> {
  const db = await createBenchDatabase(adminUrl);
  const service = await startService({
    env: { ...secrets, DATABASE_URL: db.url, ...(spread && { TRUST_PROXY: "loopback" }) },
  });
  try {
    const size = async () => {
      const [r] = await db.query<{ bytes: string }>(
        "select pg_total_relation_size('request_log') + pg_total_relation_size('request_log_tallies') as bytes",
      );
      return Number(r?.bytes ?? 0);
    };
    await db.query("checkpoint");
    const before = await size();
    const path = `/tmp/request-log-growth-${process.pid}.lua`;
    writeFileSync(path, script(spread));
    const out = spawnSync("wrk", ["-t2", "-c32", `-d${seconds}s`, "-s", path, service.url], { encoding: "utf8" });
    const result = JSON.parse(/WRK_RESULT (\{.*\})/.exec(out.stdout)?.[1] ?? "{}") as {
      requests: number;
      duration_us: number;
    };
    // The log writes within a second; give it two.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = await size();
    const [counts] = await db.query<{ rows: string; tallied: string }>(
      "select (select count(*) from request_log) as rows, (select coalesce(sum(requests), 0) from request_log_tallies) as tallied",
    );
    return {
      scenario: name,
      requests: result.requests,
      seconds: result.duration_us / 1e6,
      grewBytes: after - before,
      rows: Number(counts?.rows),
      tallied: Number(counts?.tallied),
    };
  } finally {
    await service.stop();
    await db.drop();
  }
}

const rows = [await scenario("one address", false), await scenario("a new address each request", true)];
const commit = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
const lines = [
  "# Request log growth from anonymous requests",
  "",
  `\`node bench/request-log-growth.ts ${seconds}\` on commit ${commit}: wrk, 2 threads, 32 connections, anonymous`,
  "POSTs of a 64 KiB body (no key and a wrong key in turn) against the service as production runs it on",
  "a fresh Postgres database; growth is pg_total_relation_size of request_log and request_log_tallies.",
  "",
  "| scenario | requests | req/s | rows listed | requests tallied | growth | growth per second |",
  "|---|--:|--:|--:|--:|--:|--:|",
  ...rows.map(
    (r) =>
      `| ${r.scenario} | ${r.requests} | ${Math.round(r.requests / r.seconds)} | ${r.rows} | ${r.tallied} | ${(r.grewBytes / 1024).toFixed(0)} KiB | ${(r.grewBytes / r.seconds / 1024).toFixed(1)} KiB/s |`,
  ),
  "",
];
writeFileSync(new URL("results/request-log-growth.md", import.meta.url), lines.join("\n"));
process.stdout.write(lines.join("\n"));
