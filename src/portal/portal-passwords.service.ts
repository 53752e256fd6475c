/**
 * Passwords after the invite: a forgotten one reset by an e-mailed link (only with SMTP_URL set),
 * and a signed-in person changing their own. Both apply the password rule
 * (refuseWeakPassword) and end the person's other sessions; both are audited under the provider.
 *
 * Asking for a reset link answers the same whatever the email: an unknown, invited or disabled
 * one does the same reads and writes (an audit entry) as a known one, and the e-mail is sent after
 * the answer, so neither the words nor the time tell whether an account exists. Each request is
 * an attempt from the sign-in counters (per email and per address), so it is throttled as sign-in is.
 */
import { recordAudit } from "../audit/audit.repository.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields } from "../fields.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { type PortalUserContext, portalSuspended, refuseWeakPassword } from "./portal-user.context.ts";
import * as repo from "./portal-user.repository.ts";
import {
  hashPassword,
  INVITE_ATTEMPTS,
  newToken,
  type PortalPrincipal,
  type PortalUser,
  RESET_TTL_MS,
  tokenDigest,
  verifyPassword,
} from "./portal-user.ts";

/** What every request for a reset link is answered, whether or not the email has an account. */
export const RESET_REQUESTED =
  "If an active account has this email, a link to choose a new password is on its way; it works once, for one hour.";

/** The link a reset token opens: like an invite's, the token rides in the fragment. */
export function resetUrlOf(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/portal/#reset=${token}`;
}

function resetUnavailable(): DomainError {
  return new DomainError(
    "not_found",
    "password reset by e-mail is not offered here (this service sends no e-mail); ask your administrator for a fresh invite link",
    { code: "password_reset_unavailable" },
  );
}

function invalidReset(): DomainError {
  return new DomainError(
    "not_found",
    "this password reset link has expired or was already used; ask for a new one on the sign-in page",
    { code: "reset_invalid" },
  );
}

export function portalPasswords(ctx: PortalUserContext) {
  const { db, deps, now, passwordHashing, admit, signInAttempt } = ctx;

  function text(input: unknown, key: string, max: number): string {
    const f = new Fields();
    const value = f.text((input ?? {}) as Record<string, unknown>, key, { max, required: true });
    throwIfViolations(f.violations);
    return value as string;
  }

  return {
    /** Whether people can ask for a reset link (SMTP_URL is set). */
    passwordResetAvailable: deps.resetMailer !== undefined,

    /**
     * Asks for a reset link for an email: always the same answer (RESET_REQUESTED); when the email
     * is an active user's of an active provider, a one-hour, single-use link is e-mailed (after the
     * answer) and any earlier one stops working. 404 `password_reset_unavailable` without SMTP_URL.
     */
    async requestPasswordReset(input: unknown, clientIp: string | undefined, baseUrl: string): Promise<string> {
      const mailer = deps.resetMailer;
      if (mailer === undefined) throw resetUnavailable();
      const f = new Fields();
      const email = f.email((input ?? {}) as Record<string, unknown>, "email");
      throwIfViolations(f.violations);
      await signInAttempt(email as string, clientIp);
      const user = await repo.findUserByEmail(db, email as string);
      const provider = user && (await findProvider(db, Number(user.provider_id)));
      const eligible = user?.status === "active" && provider?.isActive === true;
      const { token, digest } = newToken();
      const expiresAt = new Date(now().getTime() + RESET_TTL_MS);
      await db.transaction().execute(async (trx) => {
        if (eligible)
          await repo.updateUser(trx, Number(user.id), { reset_digest: digest, reset_expires_at: expiresAt });
        // Recorded either way (an unknown email without it, as failed sign-ins are): the same work.
        await recordAudit(trx, {
          actor: user ? `portal:${user.email}` : "portal:unknown",
          action: "portal_user.password_reset_requested",
          targetType: user ? "provider" : "portal",
          targetId: user ? String(user.provider_id) : "password_reset",
          details: {
            ...(user && { user_id: Number(user.id) }),
            emailed: eligible,
            client_ip: clientIp ?? null,
          },
        });
      });
      if (eligible) {
        const reset = {
          to: user.email,
          name: user.name,
          providerName: provider.name,
          url: resetUrlOf(baseUrl, token),
          expiresAt,
        };
        // After the answer: the SMTP server's time must not tell a known email from an unknown one.
        setImmediate(() => void mailer(reset).catch((err: unknown) => deps.onMailError?.(err)));
      }
      return RESET_REQUESTED;
    },

    /**
     * Sets a new password with a reset link: the link stops working, every session of the user
     * ends. Each try is an attempt against the link's and the address's counters (an invite
     * link's limits: 10 a minute per link, 30 per address); a refused password leaves the link good.
     */
    async confirmPasswordReset(input: unknown, clientIp: string | undefined): Promise<PortalUser> {
      if (deps.resetMailer === undefined) throw resetUnavailable();
      const token = text(input, "token", 100);
      const password = text(input, "password", 1024);
      const digest = tokenDigest(token);
      await admit(
        [
          { key: `reset:${digest}`, limit: INVITE_ATTEMPTS.perInvitePerMinute },
          { key: `reset-ip:${clientIp ?? "unknown"}`, limit: INVITE_ATTEMPTS.perAddressPerMinute },
        ],
        "attempts with password reset links",
      );
      const row = await repo.findByReset(db, digest, now());
      if (!row) throw invalidReset();
      if (!row.provider_active) throw portalSuspended();
      await refuseWeakPassword(password, { email: row.email, name: row.name, providerName: row.provider_name });
      const passwordHash = await hashPassword(password, passwordHashing);
      const updated = await db.transaction().execute(async (trx) => {
        // Conditional on the digest still being there: two tabs using one link, one wins.
        const used = await trx
          .updateTable("portal_users")
          .set({ password_hash: passwordHash, reset_digest: null, reset_expires_at: null, updated_at: new Date() })
          .where("id", "=", row.id)
          .where("reset_digest", "=", digest)
          .returningAll()
          .executeTakeFirst();
        if (!used) throw invalidReset();
        const ended = await repo.deleteSessionsOf(trx, Number(row.id));
        await recordAudit(trx, {
          actor: `portal:${row.email}`,
          action: "portal_user.password_reset",
          targetType: "provider",
          targetId: String(row.provider_id),
          details: { user_id: Number(row.id), ended_sessions: ended, client_ip: clientIp ?? null },
        });
        return used;
      });
      return repo.userOf(updated);
    },

    /**
     * A signed-in person changes their own password, giving the current one (checked against the
     * sign-in counters); every other session of theirs ends, the one in use stays.
     */
    async changePassword(
      principal: PortalPrincipal,
      sessionToken: string | undefined,
      input: unknown,
      clientIp: string | undefined,
    ): Promise<PortalUser> {
      const f = new Fields();
      const body = (input ?? {}) as Record<string, unknown>;
      const current = f.text(body, "current_password", { max: 1024, required: true });
      const password = f.text(body, "password", { max: 1024, required: true });
      throwIfViolations(f.violations);
      const attempt = await signInAttempt(principal.email, clientIp);
      const row = await repo.findUserById(db, principal.userId);
      if (!row)
        throw new DomainError("unauthenticated", "the session has ended; sign in again", { code: "session_required" });
      if (!(await verifyPassword(row.password_hash, current as string, passwordHashing))) {
        const message = "the current password is not right";
        throw new DomainError("invalid_argument", message, {
          code: "wrong_current_password",
          violations: [{ field: "current_password", code: "wrong_current_password", message }],
        });
      }
      await attempt.giveBack();
      const provider = await findProvider(db, principal.providerId);
      await refuseWeakPassword(password as string, {
        email: row.email,
        name: row.name,
        providerName: provider?.name ?? "",
      });
      const passwordHash = await hashPassword(password as string, passwordHashing);
      const updated = await db.transaction().execute(async (trx) => {
        const u = await repo.updateUser(trx, principal.userId, {
          password_hash: passwordHash,
          reset_digest: null,
          reset_expires_at: null,
        });
        const keep = sessionToken === undefined ? undefined : tokenDigest(sessionToken);
        const ended = await repo.deleteSessionsOf(trx, principal.userId, keep);
        await recordAudit(trx, {
          actor: `portal:${principal.email}`,
          action: "portal_user.password_changed",
          targetType: "provider",
          targetId: String(principal.providerId),
          details: { user_id: principal.userId, ended_sessions: ended, client_ip: clientIp ?? null },
        });
        return u;
      });
      return repo.userOf(updated ?? row);
    },
  };
}
