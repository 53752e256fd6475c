/**
 * One call to the service, attempted until it succeeds or may not be tried again: a fresh
 * `X-Request-Id` and time-out per attempt; retries with exponential backoff and jitter on network
 * errors, time-outs and 5xx, and after `Retry-After` on 429 rate_limited. cap_reached and
 * intake_closed are retried only when the client was asked to (and only when their reset is within
 * `maxRetryWaitMs`); intake_paused never (it has no reset).
 */
import { type ApiError, ConnectionError, errorFromResponse } from "./errors.ts";

/** What one attempt answered: openapi-fetch's result. */
export interface Attempted<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/** What each attempt is sent with. */
export type AttemptInit = {
  readonly headers: Record<string, string>;
  readonly signal: AbortSignal;
};

/** Why a call is tried again, as `onRetry` hears it. */
export type RetryReason = "network" | "timeout" | "server_error" | "rate_limited" | "cap_reached" | "intake_closed";

export interface RetryEvent {
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  /** How long the SDK waits before the next attempt. */
  readonly delayMs: number;
  readonly reason: RetryReason;
  /** The failed attempt's request id. */
  readonly requestId: string;
  /** The failed attempt's status (undefined when no answer arrived). */
  readonly status: number | undefined;
}

export interface RetryPolicy {
  /** Attempts after the first. */
  readonly maxRetries: number;
  /** Per attempt, from sending to the whole answer read. */
  readonly timeoutMs: number;
  /** The longest wait the SDK will sleep through (a longer Retry-After is thrown at once). */
  readonly maxRetryWaitMs: number;
  /** Also wait out cap_reached and intake_closed (never intake_paused). */
  readonly retryIntakeRefusals: boolean;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
}

/** The first backoff step and the longest, for network errors and 5xx without Retry-After. */
export const BACKOFF = { baseMs: 500, maxMs: 8_000 } as const;

/** Exponential backoff with equal jitter: between half and all of base·2ⁿ, capped. */
export function backoffMs(retry: number): number {
  const step = Math.min(BACKOFF.maxMs, BACKOFF.baseMs * 2 ** retry);
  return step / 2 + Math.random() * (step / 2);
}

/**
 * Called with the refusal of a later attempt when an earlier attempt's outcome is unknown (no
 * answer, or a 5xx): a value returned is the call's result instead of the refusal.
 */
export type Recover<T> = (error: ApiError) => Promise<T | undefined>;

function newRequestId(): string {
  return globalThis.crypto.randomUUID();
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** The wait before trying a refused attempt again, or undefined when it is not tried again. */
function retryDelay(
  error: ApiError,
  retry: number,
  policy: RetryPolicy,
): { ms: number; reason: RetryReason } | undefined {
  if (retry >= policy.maxRetries) return undefined;
  const after = error.retryAfter;
  const waited = (reason: RetryReason) => {
    if (after === undefined) return { ms: backoffMs(retry), reason };
    // Retry-After, plus up to a quarter second so that callers told the same instant spread out.
    const ms = after * 1000 + Math.random() * 250;
    return ms <= policy.maxRetryWaitMs ? { ms, reason } : undefined;
  };
  if (error.status >= 500) return waited("server_error");
  if (error.code === "rate_limited") return waited("rate_limited");
  if ((error.code === "cap_reached" || error.code === "intake_closed") && policy.retryIntakeRefusals) {
    return after === undefined ? undefined : waited(error.code);
  }
  return undefined;
}

/**
 * Runs `send` until it succeeds or may not be tried again. `signal` is the caller's: its abort ends
 * the call at once and is never retried.
 */
export async function attempt<T>(
  send: (init: AttemptInit) => Promise<Attempted<T>>,
  policy: RetryPolicy,
  options: { signal?: AbortSignal | undefined; recover?: Recover<T> | undefined } = {},
): Promise<T> {
  const { signal } = options;
  let uncertain = false;
  for (let retry = 0; ; retry++) {
    const requestId = newRequestId();
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    let result: Attempted<T>;
    try {
      result = await send({
        headers: { "X-Request-Id": requestId },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const timedOut = timeout.aborted;
      const failure = new ConnectionError(
        timedOut
          ? `no answer within ${policy.timeoutMs} ms (request ${requestId})`
          : `the connection failed: ${err instanceof Error ? err.message : String(err)} (request ${requestId})`,
        { status: 0, code: timedOut ? "timeout" : "connection_error", requestId, cause: err },
      );
      // The request may have reached the service and done its work.
      uncertain = true;
      if (retry >= policy.maxRetries) throw failure;
      const ms = backoffMs(retry);
      policy.onRetry?.({
        attempt: retry + 1,
        delayMs: ms,
        reason: timedOut ? "timeout" : "network",
        requestId,
        status: undefined,
      });
      await sleep(ms, signal);
      continue;
    }
    if (result.response.ok) return result.data as T;
    const error = errorFromResponse(result.response, result.error, requestId);
    if (uncertain && options.recover) {
      const recovered = await options.recover(error);
      if (recovered !== undefined) return recovered;
    }
    const next = retryDelay(error, retry, policy);
    if (next === undefined) throw error;
    if (error.status >= 500) uncertain = true;
    policy.onRetry?.({ attempt: retry + 1, delayMs: next.ms, reason: next.reason, requestId, status: error.status });
    await sleep(next.ms, signal);
  }
}
