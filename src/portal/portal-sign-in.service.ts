/**
 * Signing in to the portal: email, password and (when the user has one) a TOTP code, admitted
 * against the account's and the address's attempt counters before anything is verified; and
 * setting up that second factor. A success starts a session (portal-sessions.service.ts).
 */
import { generateSecret as generateTotpSecret, generateURI, verify as verifyTotp } from "otplib";
import { recordAudit } from "../audit/audit.repository.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields } from "../fields.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { startSession } from "./portal-sessions.service.ts";
import { type PortalUserContext, portalSuspended } from "./portal-user.context.ts";
import * as repo from "./portal-user.repository.ts";
import { type PortalPrincipal, type PortalUser, verifyPassword } from "./portal-user.ts";

const SIGN_IN_FAILED = "email or password is incorrect";
const TOTP_ISSUER = "Lead Provider portal";

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

export function portalSignIn(ctx: PortalUserContext) {
  const { db, crypto, now, passwordHashing, audit, signInAttempt } = ctx;

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

  return {
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
      const passwordOk = await verifyPassword(user?.password_hash ?? null, password as string, passwordHashing);
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
      const session = await startSession(ctx, Number(user.id), replacing);
      await attempt.giveBack();
      await audit(`portal:${user.email}`, "portal_user.signed_in", Number(user.provider_id), {
        user_id: Number(user.id),
        second_factor: user.totp_secret !== null,
        client_ip: clientIp ?? null,
      });
      return { ...session, user: repo.userOf({ ...user, last_sign_in_at: now() }) };
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
