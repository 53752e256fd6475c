/**
 * What HTTP/2 costs on this platform, without any of the service: bare Node servers
 * answering a pre-encoded response, loaded as the head-to-head loads the service.
 *
 *   node bench/h2-platform.ts [seconds]      (make bench-h2; needs wrk and h2load)
 *
 * - `http1`: node:http answering a lead's JSON (1.2 KB), loaded by wrk, 64 keep-alive connections;
 * - `h2 compat`: node:http2's request/response API (what the service's gRPC fast path uses)
 *   answering a pre-encoded GetLead response frame and `grpc-status: 0` trailers, loaded by h2load
 *   over h2c, 4 connections × 16 streams;
 * - `h2 stream`: the same answer through node:http2's stream API (`respond`, `sendTrailers`).
 *
 * Each server runs in its own process; the figures are its req/s and CPU per request. The ratio
 * of an h2 server to http1 is the ceiling a gRPC path can reach against a REST one on Node: what
 * is left above it in the service is ours.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LEAD = {
  id: 7_261_902_845_440_123,
  livemode: true,
  order_number: "LP-0000123456",
  state: "QUOTE",
  lead_status: "QUOTE",
  external_id: "seed-1234",
  created_at: "2026-11-25T10:00:00.000Z",
  updated_at: "2026-11-25T11:00:00.000Z",
  state_changed_at: "2026-11-25T11:00:00.000Z",
  first_name: "Olivia",
  last_name: "Garcia",
  email: "olivia.garcia@example.com",
  phone_number: "(310) 555-0142",
  phone_e164: "+13105550142",
  estimated_ship_date: "2026-12-10",
  overseas_type: "DOMESTIC",
  ship_via: "OPEN",
  origin: { zip: "90210", city: "Beverly Hills", state: "CA", state_id: 5 },
  destination: { zip: "10001", city: "New York", state: "NY", state_id: 33 },
  vehicles: [{ year: 2021, make: "Toyota", model: "Camry", type: "CAR", tariff: 950, deposit: 150, vehicle_run: true }],
  history: [
    { from_state: null, to_state: "LEAD", lead_status: "LEAD", changed_at: "2026-11-25T10:00:00.000Z", actor: "p" },
    { from_state: "LEAD", to_state: "QUOTE", lead_status: "QUOTE", changed_at: "2026-11-25T11:00:00.000Z", actor: "p" },
  ],
  billable: true,
};
const JSON_BODY = Buffer.from(JSON.stringify(LEAD));
/** A gRPC response frame of the same size (the bytes do not matter to the transport). */
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0x03, 0x20]), Buffer.alloc(800, 0x61)]);

function serve(kind: string): void {
  const listening = (port: number) => process.stdout.write(`${port}\n`);
  if (kind === "http1") {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": JSON_BODY.length });
        res.end(JSON_BODY);
      });
    });
    server.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port));
    return;
  }
  if (kind === "h2-compat") {
    const server = http2.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/grpc+proto" });
        res.addTrailers({ "grpc-status": "0" });
        res.end(FRAME);
      });
    });
    server.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port));
    return;
  }
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.resume();
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(FRAME);
    });
  });
  server.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port));
}

/** User + system CPU seconds of a process, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function measure(kind: string, seconds: number): Promise<{ kind: string; rps: number; cpuMs: number }> {
  const child = spawn(process.execPath, [import.meta.filename, "--serve", kind], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve) => child.stdout.once("data", (d: Buffer) => resolve(Number(d))));
  const url = `http://127.0.0.1:${port}`;
  const load = (s: number) => {
    if (kind === "http1") {
      const out = spawnSync("wrk", ["-t2", "-c64", `-d${s}s`, `${url}/api/v1/public/leads/seed-1/`], {
        encoding: "utf8",
      });
      return Number(/Requests\/sec:\s+([\d.]+)/.exec(out.stdout)?.[1] ?? 0);
    }
    const body = join(tmpdir(), "h2-platform-get.bin");
    writeFileSync(body, Buffer.from([0, 0, 0, 0, 11, 10, 9, ...Buffer.from("seed-1234")]));
    const out = spawnSync(
      "h2load",
      [
        "-c4",
        "-m16",
        `-D${s}`,
        "-d",
        body,
        "-H",
        "content-type: application/grpc",
        "-H",
        "te: trailers",
        `${url}/leadprovider.v1.PublicLeadService/GetLead`,
      ],
      { encoding: "utf8" },
    );
    return Number(/finished in [\d.]+m?s, ([\d.]+) req\/s/.exec(out.stdout)?.[1] ?? 0);
  };
  load(2); // warm-up
  const cpu0 = cpuSeconds(child.pid as number);
  const rps = load(seconds);
  const cpuMs = ((cpuSeconds(child.pid as number) - cpu0) * 1000) / Math.max(1, rps * seconds);
  child.kill();
  return { kind, rps, cpuMs };
}

if (process.argv[2] === "--serve") {
  serve(process.argv[3] ?? "http1");
} else {
  const seconds = Number(process.argv[2] ?? 8);
  const rows = [];
  for (const kind of ["http1", "h2-compat", "h2-stream"]) rows.push(await measure(kind, seconds));
  const base = rows[0]?.rps ?? 1;
  process.stdout.write(
    [
      "| server | req/s | ÷ http1 | CPU ms/req |",
      "|---|--:|--:|--:|",
      ...rows.map(
        (r) => `| ${r.kind} | ${Math.round(r.rps)} | ${(r.rps / base).toFixed(2)}× | ${r.cpuMs.toFixed(3)} |`,
      ),
      "",
    ].join("\n"),
  );
}
