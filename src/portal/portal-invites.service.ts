/**
 * Portal users as administrators manage them (invite, re-invite, list, disable), and the invite
 * link a person opens: read it, then accept it by choosing a password (judged off the event loop,
 * by portal-user.ts) to become active. Every read or try of a link is an attempt against the
 * link's and the address's limits; an inactive provider's people get no invite and no password.
 */
import { recordAudit } from "../audit/audit.repository.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { providerId as parseProviderId, notFound as providerNotFound } from "../providers/provider.service.ts";
import { type PortalUserContext, portalSuspended, refuseWeakPassword } from "./portal-user.context.ts";
import * as repo from "./portal-user.repository.ts";
import {
  hashPassword,
  INVITE_ATTEMPTS,
  INVITE_TTL_MS,
  newToken,
  PORTAL_ROLES,
  type PortalUser,
  tokenDigest,
} from "./portal-user.ts";

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

/** A portal admin stepping down while no other active admin of the provider is left. */
function lastPortalAdmin(): DomainError {
  return new DomainError(
    "failed_precondition",
    "you are your provider's last active administrator: make someone else an administrator before becoming a member",
    { code: "last_portal_admin" },
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

export function portalInvites(ctx: PortalUserContext) {
  const { db, deps, now, passwordHashing, audit, admit } = ctx;

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

  /** An attempt with an invite link (read or accepted), taken from the link's and the address's counters. */
  const inviteAttempt = (token: string, clientIp: string | undefined) =>
    admit(
      [
        { key: `invite:${tokenDigest(token)}`, limit: INVITE_ATTEMPTS.perInvitePerMinute },
        { key: `invite-ip:${clientIp ?? "unknown"}`, limit: INVITE_ATTEMPTS.perAddressPerMinute },
      ],
      "attempts with invite links",
    );

  return {
    /**
     * Invites a person to the provider's portal: the user, and the link that sets its password.
     * The role is the one asked for; when none is, a provider's first person (no one else invited
     * or active) is its `admin`, everyone after a `member`.
     */
    async invite(actor: string, rawProviderId: RawId, input: unknown, baseUrl: string): Promise<Invite> {
      const providerId = parseProviderId(rawProviderId);
      const body = (input ?? {}) as Record<string, unknown>;
      const f = new Fields();
      const email = f.email(body, "email");
      const name = f.text(body, "name", { max: 100, required: true, noControl: true })?.trim();
      if (name === "") f.add("name", "required", "name must not be blank");
      const asked = f.oneOf(body, "role", PORTAL_ROLES, false);
      throwIfViolations(f.violations);
      const provider = await findProvider(db, providerId);
      if (!provider) throw providerNotFound(providerId);
      if (!provider.isActive) throw providerInactive(provider);
      const { token, digest } = newToken();
      const expiresAt = new Date(now().getTime() + INVITE_TTL_MS);
      const row = await db.transaction().execute(async (trx) => {
        const role = asked ?? ((await repo.hasPeople(trx, providerId)) ? "member" : "admin");
        const inserted = await repo.insertUser(trx, {
          providerId,
          email: email as string,
          name: name as string,
          role,
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
          details: {
            user_id: Number(inserted.id),
            email: inserted.email,
            role: inserted.role,
            invite_expires_at: expiresAt,
          },
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
          reset_digest: null,
          reset_expires_at: null,
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

    /**
     * Changes a user's role (`admin` or `member`), audited as `portal_user.role_changed` (nothing
     * is written when the role is already the one asked for). `acting`: the portal user making the
     * change, when it is one of the provider's own admins; they cannot make themself a member while
     * no other active admin is left (409 `last_portal_admin`). The provider's row is locked for the
     * change, so two admins stepping down at once cannot both pass that check. The new role holds
     * from the user's next request: sessions read it each time.
     */
    async setRole(
      actor: string,
      rawProviderId: RawId,
      rawUserId: RawId,
      input: unknown,
      acting?: number,
    ): Promise<PortalUser> {
      const providerId = parseProviderId(rawProviderId);
      const userId = parseUserId(rawUserId);
      const f = new Fields();
      const role = f.oneOf((input ?? {}) as Record<string, unknown>, "role", PORTAL_ROLES, true) as PortalUser["role"];
      throwIfViolations(f.violations);
      const row = await db.transaction().execute(async (trx) => {
        if (!(await repo.lockProvider(trx, providerId))) throw providerNotFound(providerId);
        const current = await repo.findUser(trx, providerId, userId);
        if (!current) throw userNotFound(userId);
        if (current.role === role) return current;
        if (role === "member" && acting === userId && (await repo.otherActiveAdmins(trx, providerId, userId)) === 0) {
          throw lastPortalAdmin();
        }
        const updated = await repo.updateUser(trx, userId, { role });
        await audit(
          actor,
          "portal_user.role_changed",
          providerId,
          { user_id: userId, email: current.email, from: current.role, to: role },
          trx,
        );
        return updated ?? current;
      });
      return repo.userOf(row);
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
          reset_digest: null,
          reset_expires_at: null,
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
      await refuseWeakPassword(password as string, {
        email: row.email,
        name: row.name,
        providerName: row.provider_name,
      });
      const passwordHash = await hashPassword(password as string, passwordHashing);
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
  };
}

function inviteToken(input: unknown): string {
  const f = new Fields();

  const token = f.text((input ?? {}) as Record<string, unknown>, "token", { max: 100, required: true });
  throwIfViolations(f.violations);
  return token as string;
}
