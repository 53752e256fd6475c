/**
 * The request counter and duration histogram (src/metrics.ts) are plain records that prom-client
 * reads at scrape time. Fed the same answers, they must read exactly as prom-client's own Counter
 * and Histogram: the exposition text, the JSON a worker hands the primary under WEB_CONCURRENCY,
 * and the primary's sum of several workers.
 */
import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../src/metrics.ts";

const COUNTER = "lead_provider_requests_total";
const HISTOGRAM = "lead_provider_request_duration_seconds";

/** route, method, status, protocol, seconds: bounds exactly, between them, beyond the last, two protocols of one series. */
const ANSWERS: [string, string, number, string, number][] = [
  ["/api/v1/public/leads/", "POST", 201, "rest", 0.0042],
  ["/api/v1/public/leads/", "POST", 201, "grpc", 0.005],
  ["/api/v1/public/leads/", "POST", 201, "rest", 0.001],
  ["/api/v1/public/leads/", "POST", 422, "rest", 0.0009],
  ["/api/v1/public/leads/{external_id}/", "GET", 200, "rest", 0.0101],
  ["/api/v1/public/leads/{external_id}/", "GET", 200, "rest", 7.5],
  ["/leadprovider.v1.PublicLeadService/GetLead", "POST", 200, "grpc", 0.25],
  ["/healthz", "GET", 200, "rest", 0],
];

function ours(answers: typeof ANSWERS) {
  const metrics = createMetrics({
    poolStats: () => ({ total: 0, idle: 0, waiting: 0 }),
    redisStatus: () => ({ store: "memory", ok: true }),
  });
  for (const a of answers) metrics.observe(...a);
  return metrics.registry;
}

/** prom-client's own metrics, as src/metrics.ts declared them before, fed the same answers. */
function reference(answers: typeof ANSWERS): Registry {
  const registry = new Registry();
  const counter = new Counter({
    name: COUNTER,
    help: "Requests answered, by route, method, status and protocol.",
    labelNames: ["route", "method", "status", "protocol"] as const,
    registers: [registry],
  });
  const histogram = new Histogram({
    name: HISTOGRAM,
    help: "Time to answer a request, by route, method and status.",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  for (const [route, method, status, protocol, seconds] of answers) {
    counter.labels({ route, method, status: String(status), protocol }).inc();
    histogram.labels({ route, method, status: String(status) }).observe(seconds);
  }
  return registry;
}

describe("request metrics", () => {
  it.each([COUNTER, HISTOGRAM])("%s reads as prom-client's own: text and JSON", async (name) => {
    const a = ours(ANSWERS);
    const b = reference(ANSWERS);
    expect(await a.getSingleMetricAsString(name)).toBe(await b.getSingleMetricAsString(name));
    const json = async (r: Registry) => (await r.getMetricsAsJSON()).find((m) => m.name === name);
    expect(await json(a)).toEqual(await json(b));
  });

  it("adds up across workers as prom-client's own do", async () => {
    const half = Math.ceil(ANSWERS.length / 2);
    const workers = async (make: (answers: typeof ANSWERS) => Registry) => {
      const parts = [make(ANSWERS.slice(0, half)), make(ANSWERS.slice(half)), make(ANSWERS)];
      const jsons = await Promise.all(parts.map((r) => r.getMetricsAsJSON()));
      const only = jsons.map((j) => j.filter((m) => m.name === COUNTER || m.name === HISTOGRAM));
      return AggregatorRegistry.aggregate(only).metrics();
    };
    const summed = await workers(ours);
    expect(summed).toBe(await workers(reference));
    // One series per route, method and status: nothing summed into an unlabelled bucket.
    expect(summed).toMatch(
      /^lead_provider_request_duration_seconds_bucket\{le="0.005",route="\/api\/v1\/public\/leads\/",method="POST",status="201"\} 6$/m,
    );
  });
});
