/** Latency recording and the one result shape every load tool reports in. */

export interface LoadResult {
  /** Successful requests (2xx / OK / committed transactions). */
  readonly ok: number;
  /** Failed requests: non-2xx, connection errors, timeouts, RPC errors, failed transactions. */
  readonly errors: number;
  readonly seconds: number;
  /** Successful requests per second. */
  readonly rps: number;
  /** Milliseconds; NaN when the tool reported no latencies. */
  readonly p50: number;
  readonly p99: number;
  /** Up to a few distinct error descriptions, for the log. */
  readonly errorSamples: readonly string[];
}

/** Collects latencies (ms) in a growable Float64Array; cheap enough for 100k+ samples/s. */
export class Latencies {
  #values = new Float64Array(1 << 16);
  #n = 0;

  add(ms: number): void {
    if (this.#n === this.#values.length) {
      const bigger = new Float64Array(this.#values.length * 2);
      bigger.set(this.#values);
      this.#values = bigger;
    }
    this.#values[this.#n++] = ms;
  }

  get count(): number {
    return this.#n;
  }

  /** Nearest-rank percentiles, e.g. percentiles([50, 99]). */
  percentiles(ps: readonly number[]): number[] {
    if (this.#n === 0) return ps.map(() => Number.NaN);
    const sorted = this.#values.slice(0, this.#n).sort();
    return ps.map((p) => sorted[Math.min(this.#n - 1, Math.max(0, Math.ceil((p / 100) * this.#n) - 1))] as number);
  }
}

export function loadResult(
  latencies: Latencies,
  errors: number,
  seconds: number,
  errorSamples: readonly string[] = [],
): LoadResult {
  const [p50 = Number.NaN, p99 = Number.NaN] = latencies.percentiles([50, 99]);
  return { ok: latencies.count, errors, seconds, rps: latencies.count / seconds, p50, p99, errorSamples };
}

/** Remembers the first few distinct error messages. */
export function sampler(max = 5): { add(message: string): void; readonly samples: string[] } {
  const samples: string[] = [];
  return {
    samples,
    add(message) {
      if (samples.length < max && !samples.includes(message)) samples.push(message);
    },
  };
}
