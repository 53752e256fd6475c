/**
 * WEB_CONCURRENCY=2: two workers on one port behind a primary (src/cluster.ts), started as
 * production starts the service. The rate-limit rules with two workers are in rate-limit.test.ts.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leadBody } from "./helpers/app.ts";
import { type ServiceProcess, startServiceProcess } from "./helpers/service-process.ts";

const METRICS_TOKEN = "cluster-test-metrics-token-0123";

describe("WEB_CONCURRENCY refuses what it cannot do", () => {
  it("without DATABASE_URL and REDIS_URL, exits 78 naming both", async () => {
    const child = spawn(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", WEB_CONCURRENCY: "2", PORT: "0", LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const [code] = (await once(child, "exit")) as [number];
    expect(code).toBe(78);
    expect(stderr).toContain("WEB_CONCURRENCY=2 needs DATABASE_URL");
    expect(stderr).toContain("WEB_CONCURRENCY=2 needs REDIS_URL");
  }, 150_000);
});

describe.runIf(process.env.REDIS_URL && process.env.TEST_DATABASE_URL)("two workers (Postgres + Redis)", () => {
  let c: ServiceProcess;
  beforeAll(async () => {
    c = await startServiceProcess({
      WEB_CONCURRENCY: "2",
      REDIS_URL: process.env.REDIS_URL as string,
      REDIS_NAMESPACE: `cluster-${process.pid}`,
      METRICS_TOKEN,
    });
  }, 150_000);
  afterAll(async () => {
    await c.stop();
  });

  it("serves on both workers and counts every worker's requests in one /metrics", async () => {
    // Fresh connections: the primary hands them to the workers in turn.
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${c.url}/healthz`, { headers: { connection: "close" }, keepalive: false });
      expect(r.status).toBe(200);
    }
    expect(workerPids(c.output(), "/healthz").size).toBe(2);
    const scrape = await fetch(`${c.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    expect(text).toMatch(
      /^lead_provider_requests_total\{route="\/healthz",method="GET",status="200",protocol="rest"\} 20$/m,
    );
  });

  it("is ready when every worker is: /readyz reports the database and Redis", async () => {
    // Fresh connections go to the workers in turn; both must have answered ready.
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${c.url}/readyz`, { headers: { connection: "close" }, keepalive: false });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({
        status: "ready",
        checks: { database: { ok: true }, redis: { ok: true } },
      });
    }
    // Each answer's access-log line may reach this process a little after the answer.
    await expect.poll(() => workerPids(c.output(), "/readyz").size, { timeout: 10_000 }).toBe(2);
  });
});

describe.runIf(process.env.REDIS_URL && process.env.TEST_DATABASE_URL)("two workers shutting down", () => {
  it("answers requests in flight on both workers, then the primary and workers exit 0", async () => {
    const s = await startServiceProcess({
      WEB_CONCURRENCY: "2",
      REDIS_URL: process.env.REDIS_URL as string,
      REDIS_NAMESPACE: `cluster-stop-${process.pid}`,
    });
    const { key } = await s.provider();
    // Requests whose bodies are half sent when SIGTERM arrives: accepted, in flight, unfinished.
    const inFlight = await Promise.all(Array.from({ length: 4 }, () => halfSentCreate(s.port, key)));
    s.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    const statuses = await Promise.all(inFlight.map((r) => r.finish()));
    expect(statuses).toEqual([201, 201, 201, 201]);
    const [code] = (await once(s.child, "exit")) as [number];
    expect(code).toBe(0);
    const pids = workerPids(s.output(), "/api/v1/public/leads/");
    expect(pids.size).toBe(2);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(s.output()).toContain('"failed":0,"msg":"workers stopped"');
    await s.stop();
  }, 150_000);
});

/** Opens a connection and sends a create whose body stops halfway; finish() sends the rest. */
async function halfSentCreate(port: number, key: string): Promise<{ finish(): Promise<number> }> {
  const body = JSON.stringify(leadBody());
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST /api/v1/public/leads/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
  );
  let answer = "";
  socket.on("data", (d: Buffer) => {
    answer += d.toString();
  });
  // Let the worker receive the headers before the signal.
  await new Promise((r) => setTimeout(r, 200));
  return {
    async finish() {
      socket.write(body.slice(half));
      const deadline = Date.now() + 10_000;
      while (!/\r\n\r\n/.test(answer) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      socket.destroy();
      return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
    },
  };
}

/** The pids of the workers whose access log shows a request to `route`. */
function workerPids(output: string, route: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split("\n")) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { pid: number; route: string };
    if (entry.route === route) pids.add(entry.pid);
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
