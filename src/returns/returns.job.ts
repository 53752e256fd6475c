/**
 * The returns job: every RETURNS_INTERVAL_SECONDS (and 5 s after start), each `requested` return
 * whose contest deadline has passed without a contest is approved, and its lead's purchase
 * reversed. Each return is its own database transaction (claimed with SKIP LOCKED; the state,
 * the reversal with its idempotency key `lead:{id}:return`, the audit entry and the event commit
 * together), so after a crash every return is decided with its reversal or untouched, and a
 * rerun, or another instance running at the same time, posts nothing twice. Batches adapt to
 * take at most a second; a run that stops with work left goes on a second later, so the job
 * catches up after downtime.
 */
import { type BatchRun, runInBatches } from "../batches.ts";
import { errorForLog, type Logger } from "../logger.ts";
import type { ReturnsService } from "./returns.service.ts";

const FIRST_RUN_MS = 5000;
const BEHIND_AGAIN_MS = 1000;
const BATCH = 100;
const BATCH_BUDGET_MS = 1000;
const RUN_BUDGET_MS = 5000;

export interface ReturnsJobDeps {
  readonly returns: ReturnsService;
  readonly logger: Logger;
  readonly intervalMs: number;
  /** Each run (metrics). */
  readonly onRun?: (run: BatchRun) => void;
}

export type ReturnsJob = ReturnType<typeof createReturnsJob>;

export function createReturnsJob(deps: ReturnsJobDeps) {
  const { returns, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  /** One batch: up to `limit` due returns, each approved in its own transaction. */
  async function step(limit: number): Promise<number> {
    let done = 0;
    while (done < limit && (await returns.approveOneDue())) done++;
    return done;
  }

  /** Approves what is due now, in batches, for at most `runBudgetMs`. */
  async function runOnce(runBudgetMs = RUN_BUDGET_MS): Promise<BatchRun> {
    const run = await runInBatches(step, {
      batch: BATCH,
      batchBudgetMs: BATCH_BUDGET_MS,
      runBudgetMs,
    });
    deps.onRun?.(run);
    if (run.behind)
      logger.warn({ job: "returns", approved: run.done }, "the returns job fell behind; going on in a second");
    else if (run.done > 0) logger.info({ job: "returns", approved: run.done }, "uncontested returns approved");
    return run;
  }

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .then((r) => r.behind)
        .catch((err) => {
          logger.warn({ err: errorForLog(err) }, "could not approve due returns");
          return false;
        })
        .then((behind) => schedule(behind ? BEHIND_AGAIN_MS : deps.intervalMs));
    }, ms);
    timer.unref();
  };

  return {
    runOnce,
    start(): void {
      stopped = false;
      schedule(Math.min(FIRST_RUN_MS, deps.intervalMs));
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
