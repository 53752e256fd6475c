/**
 * Portal users (docs/portal.md): administrators invite, re-invite and disable them; a person accepts
 * an invite by choosing a password, signs in (optionally with a TOTP code) and gets a server-side
 * session. Every change, sign-in and failed sign-in is audited under the provider; no password,
 * token or TOTP secret is ever logged, audited or returned after it is set.
 *
 * Composed of three parts sharing one set of helpers (portal-user.shared.ts): invites
 * (portal-user.invites.ts), sign-in and the second factor (portal-user.sign-in.ts) and sessions
 * (portal-user.sessions.ts).
 */
import { portalInvites } from "./portal-user.invites.ts";
import { portalSessions } from "./portal-user.sessions.ts";
import { createPortalUserShared, type PortalUserServiceDeps } from "./portal-user.shared.ts";
import { portalSignIn } from "./portal-user.sign-in.ts";

export {
  type Invite,
  type InviteMailer,
  inviteUrlOf,
  type PortalUserServiceDeps,
  portalSuspended,
  type SignInThrottle,
  sessionRequired,
} from "./portal-user.shared.ts";

export type PortalUserService = ReturnType<typeof createPortalUserService>;

export function createPortalUserService(deps: PortalUserServiceDeps) {
  const shared = createPortalUserShared(deps);
  return {
    requireSecondFactor: deps.requireSecondFactor ?? false,
    ...portalInvites(shared),
    ...portalSignIn(shared),
    ...portalSessions(shared),
  };
}
