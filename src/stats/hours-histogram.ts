/**
 * The hours from creation to QUOTE and from QUOTE to ORDER are kept as histograms (issue 25): the
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

/** The median of a histogram whose two middle values fall in buckets `lo` and `hi` (null: none). */
export function medianHours(lo: number | null, hi: number | null): number | null {
  if (lo === null || hi === null) return null;
  return (bucketHours(lo) + bucketHours(hi)) / 2;
}
