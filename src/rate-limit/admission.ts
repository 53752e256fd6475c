/**
 * Rate-limit rules on top of the limiter, used by both edges: a provider's Public API requests,
 * and failed authentications per client address (so keys cannot be guessed at speed).
 */
import type { GateAdmission } from "../edge/identity.ts";
import { DomainError } from "../errors.ts";
import type { Decision, Limits, Quota, RateLimiter, WindowName } from "./rate-limiter.ts";

/** The gate's rules (edge/identity.ts: provider, guardAuth, reads) and the back office's view of them. */
export interface Admission extends GateAdmission {
  /** Where the provider's counters of one mode stand now (nothing is taken). */
  usage(providerId: number, livemode: boolean): ReturnType<RateLimiter["usage"]>;
}

const bucketOf = (providerId: number, livemode: boolean) =>
  livemode ? `provider:${providerId}` : `provider:${providerId}:test`;

export interface AdmissionOptions {
  readonly authFailuresPerMinute: number;
  /** REQUEST_LOG_READS_PER_MINUTE (a day allows 24 hours of it). */
  readonly readsPerMinute?: number;
  readonly onRejected?: (reason: WindowName | "auth_failures") => void;
}

export function createAdmission(limiter: RateLimiter, options: AdmissionOptions): Admission {
  const readsPerMinute = options.readsPerMinute ?? 60;
  const readLimits: Limits = { perMinute: readsPerMinute, perDay: readsPerMinute * 1440 };

  function admit(bucket: string, limits: Limits, what: string): Quota | Promise<Quota> {
    const decision = limiter.admit(bucket, limits);
    // In process the decision is at hand: no promise is made for it.
    return decision instanceof Promise ? decision.then(settle) : settle(decision);

    function settle({ admitted, quota }: Decision): Quota {
      if (admitted) return quota;
      const window = quota.window ?? "minute";
      const retryAfterSeconds = quota.resetSeconds ?? 60;
      const limit = window === "minute" ? limits.perMinute : limits.perDay;
      options.onRejected?.(window);
      throw new DomainError(
        "rate_limited",
        `rate limit of ${limit} ${what} per ${window} exceeded; retry in ${retryAfterSeconds} s`,
        { code: "rate_limited", window, retryAfterSeconds, quota },
      );
    }
  }

  return {
    provider(providerId, limits, livemode = true) {
      return admit(bucketOf(providerId, livemode), limits, "requests");
    },

    reads(providerId, livemode) {
      return admit(`reads:${bucketOf(providerId, livemode)}`, readLimits, "reads of the request log and stats");
    },

    usage(providerId, livemode) {
      return limiter.usage(bucketOf(providerId, livemode));
    },

    async guardAuth(clientIp, presented, attempt) {
      try {
        return await attempt();
      } catch (err) {
        const guessed = presented && err instanceof DomainError && err.kind === "unauthenticated";
        if (!guessed) throw err;
        // Counted after the failure (a valid credential is never refused), in one atomic take: of
        // any number of simultaneous failures from the address, only the limit are answered 401.
        const taken = await limiter.takeAttempt([{ key: clientIp ?? "unknown", limit: options.authFailuresPerMinute }]);
        if (!taken.admitted) {
          const wait = taken.retryAfterSeconds;
          options.onRejected?.("auth_failures");
          throw new DomainError(
            "rate_limited",
            `too many failed authentications from this address; retry in ${wait} s`,
            {
              code: "rate_limited",
              window: "minute",
              retryAfterSeconds: wait,
            },
          );
        }
        throw err;
      }
    },
  };
}
