/**
 * Background deletions in small batches with a time budget (docs/decisions/0029-retention-and-batches.md): retention of test leads
 * and of the request log, and an administrator's purge of test data. Each batch is one short
 * transaction on one pooled connection, and batches run one after another, so a job never holds
 * more than one connection. The batch size adapts to the time a batch takes (halved when one
 * takes longer than the batch budget, doubled back when one takes less than a quarter of it),
 * and a run stops when its own budget is spent: a job with more to do than a run allows says so
 * (`behind`) and goes on at its next run instead of holding a connection for minutes.
 */

export interface BatchOptions {
  /** Rows a batch starts with, and the most it grows to. */
  readonly batch: number;
  /** The least a batch shrinks to. */
  readonly minBatch?: number;
  /** A batch taking longer than this is followed by a smaller one. */
  readonly batchBudgetMs: number;
  /** The run stops after this long with work left (`behind`); Infinity: run to the end. */
  readonly runBudgetMs: number;
  /** Milliseconds, for tests. */
  readonly clock?: () => number;
}

export interface BatchRun {
  /** Rows the run deleted. */
  readonly done: number;
  readonly batches: number;
  /** The run stopped on its budget with work left. */
  readonly behind: boolean;
  /** The longest batch, in milliseconds. */
  readonly slowestBatchMs: number;
}

/**
 * Calls `step(limit)` until it handles fewer than `limit` rows (nothing left) or the run budget
 * is spent. `step` deletes (or otherwise handles) at most `limit` rows and says how many.
 */
export async function runInBatches(step: (limit: number) => Promise<number>, options: BatchOptions): Promise<BatchRun> {
  const clock = options.clock ?? (() => performance.now());
  const minBatch = Math.min(options.minBatch ?? 10, options.batch);
  const started = clock();
  let size = options.batch;
  let done = 0;
  let batches = 0;
  let slowest = 0;
  for (;;) {
    const t = clock();
    const n = await step(size);
    const took = clock() - t;
    done += n;
    batches += 1;
    slowest = Math.max(slowest, took);
    if (n < size) return { done, batches, behind: false, slowestBatchMs: slowest };
    if (took > options.batchBudgetMs) size = Math.max(minBatch, Math.floor(size / 2));
    else if (took < options.batchBudgetMs / 4) size = Math.min(options.batch, size * 2);
    if (clock() - started >= options.runBudgetMs) return { done, batches, behind: true, slowestBatchMs: slowest };
  }
}
