/**
 * WEB_CONCURRENCY=N: N worker processes on the one port, with node:cluster (docs/decisions/0027-web-concurrency.md: a Node
 * process uses one core; Postgres and the rest of the machine have the others).
 *
 * - The primary serves nothing. It forks the workers (each runs the whole app: REST, gRPC,
 *   webhooks, the sandbox's mover), replaces one that dies, and on SIGTERM/SIGINT tells every
 *   worker to shut down gracefully and exits when they all have. The kernel's listening socket
 *   is the primary's; it hands connections to the workers in turn.
 * - It needs DATABASE_URL (the embedded database is one process's data directory) and REDIS_URL
 *   (rate limits must be one count for all workers; Redis counts them exactly, as it does for
 *   several instances). config.ts refuses the combination otherwise.
 * - Metrics: whichever worker is scraped asks the primary, which adds up every worker's registry
 *   (prom-client's AggregatorRegistry), so a scrape sees the whole process group, never one
 *   worker at random.
 * - Readiness: each worker answers /readyz for itself; a worker that is not listening yet
 *   receives no connections.
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry } from "prom-client";
import type { Config } from "./config.ts";
import { readyBanner } from "./entry-points.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";

const METRICS_REQUEST = "lead-provider:metrics-request";
const METRICS_ANSWER = "lead-provider:metrics";

interface MetricsRequest {
  readonly type: typeof METRICS_REQUEST;
  readonly id: number;
}
interface MetricsAnswer {
  readonly type: typeof METRICS_ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

export const isWorker = () => cluster.isWorker;

/** Runs the primary of WEB_CONCURRENCY workers; resolves when it has stopped. */
export function runPrimary(config: Config, logger: Logger): Promise<number> {
  const aggregator = new AggregatorRegistry();
  let stopping = false;
  let listening = 0;
  let announced = false;
  const restarts: number[] = [];

  const fork = () => {
    const worker = cluster.fork();
    worker.on("message", (message: MetricsRequest) => {
      if (message?.type !== METRICS_REQUEST) return;
      const reply = (answer: Omit<MetricsAnswer, "type" | "id">) => {
        if (worker.isConnected()) worker.send({ type: METRICS_ANSWER, id: message.id, ...answer });
      };
      aggregator.clusterMetrics().then(
        (text) => reply({ text }),
        (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }),
      );
    });
    worker.once("listening", () => {
      listening += 1;
      if (listening === config.webConcurrency) {
        logger.info({ workers: config.webConcurrency, port: config.port }, "all workers listening");
        if (!announced) process.stderr.write(readyBanner(config.host, config.port));
        announced = true;
      }
    });
    return worker;
  };

  for (let i = 0; i < config.webConcurrency; i++) fork();

  cluster.on("exit", (worker: Worker, code: number | null, signal: string | null) => {
    listening = Math.max(0, listening - 1);
    if (stopping) return;
    // A worker that keeps dying (database unreachable at start, say) is retried at most once a second.
    const now = Date.now();
    restarts.push(now);
    while (restarts.length > 0 && (restarts[0] as number) < now - 60_000) restarts.shift();
    logger.error(
      { worker_pid: worker.process.pid, code, signal, restarts_last_minute: restarts.length },
      "worker died",
    );
    setTimeout(
      () => {
        if (!stopping) fork();
      },
      Math.min(1000 * restarts.length, 10_000),
    );
  });

  return new Promise((resolve) => {
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, "shutting down workers");
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
      let failed = 0;
      let left = workers.length;
      if (left === 0) return resolve(0);
      // Each worker drains its own connections (SHUTDOWN_TIMEOUT_MS); one that hangs is killed.
      const deadline = setTimeout(() => {
        for (const w of workers) if (!w.isDead()) w.process.kill("SIGKILL");
      }, config.shutdownTimeoutMs + 5000);
      for (const w of workers) {
        w.once("exit", (code: number | null) => {
          if (code !== 0) failed += 1;
          left -= 1;
          if (left === 0) {
            clearTimeout(deadline);
            logger.info({ failed }, "workers stopped");
            resolve(failed === 0 ? 0 : 1);
          }
        });
        w.process.kill("SIGTERM");
      }
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
  });
}

/**
 * In a worker: scrapes answer the whole group's metrics (asked of the primary), and this
 * worker's registry answers the primary's collection requests.
 */
export function joinClusterMetrics(metrics: Metrics): void {
  new AggregatorRegistry(); // installs the worker's side of prom-client's collection protocol
  AggregatorRegistry.setRegistries([metrics.registry]);
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
  let next = 0;
  process.on("message", (message: MetricsAnswer) => {
    if (message?.type !== METRICS_ANSWER) return;
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.text !== undefined) waiter.resolve(message.text);
    else waiter.reject(new Error(message.error ?? "no metrics"));
  });
  metrics.scrape.contentType = AggregatorRegistry.PROMETHEUS_CONTENT_TYPE;
  metrics.scrape.text = () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error("the primary did not answer with metrics"));
      }, 6000);
      pending.set(id, {
        resolve: (text) => {
          clearTimeout(timer);
          resolve(text);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest);
    });
}
