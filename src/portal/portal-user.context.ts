/**
 * What the parts of the portal user service (portal-user.service.ts: invites, sign-in, sessions)
 * share: their dependencies, the clock, audit entries under the provider, the per-minute attempt
 * counters taken before any work, and the refusal of an inactive provider's people.
 */
import type { Kysely } from "kysely";
import type { KeyCrypto } from "../api-keys/api-key.ts";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import { PASSWORD_HASHING, type PasswordHashing, SIGN_IN_FAILURES, weakPassword } from "./portal-user.ts";

/**
 * Per-minute attempt counters (the rate limiter's: Redis when configured), taken atomically
 * before the work they guard: all of the given counters, or none when one is at its limit.
 */
export interface SignInThrottle {
  takeAttempt(
    counters: readonly { readonly key: string; readonly limit: number }[],
  ): Promise<
    | { readonly admitted: true; giveBack(): Promise<void> }
    | { readonly admitted: false; readonly retryAfterSeconds: number }
  >;
}

/** Sends an invite by e-mail (SMTP_URL); absent when the administrator hands the link over. */
export type InviteMailer = (invite: {
  readonly to: string;
  readonly name: string;
  readonly providerName: string;
  readonly url: string;
  readonly expiresAt: Date;
}) => Promise<void>;

/** Sends a password-reset link by e-mail (SMTP_URL); absent, the portal offers no reset. */
export type ResetMailer = (reset: {
  readonly to: string;
  readonly name: string;
  readonly providerName: string;
  readonly url: string;
  readonly expiresAt: Date;
}) => Promise<void>;

export interface PortalUserServiceDeps {
  readonly db: Kysely<Database>;
  /** Encrypts TOTP secrets at rest (the API keys' AES-256-GCM, API_KEY_SECRET). */
  readonly crypto: KeyCrypto;
  readonly throttle: SignInThrottle;
  readonly now?: () => Date;
  /** PORTAL_REQUIRE_2FA: every user needs a second factor before anything but enrolling opens. */
  readonly requireSecondFactor?: boolean;
  readonly mailer?: InviteMailer | undefined;
  /** With it (SMTP_URL set) people can ask for a password-reset link on the sign-in page. */
  readonly resetMailer?: ResetMailer | undefined;
  readonly onMailError?: (err: unknown) => void;
  /**
   * Argon2id's cost for the passwords set and the unknown-email decoy: PASSWORD_HASHING (19 MiB,
   * 2 passes) unless given. Only the unit tests give less (still Argon2id, at its minimum).
   */
  readonly passwordHashing?: PasswordHashing;
}

/** A person of a provider an administrator has deactivated: no session, sign-in or invite until it is active again. */
export function portalSuspended(): DomainError {
  return new DomainError(
    "permission_denied",
    "this provider's portal access is suspended; contact the broker's administrators to have it restored",
    { code: "provider_inactive" },
  );
}

/** The parts' shared state and helpers, made once per service. */
export type PortalUserContext = ReturnType<typeof createPortalUserContext>;

export function createPortalUserContext(deps: PortalUserServiceDeps) {
  const { db, crypto, throttle } = deps;
  const now = deps.now ?? (() => new Date());
  const passwordHashing = deps.passwordHashing ?? PASSWORD_HASHING;

  const audit = (
    actor: string,
    action: string,
    providerId: number,
    details: Record<string, unknown>,
    on: Kysely<Database> = db,
  ) => recordAudit(on, { actor, action, targetType: "provider", targetId: String(providerId), details });

  /**
   * Takes one attempt from each counter before any work is done (all or none, atomically, across
   * instances sharing Redis), or throws rate_limited when one of them is at its limit this minute.
   */
  async function admit(counters: { key: string; limit: number }[], what: string) {
    const attempt = await throttle.takeAttempt(counters);
    if (attempt.admitted) return attempt;
    const wait = attempt.retryAfterSeconds;
    throw new DomainError("rate_limited", `too many ${what}; retry in ${wait} s`, {
      code: "rate_limited",
      window: "minute",
      retryAfterSeconds: wait,
    });
  }

  /**
   * One attempt against an account (by email) and a client address: the sign-in counters, which
   * asking for a password-reset link takes from too, so neither gives more tries than the other.
   */
  const signInAttempt = (email: string, clientIp: string | undefined) =>
    admit(
      [
        { key: `portal:${email.toLowerCase()}`, limit: SIGN_IN_FAILURES.perAccountPerMinute },
        { key: `portal-ip:${clientIp ?? "unknown"}`, limit: SIGN_IN_FAILURES.perAddressPerMinute },
      ],
      "failed sign-ins",
    );

  return { deps, db, crypto, now, passwordHashing, audit, admit, signInAttempt };
}

/**
 * Refuses a password that breaks the password rule (portal-user.ts weakPassword: length, the
 * person's email, name and provider's name in any case, zxcvbn's score) with a problem naming the
 * field `password`. Every place a password is set calls it: invite, reset, change.
 */
export async function refuseWeakPassword(
  password: string,
  person: { readonly email: string; readonly name: string; readonly providerName: string },
): Promise<void> {
  const weak = await weakPassword(password, person);
  if (weak === undefined) return;
  throw new DomainError("invalid_argument", weak.message, {
    code: weak.code === "weak_password" ? "weak_password" : "validation_error",
    violations: [{ field: "password", code: weak.code, message: weak.message }],
  });
}
