/**
 * The settlement job: every SETTLEMENT_INTERVAL_SECONDS (and 5 s after start), purchases whose
 * settlement day has come (settlement_days after the lead was accepted, under the terms it was
 * priced with) and that are not held (an open return) move from pending to available. Each batch
 * is one database transaction (`ledger_settle_due()`, migration 0019): every settlement in it is
 * whole or absent after a crash, each has its own idempotency key (`lead:{id}:settlement`), and
 * the queue row goes in the same transaction, so a rerun, or another instance running at the same
 * time (SKIP LOCKED), posts nothing twice. Batches adapt to take at most a second; a run that
 * stops with work left goes on a second later, so the job catches up after downtime.
 */
import type { Kysely } from "kysely";
import { type BatchRun, runInBatches } from "../batches.ts";
import type { Database } from "../db/schema.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { settleDue } from "./money.repository.ts";

const FIRST_RUN_MS = 5000;
const BEHIND_AGAIN_MS = 1000;
const BATCH = 500;
const BATCH_BUDGET_MS = 1000;
const RUN_BUDGET_MS = 5000;

export interface SettlementDeps {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly intervalMs: number;
  readonly now?: () => Date;
  /** Each run (metrics). */
  readonly onRun?: (run: BatchRun) => void;
}

export type Settlement = ReturnType<typeof createSettlement>;

export function createSettlement(deps: SettlementDeps) {
  const { db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let stopped = true;

  /** Settles what is due now, in batches, for at most `runBudgetMs`. */
  async function runOnce(runBudgetMs = RUN_BUDGET_MS): Promise<BatchRun> {
    const at = now();
    const run = await runInBatches((limit) => settleDue(db, at, limit), {
      batch: BATCH,
      batchBudgetMs: BATCH_BUDGET_MS,
      runBudgetMs,
    });
    deps.onRun?.(run);
    if (run.behind)
      logger.warn({ job: "settlement", settled: run.done }, "settlement fell behind; going on in a second");
    else if (run.done > 0) logger.info({ job: "settlement", settled: run.done }, "purchases settled");
    return run;
  }

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = runOnce()
        .then((r) => r.behind)
        .catch((err) => {
          logger.warn({ err: errorForLog(err) }, "could not settle purchases");
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
