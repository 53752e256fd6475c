/**
 * What the three parts of the portal user service (portal-user.service.ts: invites, sign-in,
 * sessions) share: the service's dependencies and errors, its audit entries, the attempt
 * counters of sign-ins and invite links, and the start of a session.
 */
import type { Kysely } from "kysely";
import { verify as verifyTotp } from "otplib";
import type { KeyCrypto } from "../api-keys/api-key.ts";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { notFound as providerNotFound } from "../providers/provider.service.ts";
import * as repo from "./portal-user.repository.ts";
import {
  INVITE_ATTEMPTS,
  newToken,
  type PortalUser,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SIGN_IN_FAILURES,
  tokenDigest,
} from "./portal-user.ts";

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

export interface PortalUserServiceDeps {
  readonly db: Kysely<Database>;
  /** Encrypts TOTP secrets at rest (the API keys' AES-256-GCM, API_KEY_SECRET). */
  readonly crypto: KeyCrypto;
  readonly throttle: SignInThrottle;
  readonly now?: () => Date;
  /** PORTAL_REQUIRE_2FA: every user needs a second factor before anything but enrolling opens. */
  readonly requireSecondFactor?: boolean;
  readonly mailer?: InviteMailer | undefined;
  readonly onMailError?: (err: unknown) => void;
}

export interface Invite {
  readonly user: PortalUser;
  /** The link to hand over (shown once; only its digest is stored). */
  readonly inviteUrl: string;
  readonly inviteExpiresAt: Date;
  /** Whether it was also e-mailed (SMTP_URL set and the server took it). */
  readonly emailed: boolean;
}

/** The link an invite token opens: the token rides in the fragment, so it is never sent in a request line or logged. */
export function inviteUrlOf(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/portal/#invite=${token}`;
}

export const SIGN_IN_FAILED = "email or password is incorrect";
export const TOTP_ISSUER = "Lead Provider portal";

export function userNotFound(userId: number): DomainError {
  return new DomainError("not_found", `no portal user with id ${userId} for this provider`, {
    code: "portal_user_not_found",
  });
}

export function invalidInvite(): DomainError {
  return new DomainError(
    "not_found",
    "this invite link has expired, was already used or was replaced; ask your administrator for a new one",
    { code: "invite_invalid" },
  );
}

/** After a right password: the code is wrong, expired or was used already. */
export function invalidSignInCode(): DomainError {
  return new DomainError("unauthenticated", "the authenticator code is wrong, expired or already used", {
    code: "invalid_totp_code",
    violations: [{ field: "totp_code", code: "invalid_totp_code", message: "enter the code your app shows now" }],
  });
}

export function signInFailed(): DomainError {
  return new DomainError("unauthenticated", SIGN_IN_FAILED, { code: "sign_in_failed" });
}

export function sessionRequired(detail = "sign in to the portal first"): DomainError {
  return new DomainError("unauthenticated", detail, { code: "session_required" });
}

/** A person of a provider an administrator has deactivated: no session, sign-in or invite until it is active again. */
export function portalSuspended(): DomainError {
  return new DomainError(
    "permission_denied",
    "this provider's portal access is suspended; contact the broker's administrators to have it restored",
    { code: "provider_inactive" },
  );
}

/** An administrator inviting a person into a provider that is not active. */
export function providerInactive(provider: { id: number; name: string }): DomainError {
  return new DomainError(
    "failed_precondition",
    `provider ${provider.id} ("${provider.name}") is inactive: reactivate it (is_active: true) before inviting its people`,
    { code: "provider_inactive" },
  );
}

/** What the parts of the portal user service share: its dependencies, clock, audit, counters and sessions. */
export type PortalUserShared = ReturnType<typeof createPortalUserShared>;

export function createPortalUserShared(deps: PortalUserServiceDeps) {
  const { db, crypto, throttle } = deps;
  const now = deps.now ?? (() => new Date());

  const audit = (
    actor: string,
    action: string,
    providerId: number,
    details: Record<string, unknown>,
    on: Kysely<Database> = db,
  ) => recordAudit(on, { actor, action, targetType: "provider", targetId: String(providerId), details });

  /** The time step of a valid code (30 s either side of now, later than `after`), else undefined. */
  async function totpStep(secret: string, code: string, after: string | null): Promise<number | undefined> {
    if (!/^\d{6}$/.test(code)) return undefined;
    const r = await verifyTotp({
      secret,
      token: code,
      epoch: Math.floor(now().getTime() / 1000),
      epochTolerance: 30,
      ...(after !== null && { afterTimeStep: Number(after) }),
    }).catch(() => undefined);
    return r?.valid && "timeStep" in r ? Number(r.timeStep) : undefined;
  }

  async function providerName(providerId: number): Promise<string> {
    const provider = await findProvider(db, providerId);
    if (!provider) throw providerNotFound(providerId);
    return provider.name;
  }

  async function sendInvite(user: PortalUser, url: string, expiresAt: Date): Promise<boolean> {
    if (!deps.mailer) return false;
    try {
      await deps.mailer({
        to: user.email,
        name: user.name,
        providerName: await providerName(user.providerId),
        url,
        expiresAt,
      });
      return true;
    } catch (err) {
      // The invite stands: the administrator still has the link to hand over.
      deps.onMailError?.(err);
      return false;
    }
  }

  function parseUserId(raw: RawId): number {
    const f = new Fields();
    const id = f.id({ user_id: raw }, "user_id");
    throwIfViolations(f.violations);
    return id ?? 0;
  }

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

  /** A sign-in attempt, taken from the account's and the address's counters before the password is verified. */
  const signInAttempt = (email: string, clientIp: string | undefined) =>
    admit(
      [
        { key: `portal:${email.toLowerCase()}`, limit: SIGN_IN_FAILURES.perAccountPerMinute },
        { key: `portal-ip:${clientIp ?? "unknown"}`, limit: SIGN_IN_FAILURES.perAddressPerMinute },
      ],
      "failed sign-ins",
    );

  /** An attempt with an invite link (read or accepted), taken from the link's and the address's counters. */
  const inviteAttempt = (token: string, clientIp: string | undefined) =>
    admit(
      [
        { key: `invite:${tokenDigest(token)}`, limit: INVITE_ATTEMPTS.perInvitePerMinute },
        { key: `invite-ip:${clientIp ?? "unknown"}`, limit: INVITE_ATTEMPTS.perAddressPerMinute },
      ],
      "attempts with invite links",
    );

  async function failed(clientIp: string | undefined, user: repo.RowOf | undefined, why: string) {
    // An unknown email is recorded without it (it may be a password typed in the wrong field).
    await recordAudit(db, {
      actor: user ? `portal:${user.email}` : "portal:unknown",
      action: "portal_user.sign_in_failed",
      targetType: user ? "provider" : "portal",
      targetId: user ? String(user.provider_id) : "sign_in",
      details: { ...(user && { user_id: Number(user.id) }), reason: why, client_ip: clientIp ?? null },
    });
    return signInFailed();
  }

  async function startSession(userId: number, replacing: string | undefined) {
    const at = now();
    const { token, digest } = newToken();
    await db.transaction().execute(async (trx) => {
      // Rotated at sign-in: the session the browser held before (if any) ends.
      if (replacing !== undefined) await repo.deleteSession(trx, tokenDigest(replacing));
      await repo.deleteEndedSessionsOf(trx, userId, new Date(at.getTime() - SESSION_IDLE_MS), at);
      await repo.insertSession(trx, {
        digest,
        userId,
        at,
        expiresAt: new Date(at.getTime() + SESSION_ABSOLUTE_MS),
      });
      await repo.updateUser(trx, userId, { last_sign_in_at: at });
    });
    return { token, expiresAt: new Date(at.getTime() + SESSION_ABSOLUTE_MS) };
  }

  return {
    deps,
    db,
    crypto,
    now,
    audit,
    totpStep,
    providerName,
    sendInvite,
    parseUserId,
    signInAttempt,
    inviteAttempt,
    failed,
    startSession,
  };
}

/** The invite link's token in a request body. */
export function inviteToken(input: unknown): string {
  const f = new Fields();
  const token = f.text((input ?? {}) as Record<string, unknown>, "token", { max: 100, required: true });
  throwIfViolations(f.violations);
  return token as string;
}
