/**
 * A provider's own team, managed by its portal admins (role `admin`): the same list, invite,
 * re-invite and disable as the broker's administrators have (portal-invites.service.ts), always on
 * the admin's own provider (from the session, never the request), audited as `portal:<email>`,
 * and changing a person's role.
 * A member is refused (403 `portal_admin_required`); another provider's user id is 404, exactly
 * like an id that does not exist.
 */
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import type { Invite, portalInvites } from "./portal-invites.service.ts";
import { type PortalPrincipal, type PortalUser, secondFactorFirst } from "./portal-user.ts";

function adminRequired(): DomainError {
  return new DomainError("permission_denied", "only your provider's portal administrators can manage its team", {
    code: "portal_admin_required",
  });
}

function notYourself(what: string): DomainError {
  return new DomainError(
    "failed_precondition",
    `you cannot ${what} your own account here; another administrator of your provider can`,
    { code: "own_portal_account" },
  );
}

const actorOf = (p: PortalPrincipal) => `portal:${p.email}`;

/** The principal, when it is an admin free to act (a second factor set up where one is required). */
export function asAdmin(p: PortalPrincipal): PortalPrincipal {
  if (p.role !== "admin") throw adminRequired();
  if (p.mustEnrolSecondFactor) throw secondFactorFirst();
  return p;
}

function userIdOf(raw: RawId): number {
  const f = new Fields();
  const id = f.id({ user_id: raw }, "user_id");
  throwIfViolations(f.violations);
  return id ?? 0;
}

export function portalTeam(invites: ReturnType<typeof portalInvites>) {
  return {
    /** The people of the admin's provider. */
    listTeam: (p: PortalPrincipal): Promise<PortalUser[]> => invites.list(asAdmin(p).providerId),

    /** Invites a person into the admin's provider (role `member` unless `admin` is asked for). */
    inviteTeammate: (p: PortalPrincipal, input: unknown, baseUrl: string): Promise<Invite> => {
      const body = (input ?? {}) as Record<string, unknown>;
      // A provider's admin invites members unless it says otherwise (never the first-person default).
      return invites.invite(actorOf(asAdmin(p)), p.providerId, { ...body, role: body.role ?? "member" }, baseUrl);
    },

    /** A fresh invite for one of the admin's provider's people (a disabled one comes back this way). */
    reinviteTeammate(p: PortalPrincipal, rawUserId: RawId, baseUrl: string): Promise<Invite> {
      const userId = userIdOf(rawUserId);
      if (userId === asAdmin(p).userId) throw notYourself("re-invite");
      return invites.reinvite(actorOf(p), p.providerId, userId, baseUrl);
    },

    /**
     * Makes one of the admin's provider's people (the admin included) an `admin` or a `member`; the
     * last active admin cannot make themself a member (409 `last_portal_admin`).
     */
    setTeammateRole(p: PortalPrincipal, rawUserId: RawId, input: unknown): Promise<PortalUser> {
      const actor = actorOf(asAdmin(p));
      return invites.setRole(actor, p.providerId, userIdOf(rawUserId), input, p.userId);
    },

    /** Disables one of the admin's provider's people: its sessions end at once. */
    disableTeammate(p: PortalPrincipal, rawUserId: RawId): Promise<PortalUser> {
      const userId = userIdOf(rawUserId);
      if (userId === asAdmin(p).userId) throw notYourself("disable");
      return invites.disable(actorOf(p), p.providerId, userId);
    },
  };
}
