/** Background deletions in batches with a time budget (src/batches.ts), on a fake clock. */
import { describe, expect, it } from "vitest";
import { runInBatches } from "../../src/batches.ts";

/** A job with `rows` to delete, where a batch of n takes `msPerRow * n` on the clock. */
function job(rows: number, msPerRow: number) {
  let left = rows;
  let t = 0;
  const sizes: number[] = [];
  return {
    sizes,
    clock: () => t,
    step: async (limit: number) => {
      sizes.push(limit);
      const n = Math.min(left, limit);
      left -= n;
      t += n * msPerRow;
      return n;
    },
    left: () => left,
  };
}

describe("runInBatches", () => {
  it("runs to the end when there is time, in batches of the starting size", async () => {
    const j = job(1234, 0.1);
    const run = await runInBatches(j.step, { batch: 500, batchBudgetMs: 500, runBudgetMs: 10_000, clock: j.clock });
    expect(run).toMatchObject({ done: 1234, batches: 3, behind: false });
    expect(j.sizes).toEqual([500, 500, 500]);
  });

  it("halves a batch that took longer than its budget, down to the floor", async () => {
    const j = job(100_000, 8); // 500 rows take 4 s: over a 500 ms budget
    const run = await runInBatches(j.step, {
      batch: 500,
      minBatch: 100,
      batchBudgetMs: 500,
      runBudgetMs: Number.POSITIVE_INFINITY,
      clock: j.clock,
    });
    expect(run.done).toBe(100_000);
    expect(j.sizes.slice(0, 6)).toEqual([500, 250, 125, 100, 100, 100]);
    expect(run.slowestBatchMs).toBe(4000);
  });

  it("grows a batch back to its size once batches are fast again", async () => {
    let t = 0;
    let calls = 0;
    const sizes: number[] = [];
    const step = async (limit: number) => {
      sizes.push(limit);
      calls += 1;
      t += calls <= 2 ? 1000 : 10; // two slow batches (a busy moment), then fast ones
      return calls < 8 ? limit : 0;
    };
    await runInBatches(step, { batch: 400, batchBudgetMs: 500, runBudgetMs: Number.POSITIVE_INFINITY, clock: () => t });
    expect(sizes).toEqual([400, 200, 100, 200, 400, 400, 400, 400]);
  });

  it("stops on its run budget with work left and says it is behind; the next run goes on", async () => {
    const j = job(10_000, 1); // 500 rows take 500 ms
    const first = await runInBatches(j.step, { batch: 500, batchBudgetMs: 600, runBudgetMs: 1000, clock: j.clock });
    expect(first).toMatchObject({ done: 1000, batches: 2, behind: true });
    expect(j.left()).toBe(9000);
    const second = await runInBatches(j.step, {
      batch: 500,
      batchBudgetMs: 600,
      runBudgetMs: Number.POSITIVE_INFINITY,
      clock: j.clock,
    });
    expect(second.behind).toBe(false);
    expect(j.left()).toBe(0);
  });
});
