/**
 * What an operator sees: JSON logs with request ids and no secrets or personal data, and
 * Prometheus metrics that are not public.
 */
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { FAST_ROUTES } from "../src/leads/fast/rest.ts";
import { createLogger } from "../src/logger.ts";
import { createRouteLabeler } from "../src/observe.ts";
import { leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { freePort } from "./helpers/processes.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

describe("logs and metrics", () => {
  let t: TestApp;
  const lines: string[] = [];
  const clock = minuteClock();
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    t = await startTestApp(
      { name: "pglite" },
      { METRICS_TOKEN, RATE_LIMIT_PER_MINUTE: "3" },
      { logger: createLogger("trace", sink), now: clock },
    );
  });
  afterAll(() => t.stop());

  it("keeps API keys, JWTs, emails and phone numbers out of every log line", async () => {
    const { key } = await t.provider("Log Watch", { contact_email: "ops-secret@watch.example" });
    const admin = await t.token();
    const body = leadBody({ email: "private.person@mail.example", phone_number: "+1 (555) 867-5309" });
    await t.call("POST", "/api/v1/public/leads/", { body, auth: key });
    await t.call("POST", "/api/v1/public/leads/", { body: { ...body, email: "not-an-email" }, auth: key });
    await t.call("GET", "/api/v1/public/leads/none/", { auth: `${key.slice(0, -1)}${key.endsWith("X") ? "Y" : "X"}` }); // checksum fails
    await t.call("GET", "/api/v1/lead_providers/", { auth: admin });
    await t.call("GET", "/api/v1/lead_providers/", { auth: `${admin}x` });
    const grpc = connectClient(PublicLeadService, t.port, "grpc");
    await grpc.getLead({ externalId: "x" }, bearer(key)).catch(() => undefined);
    const all = lines.join("\n");
    expect(lines.length).toBeGreaterThan(5);
    for (const secret of [
      key,
      key.slice(8, 30),
      admin,
      admin.split(".")[2] as string,
      "private.person@mail.example",
      "ops-secret@watch.example",
      "867-5309",
      "8675309",
    ]) {
      expect(all).not.toContain(secret);
    }
  });

  it("logs one JSON line per request with its request id, accepting a well-formed incoming one", async () => {
    const res = await t.call("GET", "/healthz", { headers: { "x-request-id": "trace-abc.123" } });
    expect(res.headers.get("x-request-id")).toBe("trace-abc.123");
    const line = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.request_id === "trace-abc.123");
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      method: "GET",
      route: "/healthz",
      status: 200,
      protocol: "rest",
    });
    await t.call("GET", "/api/v1/public/leads/some-id/");
    const labelled = lines.map((l) => JSON.parse(l) as Record<string, unknown>).at(-1);
    expect(labelled).toMatchObject({ route: "/api/v1/public/leads/{external_id}/", status: 401 });
    const problem = (await (await t.call("GET", "/api/v1/nothing/")).json()) as { request_id: string };
    expect(lines.some((l) => l.includes(problem.request_id))).toBe(true);
  });

  it("serves /metrics only to the configured token, with request, lead and rate-limit figures", async () => {
    expect((await t.call("GET", "/metrics")).status).toBe(404);
    expect((await t.call("GET", "/metrics", { auth: "wrong-token-0123456789" })).status).toBe(404);
    const { key } = await t.provider("Metric Watch", { rate_limit_per_minute: 1 });
    clock.nextMinute(); // the second create in the first one's minute: refused
    await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: key });
    await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: key }); // 429
    await connectClient(PublicLeadService, t.port, "grpc")
      .getLead({ externalId: "x" }, bearer(key))
      .catch(() => undefined);
    const res = await t.call("GET", "/metrics", { auth: METRICS_TOKEN });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(
      /lead_provider_requests_total\{route="\/api\/v1\/public\/leads\/",method="POST",status="201",protocol="rest"\} \d+/,
    );
    expect(text).toMatch(
      /lead_provider_requests_total\{route="\/api\/v1\/public\/leads\/",method="POST",status="429",protocol="rest"\} 1/,
    );
    expect(text).toMatch(
      /lead_provider_requests_total\{route="\/leadprovider.v1.PublicLeadService\/GetLead",method="POST",status="200",protocol="grpc"\}/,
    );
    expect(text).toMatch(
      /lead_provider_request_duration_seconds_bucket\{le="0.005",route="\/api\/v1\/public\/leads\/",method="POST",status="201"\}/,
    );
    expect(text).toMatch(/lead_provider_leads_created_total [1-9]/);
    expect(text).toMatch(/lead_provider_rate_limit_rejections_total\{window="minute"\} [1-9]/);
    expect(text).toMatch(/lead_provider_db_pool_connections\{state="total"\} \d+/);
    expect(text).toMatch(/lead_provider_redis_up 1/);
    expect(text).toContain("process_resident_memory_bytes");
  });

  it("labels fast-path answers as the route labeler does, and keeps the histogram's buckets cumulative", async () => {
    const paths = Object.keys((parseYaml(readFileSync("openapi/openapi.yaml", "utf8")) as { paths: object }).paths);
    const label = createRouteLabeler(paths);
    expect(label({ url: "/api/v1/public/leads/some-lead/" } as never)).toBe(FAST_ROUTES.get.route);
    expect(label({ url: "/api/v1/public/leads/" } as never)).toBe(FAST_ROUTES.create.route);

    const { key } = await t.provider("Histogram Watch", { rate_limit_per_minute: 100 });
    const body = leadBody({ external_id: "histogram-1" });
    expect((await t.call("POST", "/api/v1/public/leads/", { body, auth: key })).status).toBe(201);
    const before = await t.call("GET", "/metrics", { auth: METRICS_TOKEN });
    const count = (text: string) =>
      Number(
        /lead_provider_requests_total\{route="\/api\/v1\/public\/leads\/\{external_id\}\/",method="GET",status="200",protocol="rest"\} (\d+)/.exec(
          text,
        )?.[1] ?? 0,
      );
    const start = count(await before.text());
    // Two by the fast path, one by Express (a conditional request): one series, counted three times.
    const get = (headers?: Record<string, string>) =>
      t.call("GET", "/api/v1/public/leads/histogram-1/", { auth: key, ...(headers ? { headers } : {}) });
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(200);
    expect((await get({ "If-None-Match": '"no-such-etag"' })).status).toBe(200);
    const text = await (await t.call("GET", "/metrics", { auth: METRICS_TOKEN })).text();
    expect(count(text)).toBe(start + 3);
    const series = 'route="/api/v1/public/leads/{external_id}/",method="GET",status="200"';
    const buckets = [...text.matchAll(/^lead_provider_request_duration_seconds_bucket\{le="([^"]+)",(.*)\} (\d+)$/gm)]
      .filter((m) => m[2] === series)
      .map((m) => ({ le: m[1], n: Number(m[3]) }));
    expect(buckets.map((b) => b.le)).toEqual([
      "0.001",
      "0.0025",
      "0.005",
      "0.01",
      "0.025",
      "0.05",
      "0.1",
      "0.25",
      "0.5",
      "1",
      "2.5",
      "5",
      "+Inf",
    ]);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]?.n).toBeGreaterThanOrEqual(buckets[i - 1]?.n ?? 0);
    const total = Number(
      new RegExp(
        `^lead_provider_request_duration_seconds_count\\{${series.replace(/[/{}]/g, "\\$&")}\\} (\\d+)$`,
        "m",
      ).exec(text)?.[1],
    );
    expect(buckets.at(-1)?.n).toBe(total);
    expect(total).toBe(count(text));
    const sum = Number(
      new RegExp(
        `^lead_provider_request_duration_seconds_sum\\{${series.replace(/[/{}]/g, "\\$&")}\\} (\\S+)$`,
        "m",
      ).exec(text)?.[1],
    );
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(total * 5);
  });

  it("can serve /metrics on a separate admin port instead", async () => {
    const port = await freePort();
    const admin = await startTestApp({ name: "pglite" }, { METRICS_PORT: String(port) });
    try {
      expect((await admin.call("GET", "/metrics")).status).toBe(404);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain("lead_provider_requests_total");
    } finally {
      await admin.stop();
    }
  }, 150_000);
});
