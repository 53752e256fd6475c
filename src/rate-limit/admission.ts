/**
 * Rate-limit rules on top of the limiter, used by both edges: a provider's Public API requests,
 * and failed authentications per client address (so keys cannot be guessed at speed).
 */
import { DomainError } from "../errors.ts";
import type { Limits, RateLimiter, WindowName } from "./rate-limiter.ts";

/** How an edge admits one Public API request (the headers to send, or a thrown 429). */
export type AdmitProvider = Admission["provider"];

export interface Admission {
  /** Admits one Public API request of the provider; returns the headers to send, or throws 429. */
  provider(providerId: number, limits: Limits): Promise<Record<string, string>>;
  /** Runs an authentication attempt unless `clientIp` failed too often; counts a failure. */
  guardAuth<T>(clientIp: string | undefined, attempt: () => Promise<T>): Promise<T>;
}

export interface AdmissionOptions {
  readonly authFailuresPerMinute: number;
  readonly onRejected?: (reason: WindowName | "auth_failures") => void;
}

export function createAdmission(limiter: RateLimiter, options: AdmissionOptions): Admission {
  return {
    async provider(providerId, limits) {
      const decision = await limiter.admit(`provider:${providerId}`, limits);
      if (decision.admitted) return decision.headers;
      const window = decision.window ?? "minute";
      const limit = window === "minute" ? limits.perMinute : limits.perDay;
      options.onRejected?.(window);
      throw new DomainError(
        "rate_limited",
        `rate limit of ${limit} requests per ${window} exceeded; retry in ${decision.retryAfter} s`,
        { code: "rate_limited", headers: decision.headers, extra: { window, retry_after: decision.retryAfter } },
      );
    },

    async guardAuth(clientIp, attempt) {
      const key = clientIp ?? "unknown";
      // The address check and the verification run side by side; a blocked address gets 429
      // whatever the verification found.
      const [wait, outcome] = await Promise.all([
        limiter.failureBlock(key, options.authFailuresPerMinute),
        attempt().then(
          (value) => ({ ok: true as const, value }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
      ]);
      if (wait > 0) {
        options.onRejected?.("auth_failures");
        throw new DomainError("rate_limited", `too many failed authentications from this address; retry in ${wait} s`, {
          code: "rate_limited",
          headers: { "Retry-After": String(wait) },
          extra: { window: "minute", retry_after: wait },
        });
      }
      if (outcome.ok) return outcome.value;
      if (outcome.error instanceof DomainError && outcome.error.kind === "unauthenticated")
        await limiter.recordFailure(key);
      throw outcome.error;
    },
  };
}
