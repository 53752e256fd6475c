/**
 * Rate-limit windows and the quota a request is admitted with: plain types that the rate limiter
 * (rate-limit/) produces, the domain error carries (errors.ts) and both edges render as RateLimit
 * headers (edge/rate-limit-headers.ts). Base code: it imports nothing.
 */

export const WINDOWS = { minute: 60_000, day: 86_400_000 } as const;
export type WindowName = keyof typeof WINDOWS;

export interface Limits {
  readonly perMinute: number;
  readonly perDay: number;
}

/** Where a key stands in its windows after an admission (edges render it as RateLimit headers). */
export interface Quota {
  readonly limits: Limits;
  /** The window closest to exhaustion (the exhausted one when refused); absent when failing open. */
  readonly window?: WindowName;
  /** Requests left in `window`. */
  readonly remaining?: number;
  /** Whole seconds until `window` resets. */
  readonly resetSeconds?: number;
}
