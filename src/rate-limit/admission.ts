/**
 * Rate-limit rules on top of the limiter, used by both edges: a provider's Public API requests,
 * and failed authentications per client address (so keys cannot be guessed at speed).
 */
import { DomainError } from "../errors.ts";
import type { Limits, Quota, RateLimiter, WindowName } from "./rate-limiter.ts";

export interface Admission {
  /** Admits one Public API request of the provider; returns its quota, or throws rate_limited. */
  provider(providerId: number, limits: Limits): Promise<Quota>;
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
      const { admitted, quota } = await limiter.admit(`provider:${providerId}`, limits);
      if (admitted) return quota;
      const window = quota.window ?? "minute";
      const retryAfterSeconds = quota.resetSeconds ?? 60;
      const limit = window === "minute" ? limits.perMinute : limits.perDay;
      options.onRejected?.(window);
      throw new DomainError(
        "rate_limited",
        `rate limit of ${limit} requests per ${window} exceeded; retry in ${retryAfterSeconds} s`,
        { code: "rate_limited", window, retryAfterSeconds, quota },
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
          window: "minute",
          retryAfterSeconds: wait,
        });
      }
      if (outcome.ok) return outcome.value;
      if (outcome.error instanceof DomainError && outcome.error.kind === "unauthenticated")
        await limiter.recordFailure(key);
      throw outcome.error;
    },
  };
}
