/**
 * Retention of the outbox (docs/decisions/0029-retention-and-batches.md): lead events older than EVENT_RETENTION_DAYS, and finished
 * webhook deliveries (delivered, failed, disabled) and test sends older than
 * DELIVERY_RETENTION_DAYS, are deleted in batches (src/batches.ts) of one short transaction on one
 * pooled connection, every 10 minutes, for at most 2 s a run; a run that stops with work left
 * says so (log, `lead_provider_job_behind`) and the next comes a second later.
 *
 * What is kept: leads (with their state history) forever; a pending delivery whatever its age (it
 * ends as delivered or failed within the retry schedule, days, and goes at the next run after its
 * retention), and its event with it. An event going takes its finished deliveries with it.
 */
import type { Kysely } from "kysely";
import { type BatchRun, runInBatches } from "../batches.ts";
import { firstIdCreatedAtOrAfter } from "../db/id-boundary.ts";
import type { Database } from "../db/schema.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { deleteFinishedDeliveriesBelow, deleteTestSendsBefore } from "../webhooks/webhook.repository.ts";
import { deleteEventsBelow } from "./event.repository.ts";

const EVERY_MS = 10 * 60_000;
const FIRST_RUN_MS = 45_000;
const BEHIND_AGAIN_MS = 1000;
const RUN_BUDGET_MS = 2000;
const BATCH = 1000;
const BATCH_BUDGET_MS = 500;

export type OutboxJob = "event_retention" | "delivery_retention";

export interface OutboxRetentionDeps {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly eventRetentionDays: number;
  readonly deliveryRetentionDays: number;
  readonly now?: () => Date;
  /** Each run of each job (metrics). */
  readonly onJobRun?: (job: OutboxJob, run: BatchRun) => void;
}

export type OutboxRetention = ReturnType<typeof createOutboxRetention>;

export function createOutboxRetention(deps: OutboxRetentionDeps) {
  const { db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  async function job(job: OutboxJob, days: number, step: (limit: number) => Promise<number>, budgetMs: number) {
    const run = await runInBatches(step, { batch: BATCH, batchBudgetMs: BATCH_BUDGET_MS, runBudgetMs: budgetMs });
    deps.onJobRun?.(job, run);
    if (run.behind) {
      logger.warn(
        { job, deleted: run.done, batches: run.batches, retention_days: days },
        "retention fell behind; going on in a second",
      );
    } else if (run.done > 0) {
      logger.info({ job, deleted: run.done, retention_days: days }, "expired rows deleted");
    }
    return run;
  }

  /**
   * One run of both jobs, deliveries first (most of an event's weight in rows), each for at most
   * `runBudgetMs`; how many rows each deleted and whether either stopped with work left.
   */
  async function runOnce(
    runBudgetMs = RUN_BUDGET_MS,
  ): Promise<{ events: number; deliveries: number; behind: boolean }> {
    const t = now().getTime();
    const deliveriesBefore = new Date(t - deps.deliveryRetentionDays * 86_400_000);
    const eventsBefore = new Date(t - deps.eventRetentionDays * 86_400_000);
    // Where each window ends, found once a run (a binary search on the ids, not a walk).
    const NONE = Number.MAX_SAFE_INTEGER;
    const deliveriesBelow = (await firstIdCreatedAtOrAfter(db, "webhook_deliveries", deliveriesBefore)) ?? NONE;
    const eventsBelow = (await firstIdCreatedAtOrAfter(db, "lead_events", eventsBefore)) ?? NONE;
    const deliveries = await job(
      "delivery_retention",
      deps.deliveryRetentionDays,
      async (limit) => {
        const n = await deleteFinishedDeliveriesBelow(db, deliveriesBelow, limit);
        return n < limit ? n + (await deleteTestSendsBefore(db, deliveriesBefore, limit - n)) : n;
      },
      runBudgetMs,
    );
    const events = await job(
      "event_retention",
      deps.eventRetentionDays,
      (limit) => deleteEventsBelow(db, eventsBelow, limit),
      runBudgetMs,
    );
    return { events: events.done, deliveries: deliveries.done, behind: deliveries.behind || events.behind };
  }

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .then((r) => r.behind)
        .catch((err) => {
          logger.warn({ err: errorForLog(err) }, "could not delete expired events or deliveries");
          return false;
        })
        .then((behind) => schedule(behind ? BEHIND_AGAIN_MS : EVERY_MS));
    }, ms);
    timer.unref();
  };

  return {
    runOnce,
    start(): void {
      stopped = false;
      schedule(FIRST_RUN_MS);
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
