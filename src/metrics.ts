/**
 * Prometheus metrics (prom-client) on a registry of this app's own, so several apps can live in
 * one process (tests). Served at /metrics only with METRICS_TOKEN, or on the METRICS_PORT admin
 * listener; never publicly.
 */

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { PROBLEM_CONTENT_TYPE, problemJson } from "./edge/problem-json.ts";

export interface MetricsSources {
  readonly poolStats: () => { total: number; idle: number; waiting: number };
  readonly redisStatus: () => { store: "memory" | "redis"; ok: boolean };
  /** Pending webhook deliveries and the age of the oldest one's event (read at scrape time). */
  readonly webhookQueue?: () => Promise<{ pending: number; oldestAgeSeconds: number }>;
}

export type Metrics = ReturnType<typeof createMetrics>;

export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "lead_provider_requests_total",
    help: "Requests answered, by route, method, status and protocol.",
    labelNames: ["route", "method", "status", "protocol"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "lead_provider_request_duration_seconds",
    help: "Time to answer a request, by route, method and status.",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const leadsCreated = new Counter({
    name: "lead_provider_leads_created_total",
    help: "Leads stored.",
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: "lead_provider_rate_limit_rejections_total",
    help: "Requests refused with 429, by exhausted window (minute, day, auth_failures).",
    labelNames: ["window"] as const,
    registers: [registry],
  });
  const failOpen = new Counter({
    name: "lead_provider_rate_limit_fail_open_total",
    help: "Requests admitted without a limit check because the shared store could not answer.",
    registers: [registry],
  });
  new Gauge({
    name: "lead_provider_db_pool_connections",
    help: "Database pool connections by state (total, idle, waiting requests).",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const s = sources.poolStats();
      this.set({ state: "total" }, s.total);
      this.set({ state: "idle" }, s.idle);
      this.set({ state: "waiting" }, s.waiting);
    },
  });
  new Gauge({
    name: "lead_provider_redis_up",
    help: "1 when the rate-limit store answers (always 1 for the in-process store).",
    registers: [registry],
    collect() {
      this.set(sources.redisStatus().ok ? 1 : 0);
    },
  });

  const testLeadsCreated = new Counter({
    name: "lead_provider_test_leads_created_total",
    help: "Test (sandbox) leads stored; never counted in lead_provider_leads_created_total.",
    registers: [registry],
  });
  const eventsWritten = new Counter({
    name: "lead_provider_events_written_total",
    help: "Lead events of live leads written to the outbox, by type (test leads' events are not counted).",
    labelNames: ["type"] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "lead_provider_webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome (delivered, retry, gone, failed: no attempts left).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const requestLogDropped = new Counter({
    name: "lead_provider_request_log_dropped_total",
    help: "Request-log entries dropped (the oldest first) because the in-memory queue was full or could not be written.",
    registers: [registry],
  });
  const { webhookQueue } = sources;
  if (webhookQueue) {
    // One query answers both gauges; a scrape reads it once.
    let reading: Promise<{ pending: number; oldestAgeSeconds: number }> | undefined;
    const read = () => {
      reading ??= webhookQueue()
        .catch(() => ({ pending: Number.NaN, oldestAgeSeconds: Number.NaN }))
        .finally(() => setTimeout(() => (reading = undefined), 0));
      return reading;
    };
    new Gauge({
      name: "lead_provider_webhook_queue_depth",
      help: "Webhook deliveries pending (being sent or waiting for a retry), all instances.",
      registers: [registry],
      async collect() {
        this.set((await read()).pending);
      },
    });
    new Gauge({
      name: "lead_provider_webhook_oldest_pending_age_seconds",
      help: "Age of the oldest event whose delivery is still pending (0 when none is).",
      registers: [registry],
      async collect() {
        this.set((await read()).oldestAgeSeconds);
      },
    });
  }

  const jobBehind = new Gauge({
    name: "lead_provider_job_behind",
    help: "1 when a background job's last run stopped on its time budget with work left (it goes on at its next run).",
    labelNames: ["job"] as const,
    registers: [registry],
  });
  const jobBatch = new Histogram({
    name: "lead_provider_job_batch_seconds",
    help: "The longest batch of each background job run (retention, purge).",
    labelNames: ["job"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const jobRows = new Counter({
    name: "lead_provider_job_rows_total",
    help: "Rows background jobs deleted (retention, purge).",
    labelNames: ["job"] as const,
    registers: [registry],
  });

  const requestChildren = new Map<
    string,
    { count: ReturnType<typeof requests.labels>; time: ReturnType<typeof duration.labels> }
  >();
  return {
    registry,
    /**
     * The text a scrape answers: this process's registry, or, in a worker of WEB_CONCURRENCY,
     * every worker's metrics added up by the primary (cluster.ts sets that).
     */
    scrape: { text: () => registry.metrics(), contentType: registry.contentType as string },
    eventWritten: (type: string) => eventsWritten.inc({ type }),
    testLeadCreated: () => testLeadsCreated.inc(),
    webhookOutcome: (outcome: string) => deliveries.inc({ outcome }),
    observe(route: string, method: string, status: number, protocol: string, seconds: number): void {
      // The label children of each (route, method, status, protocol), made once: prom-client
      // otherwise sorts and joins the label object on every call.
      const key = `${route} ${method} ${status} ${protocol}`;
      let child = requestChildren.get(key);
      if (child === undefined) {
        const s = String(status);
        child = {
          count: requests.labels({ route, method, status: s, protocol }),
          time: duration.labels({ route, method, status: s }),
        };
        requestChildren.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
    },
    leadCreated: () => leadsCreated.inc(),
    rateLimited: (window: string) => rateLimited.inc({ window }),
    failedOpen: () => failOpen.inc(),
    requestLogDropped: (n: number) => requestLogDropped.inc(n),
    /** A background job's run (src/batches.ts): whether it fell behind, its slowest batch, its rows. */
    jobRun(job: string, run: { behind: boolean; slowestBatchMs: number; done: number }): void {
      jobBehind.set({ job }, run.behind ? 1 : 0);
      jobBatch.observe({ job }, run.slowestBatchMs / 1000);
      jobRows.inc({ job }, run.done);
    },
  };
}

/** Answers GET /metrics when the bearer token matches (or when `token` is null: admin listener). */
export async function serveMetrics(
  metrics: Metrics,
  token: string | null,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (token !== null && !tokenMatches(req.headers.authorization, token)) {
    res.writeHead(404, { "content-type": PROBLEM_CONTENT_TYPE });
    res.end(problemJson({ status: 404, code: "not_found", title: "Not found", detail: "no route for GET /metrics" }));
    return;
  }
  try {
    const text = await metrics.scrape.text();
    res.writeHead(200, { "content-type": metrics.scrape.contentType });
    res.end(text);
  } catch {
    res.writeHead(503, { "content-type": PROBLEM_CONTENT_TYPE });
    res.end(
      problemJson({ status: 503, code: "unavailable", title: "Service unavailable", detail: "metrics unavailable" }),
    );
  }
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
