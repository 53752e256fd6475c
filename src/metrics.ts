/**
 * Prometheus metrics (prom-client) on a registry of this app's own, so several apps can live in
 * one process (tests). Served at /metrics only with METRICS_TOKEN, or on the METRICS_PORT admin
 * listener; never publicly.
 */

import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from "prom-client";
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
  const requests = createRequestSeries();
  // prom-client registers objects of this shape itself (its cluster aggregator's); its typings
  // name only its own classes, and give `type` as a numeric enum where the runtime reads a string.
  registry.registerMetric(requests.counter as unknown as Metric);
  registry.registerMetric(requests.histogram as unknown as Metric);
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
  const requestLogTallied = new Counter({
    name: "lead_provider_request_log_tallied_total",
    help: "Requests counted in the request log's per-minute tallies instead of listed one by one (anonymous or refused beyond the listing budget).",
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
    observe: requests.observe,
    leadCreated: () => leadsCreated.inc(),
    rateLimited: (window: string) => rateLimited.inc({ window }),
    failedOpen: () => failOpen.inc(),
    requestLogDropped: (n: number) => requestLogDropped.inc(n),
    requestLogTallied: () => requestLogTallied.inc(),
    /** A background job's run (src/batches.ts): whether it fell behind, its slowest batch, its rows. */
    jobRun(job: string, run: { behind: boolean; slowestBatchMs: number; done: number }): void {
      jobBehind.set({ job }, run.behind ? 1 : 0);
      jobBatch.observe({ job }, run.slowestBatchMs / 1000);
      jobRows.inc({ job }, run.done);
    },
  };
}

const REQUESTS_NAME = "lead_provider_requests_total";
const DURATION_NAME = "lead_provider_request_duration_seconds";
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/** One (route, method, status, protocol): its request count and, shared with the other protocols of its (route, method, status), its durations. */
interface RequestSeries {
  readonly labels: { route: string; method: string; status: string; protocol: string };
  count: number;
  readonly duration: DurationSeries;
}
interface DurationSeries {
  readonly labels: { route: string; method: string; status: string };
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/**
 * The request counter and duration histogram of every answer. Each (route, method, status,
 * protocol) is a plain record found with one map lookup; prom-client reads the records when
 * scraped, through metric objects whose `get()` answers as its own Counter's and Histogram's do,
 * so the exposition, the JSON and the workers' sum stay prom-client's (test/metrics.test.ts
 * compares all three with prom-client's own metrics fed the same answers). prom-client's own
 * `inc`/`observe` (also through a label child) validates the labels, joins them into a key and
 * turns the bucket's bound into a property name on every call: 4.9 µs of each REST GET in a CPU
 * profile under load (docs/decisions/0025-performance-floor-and-fast-paths.md).
 */
function createRequestSeries() {
  const series = new Map<string, RequestSeries>();
  const durations = new Map<string, DurationSeries>();
  const counter = {
    name: REQUESTS_NAME,
    help: "Requests answered, by route, method, status and protocol.",
    type: "counter",
    aggregator: "sum",
    // `counter.name`: an OpenMetrics registry renames a counter (without `_total`) before reading it.
    get: async () => ({
      name: counter.name,
      help: counter.help,
      type: "counter",
      aggregator: "sum",
      values: [...series.values()].map((s) => ({ value: s.count, labels: { ...s.labels } })),
    }),
    reset: () => {
      series.clear();
      durations.clear();
    },
  };
  const histogram = {
    name: DURATION_NAME,
    help: "Time to answer a request, by route, method and status.",
    type: "histogram",
    aggregator: "sum",
    // As prom-client's own Histogram: the text writer reads each series' labels once, beside the
    // bucket's `le` (getForPromString); the JSON a worker hands the primary has them in each
    // value's labels, after `le` (get: its cluster aggregator groups by `labels` alone).
    getForPromString: async () => {
      const values: {
        labels: Record<string, string | number>;
        sharedLabels: Record<string, string>;
        value: number;
        metricName: string;
        exemplar?: null;
      }[] = [];
      for (const d of durations.values()) {
        const shared = d.labels;
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += d.buckets[i] as number;
          values.push({
            labels: { le },
            sharedLabels: shared,
            value: cumulative,
            metricName: `${DURATION_NAME}_bucket`,
            exemplar: null,
          });
        });
        values.push(
          {
            labels: { le: "+Inf" },
            sharedLabels: shared,
            value: d.count,
            metricName: `${DURATION_NAME}_bucket`,
            exemplar: null,
          },
          { labels: {}, sharedLabels: shared, value: d.sum, metricName: `${DURATION_NAME}_sum` },
          { labels: {}, sharedLabels: shared, value: d.count, metricName: `${DURATION_NAME}_count` },
        );
      }
      return { name: DURATION_NAME, help: histogram.help, type: "histogram", aggregator: "sum", values };
    },
    get: async () => {
      const data = await histogram.getForPromString();
      return {
        ...data,
        values: data.values.map(({ sharedLabels, labels, ...value }) => ({
          ...value,
          labels: { ...labels, ...sharedLabels },
        })),
      };
    },
    reset: () => {
      series.clear();
      durations.clear();
    },
  };
  const seriesOf = (route: string, method: string, status: number, protocol: string): RequestSeries => {
    const key = `${route} ${method} ${status} ${protocol}`;
    let s = series.get(key);
    if (s === undefined) {
      const labels = { route, method, status: String(status) };
      const durationKey = `${route} ${method} ${status}`;
      let duration = durations.get(durationKey);
      if (duration === undefined) {
        duration = { labels, buckets: new Array(DURATION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
        durations.set(durationKey, duration);
      }
      s = { labels: { ...labels, protocol }, count: 0, duration };
      series.set(key, s);
    }
    return s;
  };
  return {
    counter,
    histogram,
    observe(route: string, method: string, status: number, protocol: string, seconds: number): void {
      const s = seriesOf(route, method, status, protocol);
      s.count += 1;
      const d = s.duration;
      let i = 0;
      while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++;
      d.buckets[i] = (d.buckets[i] as number) + 1;
      d.sum += seconds;
      d.count += 1;
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
