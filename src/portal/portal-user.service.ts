/**
 * Portal users (docs/portal.md): administrators invite, re-invite and disable them; a person accepts
 * an invite by choosing a password, signs in (optionally with a TOTP code) and gets a server-side
 * session. Every change, sign-in and failed sign-in is audited under the provider; no password,
 * token or TOTP secret is ever logged, audited or returned after it is set.
 */
import type { Kysely } from "kysely";
import { generateSecret as generateTotpSecret, generateURI, verify as verifyTotp } from "otplib";
import type { KeyCrypto } from "../api-keys/api-key.ts";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { providerId as parseProviderId, notFound as providerNotFound } from "../providers/provider.service.ts";
import * as repo from "./portal-user.repository.ts";
import {
  hashPassword,
  INVITE_ATTEMPTS,
  INVITE_TTL_MS,
  newToken,
  type PortalPrincipal,
  type PortalUser,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  SIGN_IN_FAILURES,
  tokenDigest,
  verifyPassword,
  weakPassword,
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

export type PortalUserService = ReturnType<typeof createPortalUserService>;

/** The link an invite token opens: the token rides in the fragment, so it is never sent in a request line or logged. */
export function inviteUrlOf(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/portal/#invite=${token}`;
}

const SIGN_IN_FAILED = "email or password is incorrect";
const TOTP_ISSUER = "Lead Provider portal";

function userNotFound(userId: number): DomainError {
  return new DomainError("not_found", `no portal user with id ${userId} for this provider`, {
    code: "portal_user_not_found",
  });
}

function invalidInvite(): DomainError {
  return new DomainError(
    "not_found",
    "this invite link has expired, was already used or was replaced; ask your administrator for a new one",
    { code: "invite_invalid" },
  );
}

/** After a right password: the code is wrong, expired or was used already. */
function invalidSignInCode(): DomainError {
  return new DomainError("unauthenticated", "the authenticator code is wrong, expired or already used", {
    code: "invalid_totp_code",
    violations: [{ field: "totp_code", code: "invalid_totp_code", message: "enter the code your app shows now" }],
  });
}

function signInFailed(): DomainError {
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
function providerInactive(provider: { id: number; name: string }): DomainError {
  return new DomainError(
    "failed_precondition",
    `provider ${provider.id} ("${provider.name}") is inactive: reactivate it (is_active: true) before inviting its people`,
    { code: "provider_inactive" },
  );
}

export function createPortalUserService(deps: PortalUserServiceDeps) {
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
    requireSecondFactor: deps.requireSecondFactor ?? false,

    /** Invites a person to the provider's portal: the user, and the link that sets its password. */
    async invite(actor: string, rawProviderId: RawId, input: unknown, baseUrl: string): Promise<Invite> {
      const providerId = parseProviderId(rawProviderId);
      const body = (input ?? {}) as Record<string, unknown>;
      const f = new Fields();
      const email = f.email(body, "email");
      const name = f.text(body, "name", { max: 100, required: true, noControl: true })?.trim();
      if (name === "") f.add("name", "required", "name must not be blank");
      throwIfViolations(f.violations);
      const provider = await findProvider(db, providerId);
      if (!provider) throw providerNotFound(providerId);
      if (!provider.isActive) throw providerInactive(provider);
      const { token, digest } = newToken();
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS);
      const row = await db.transaction().execute(async (trx) => {
        const inserted = await repo.insertUser(trx, {
          providerId,
          email: email as string,
          name: name as string,
          inviteDigest: digest,
          inviteExpiresAt: expiresAt,
        });
        if (!inserted) {
          const message = "a portal user with this email already exists (emails are unique across providers)";
          throw new DomainError("duplicate", message, {
            code: "duplicate_portal_user_email",
            violations: [{ field: "email", code: "duplicate", message }],
          });
        }
        await recordAudit(trx, {
          actor,
          action: "portal_user.invited",
          targetType: "provider",
          targetId: String(providerId),
          details: { user_id: Number(inserted.id), email: inserted.email, invite_expires_at: expiresAt },
        });
        return inserted;
      });
      const user = repo.userOf(row);
      const url = inviteUrlOf(baseUrl, token);
      return { user, inviteUrl: url, inviteExpiresAt: expiresAt, emailed: await sendInvite(user, url, expiresAt) };
    },

    async list(rawProviderId: RawId): Promise<PortalUser[]> {
      const providerId = parseProviderId(rawProviderId);
      if (!(await findProvider(db, providerId))) throw providerNotFound(providerId);
      return (await repo.listUsers(db, providerId)).map(repo.userOf);
    },

    /**
     * A fresh invite: the previous link stops working and the user's sessions end. It is also the
     * password reset (an active user keeps signing in with the old password until the link is
     * used) and the way back for a disabled user (who is invited again).
     */
    async reinvite(actor: string, rawProviderId: RawId, rawUserId: RawId, baseUrl: string): Promise<Invite> {
      const providerId = parseProviderId(rawProviderId);
      const userId = parseUserId(rawUserId);
      const { token, digest } = newToken();
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS);
      const row = await db.transaction().execute(async (trx) => {
        const current = await repo.findUser(trx, providerId, userId);
        if (!current) throw userNotFound(userId);
        const provider = await findProvider(trx, providerId);
        if (provider && !provider.isActive) throw providerInactive(provider);
        // A fresh invite is also the way back for someone who lost their authenticator: the second
        // factor is removed, and set up again after signing in (required again if the portal says so).
        const updated = await repo.updateUser(trx, userId, {
          invite_digest: digest,
          invite_expires_at: expiresAt,
          totp_secret: null,
          totp_pending: null,
          totp_last_step: null,
          ...(current.status === "disabled" && { status: "invited" as const, password_hash: null }),
        });
        const sessions = await repo.deleteSessionsOf(trx, userId);
        await audit(
          actor,
          "portal_user.reinvited",
          providerId,
          {
            user_id: userId,
            email: current.email,
            ended_sessions: sessions,
            second_factor_removed: current.totp_secret !== null,
            invite_expires_at: expiresAt,
          },
          trx,
        );
        return updated ?? current;
      });
      const user = repo.userOf(row);
      const url = inviteUrlOf(baseUrl, token);
      return { user, inviteUrl: url, inviteExpiresAt: expiresAt, emailed: await sendInvite(user, url, expiresAt) };
    },

    /** Disables the user: its sessions end at once and its invite stops working. */
    async disable(actor: string, rawProviderId: RawId, rawUserId: RawId): Promise<PortalUser> {
      const providerId = parseProviderId(rawProviderId);
      const userId = parseUserId(rawUserId);
      const row = await db.transaction().execute(async (trx) => {
        const current = await repo.findUser(trx, providerId, userId);
        if (!current) throw userNotFound(userId);
        const updated = await repo.updateUser(trx, userId, {
          status: "disabled",
          invite_digest: null,
          invite_expires_at: null,
        });
        const sessions = await repo.deleteSessionsOf(trx, userId);
        await audit(
          actor,
          "portal_user.disabled",
          providerId,
          {
            user_id: userId,
            email: current.email,
            ended_sessions: sessions,
          },
          trx,
        );
        return updated ?? current;
      });
      return repo.userOf(row);
    },

    /**
     * Ends the sessions of every portal user of a provider being deactivated, in the caller's
     * transaction, and audits what ended. Returns how many ended.
     */
    async endProviderSessions(on: Kysely<Database>, actor: string, providerId: number): Promise<number> {
      const ended = await repo.deleteSessionsOfProvider(on, providerId);
      if (ended.length === 0) return 0;
      await audit(
        actor,
        "portal_user.sessions_ended",
        providerId,
        {
          reason: "provider_inactive",
          ended_sessions: ended.length,
          user_ids: [...new Set(ended)].sort((a, b) => a - b),
        },
        on,
      );
      return ended.length;
    },

    /**
     * What an invite link is for (the page that sets the password shows it). Each read is an
     * attempt against the link's and the address's limits.
     */
    async inspectInvite(input: unknown, clientIp?: string) {
      const token = inviteToken(input);
      await inviteAttempt(token, clientIp);
      const row = await repo.findByInvite(db, tokenDigest(token), now());
      if (!row) throw invalidInvite();
      if (!row.provider_active) throw portalSuspended();
      return {
        email: row.email,
        name: row.name,
        providerName: row.provider_name,
        expiresAt: row.invite_expires_at as Date,
        secondFactorRequired: deps.requireSecondFactor ?? false,
      };
    },

    /**
     * Sets the password of the invite's user, who becomes active; the link stops working and the
     * user's sessions end. Each try is an attempt against the link's and the address's limits
     * (taken before the password is judged); a refused password leaves the link as it was.
     */
    async acceptInvite(input: unknown, clientIp?: string): Promise<PortalUser> {
      const token = inviteToken(input);
      const body = (input ?? {}) as Record<string, unknown>;
      const f = new Fields();
      const password = f.text(body, "password", { max: 1024, required: true });
      throwIfViolations(f.violations);
      await inviteAttempt(token, clientIp);
      const row = await repo.findByInvite(db, tokenDigest(token), now());
      if (!row) throw invalidInvite();
      if (!row.provider_active) throw portalSuspended();
      const weak = await weakPassword(password as string, [row.email, row.name, row.provider_name]);
      if (weak !== undefined) {
        throw new DomainError("invalid_argument", weak.message, {
          code: weak.code === "weak_password" ? "weak_password" : "validation_error",
          violations: [{ field: "password", code: weak.code, message: weak.message }],
        });
      }
      const passwordHash = await hashPassword(password as string);
      const updated = await db.transaction().execute(async (trx) => {
        // Conditional on the digest still being there: two tabs accepting one link, one wins.
        const accepted = await trx
          .updateTable("portal_users")
          .set({ password_hash: passwordHash, status: "active", invite_digest: null, invite_expires_at: null })
          .where("id", "=", row.id)
          .where("invite_digest", "=", tokenDigest(token))
          .returningAll()
          .executeTakeFirst();
        if (!accepted) throw invalidInvite();
        await repo.deleteSessionsOf(trx, Number(row.id));
        await recordAudit(trx, {
          actor: `portal:${row.email}`,
          action: "portal_user.password_set",
          targetType: "provider",
          targetId: String(row.provider_id),
          details: { user_id: Number(row.id), status_before: row.status },
        });
        return accepted;
      });
      return repo.userOf(updated);
    },

    /**
     * Signs in with email, password and (when the user has one) a TOTP code: a new session token
     * for the cookie. Every attempt is taken from the account's and the address's counters before
     * anything is verified, so simultaneous guesses cannot all pass; past their limits the answer
     * is 429 whether the email exists or not. A success (or a right password waiting for its code)
     * gives its attempt back. Every failure, whether the email exists or not, is the same 401.
     * A right password of an inactive provider's user is 403 provider_inactive.
     */
    async signIn(
      input: unknown,
      clientIp: string | undefined,
      replacing: string | undefined,
    ): Promise<{ token: string; expiresAt: Date; user: PortalUser }> {
      const body = (input ?? {}) as Record<string, unknown>;
      const f = new Fields();
      const email = f.text(body, "email", { max: 254, required: true })?.trim();
      const password = f.text(body, "password", { max: 1024, required: true });
      // Authenticator apps show "123 456": the space is not part of the code.
      const code = f.text(body, "totp_code", { max: 20 })?.replace(/\s+/g, "");
      throwIfViolations(f.violations);
      const attempt = await signInAttempt(email as string, clientIp);
      const user = await repo.findUserByEmail(db, email as string);
      const passwordOk = await verifyPassword(user?.password_hash ?? null, password as string);
      if (!user || !passwordOk) throw await failed(clientIp, user, "password");
      if (user.status !== "active") throw await failed(clientIp, user, user.status);
      if (!(await findProvider(db, Number(user.provider_id)))?.isActive) {
        await failed(clientIp, user, "provider_inactive");
        throw portalSuspended();
      }
      if (user.totp_secret !== null) {
        if (code === undefined) {
          // The password was right: asking for the code is no failed guess.
          await attempt.giveBack();
          throw new DomainError("unauthenticated", "enter the 6-digit code from your authenticator app", {
            code: "second_factor_required",
            violations: [{ field: "totp_code", code: "required", message: "totp_code is required for this account" }],
          });
        }
        const step = await totpStep(crypto.decrypt(user.totp_secret), code, user.totp_last_step);
        if (step === undefined) {
          // The password was right (the previous answer said so): say which part is wrong.
          await failed(clientIp, user, "totp_code");
          throw invalidSignInCode();
        }
        // Conditional on the last step: two sign-ins racing with one code, one wins.
        const taken = await db
          .updateTable("portal_users")
          .set({ totp_last_step: step })
          .where("id", "=", user.id)
          .where((eb) => eb.or([eb("totp_last_step", "is", null), eb("totp_last_step", "<", String(step))]))
          .executeTakeFirst();
        if (Number(taken.numUpdatedRows) === 0) {
          await failed(clientIp, user, "totp_code");
          throw invalidSignInCode();
        }
      }
      const session = await startSession(Number(user.id), replacing);
      await attempt.giveBack();
      await audit(`portal:${user.email}`, "portal_user.signed_in", Number(user.provider_id), {
        user_id: Number(user.id),
        second_factor: user.totp_secret !== null,
        client_ip: clientIp ?? null,
      });
      return { ...session, user: repo.userOf({ ...user, last_sign_in_at: now() }) };
    },

    /** The principal behind a session cookie's token, or unauthenticated (the session is gone or over). */
    async authenticate(token: string | undefined): Promise<PortalPrincipal> {
      if (token === undefined || token === "") throw sessionRequired();
      const digest = tokenDigest(token);
      const s = await repo.findSession(db, digest);
      const at = now();
      if (s?.status !== "active") throw sessionRequired("the session has ended; sign in again");
      if (s.expiresAt.getTime() <= at.getTime() || s.lastSeenAt.getTime() + SESSION_IDLE_MS <= at.getTime()) {
        await repo.deleteSession(db, digest);
        throw sessionRequired("the session has expired; sign in again");
      }
      if (!s.providerActive) {
        // Deactivation ends every session; one that slipped past it (started meanwhile) ends here.
        if ((await repo.deleteSession(db, digest)) > 0) {
          await audit(`portal:${s.email}`, "portal_user.sessions_ended", Number(s.providerId), {
            reason: "provider_inactive",
            ended_sessions: 1,
            user_ids: [Number(s.userId)],
          });
        }
        throw portalSuspended();
      }
      if (at.getTime() - s.lastSeenAt.getTime() >= SESSION_TOUCH_MS) await repo.touchSession(db, digest, at);
      return {
        userId: Number(s.userId),
        providerId: Number(s.providerId),
        email: s.email,
        mustEnrolSecondFactor: (deps.requireSecondFactor ?? false) && s.totpSecret === null,
      };
    },

    async signOut(token: string | undefined): Promise<void> {
      if (token === undefined || token === "") return;
      const digest = tokenDigest(token);
      const s = await repo.findSession(db, digest);
      if (!s) return;
      await repo.deleteSession(db, digest);
      await audit(`portal:${s.email}`, "portal_user.signed_out", Number(s.providerId), { user_id: Number(s.userId) });
    },

    async me(principal: PortalPrincipal): Promise<PortalUser> {
      const row = await repo.findUserById(db, principal.userId);
      if (!row) throw sessionRequired("the session has ended; sign in again");
      return repo.userOf(row);
    },

    /** Starts setting up a TOTP second factor: a new secret and its otpauth:// URI (confirmed by a code). */
    async startSecondFactor(principal: PortalPrincipal): Promise<{ secret: string; uri: string }> {
      const current = await repo.findUserById(db, principal.userId);
      if (current?.totp_secret) {
        // Whoever holds a session must not be able to swap the factor: an administrator's fresh
        // invite removes it (with the password), and the person sets it up again.
        throw new DomainError(
          "failed_precondition",
          "a second factor is already on; to replace it, ask your administrator for a fresh invite link",
          { code: "second_factor_already_on" },
        );
      }
      const secret = generateTotpSecret();
      await repo.updateUser(db, principal.userId, { totp_pending: crypto.encrypt(secret) });
      return { secret, uri: generateURI({ issuer: TOTP_ISSUER, label: principal.email, secret }) };
    },

    /** Confirms the pending second factor with a current code; from then on sign-in asks for one. */
    async confirmSecondFactor(principal: PortalPrincipal, input: unknown): Promise<PortalUser> {
      const body = (input ?? {}) as Record<string, unknown>;
      const f = new Fields();
      const code = f.text(body, "totp_code", { max: 20, required: true });
      throwIfViolations(f.violations);
      const row = await repo.findUserById(db, principal.userId);
      if (!row?.totp_pending) {
        throw new DomainError("failed_precondition", "start setting up the second factor first", {
          code: "second_factor_not_started",
        });
      }
      const step = await totpStep(crypto.decrypt(row.totp_pending), (code as string).replace(/\s+/g, ""), null);
      if (step === undefined) {
        const message = "the code does not match; check the authenticator app's clock and enter the current code";
        throw new DomainError("invalid_argument", message, {
          code: "invalid_totp_code",
          violations: [{ field: "totp_code", code: "invalid_totp_code", message }],
        });
      }
      const updated = await db.transaction().execute(async (trx) => {
        const u = await repo.updateUser(trx, principal.userId, {
          totp_secret: row.totp_pending,
          totp_pending: null,
          totp_last_step: step,
        });
        await recordAudit(trx, {
          actor: `portal:${principal.email}`,
          action: "portal_user.second_factor_enabled",
          targetType: "provider",
          targetId: String(principal.providerId),
          details: { user_id: principal.userId },
        });
        return u;
      });
      return repo.userOf(updated ?? row);
    },
  };
}

function inviteToken(input: unknown): string {
  const f = new Fields();
  const token = f.text((input ?? {}) as Record<string, unknown>, "token", { max: 100, required: true });
  throwIfViolations(f.violations);
  return token as string;
}
