/**
 * The hours from creation to QUOTE and from QUOTE to ORDER are kept as histograms (docs/decisions/0020-stats.md): the
 * bucket of h hours is the database's `hours_bucket(h)` (migration 0013): 0 for h ≤ 0.01 (36 s),
 * else ceil(ln(h / 0.01) / ln(1.02)), so bucket k ≥ 1 holds (0.01·1.02^(k-1), 0.01·1.02^k].
 * A median is read from the merged buckets as percentile_cont(0.5) reads sorted values (the mean
 * of the two middle ones), each middle value replaced by the hours its bucket stands for: within
 * 1 % of any value in the bucket (0.005 h, 18 s, for bucket 0).
 */

const FLOOR_HOURS = 0.01;
const GROWTH = 1.02;

/**
 * The hours bucket `key` stands for: 2·upper/(1 + GROWTH), the point whose relative distance to
 * either end of the bucket is the same, (GROWTH − 1)/(GROWTH + 1) < 1 %.
 */
export function bucketHours(key: number): number {
  if (key <= 0) return FLOOR_HOURS / 2;
  return (2 * FLOOR_HOURS * GROWTH ** key) / (1 + GROWTH);
}

/** Counts per bucket, merged from rollup rows and today's leads. */
export class Histogram {
  // Made at the first value: most cells of a long answer are whole periods, read without one.
  #counts: Map<number, number> | undefined;
  #n = 0;

  /** Adds `counts[i]` values in bucket `keys[i]` (none: null). */
  add(keys: readonly number[] | null, counts: readonly number[] | null): void {
    if (keys === null || counts === null || keys.length === 0) return;
    this.#counts ??= new Map();
    for (let i = 0; i < keys.length; i += 1) {
      const k = Number(keys[i]);
      const c = Number(counts[i]);
      this.#counts.set(k, (this.#counts.get(k) ?? 0) + c);
      this.#n += c;
    }
  }

  /** True when no value was added. */
  isEmpty(): boolean {
    return this.#n === 0;
  }

  /**
   * The median in hours, as percentile_cont(0.5) reads sorted values: the mean of ranks
   * floor((n−1)/2) and floor(n/2) (0-based), each the hours its bucket stands for; null when empty.
   */
  median(): number | null {
    if (this.#n === 0 || this.#counts === undefined) return null;
    const lo = Math.floor((this.#n - 1) / 2);
    const hi = Math.floor(this.#n / 2);
    let below = 0;
    let loKey: number | undefined;
    for (const k of [...this.#counts.keys()].sort((a, b) => a - b)) {
      below += this.#counts.get(k) as number;
      if (loKey === undefined && below > lo) loKey = k;
      if (below > hi) return (bucketHours(loKey as number) + bucketHours(k)) / 2;
    }
    return null; // unreachable: the counts add up to n
  }
}
