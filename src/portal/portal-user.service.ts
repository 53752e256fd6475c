/**
 * Portal users (docs/portal.md): administrators invite, re-invite and disable them; a person accepts
 * an invite by choosing a password, signs in (optionally with a TOTP code) and gets a server-side
 * session. Every change, sign-in and failed sign-in is audited under the provider; no password,
 * token or TOTP secret is ever logged, audited or returned after it is set.
 *
 * Composed of parts sharing one context (portal-user.context.ts: dependencies, clock, audit,
 * attempt counters, the password rule): invites and the administrators' side
 * (portal-invites.service.ts), the same for a provider's own portal admins (portal-team.service.ts),
 * password reset and change (portal-passwords.service.ts), sign-in and the second factor
 * (portal-sign-in.service.ts), and sessions (portal-sessions.service.ts).
 */
import { portalInvites } from "./portal-invites.service.ts";
import { portalPasswords } from "./portal-passwords.service.ts";
import { portalSessions } from "./portal-sessions.service.ts";
import { portalSignIn } from "./portal-sign-in.service.ts";
import { portalTeam } from "./portal-team.service.ts";
import { createPortalUserContext, type PortalUserServiceDeps } from "./portal-user.context.ts";

export { type Invite, inviteUrlOf } from "./portal-invites.service.ts";
export { RESET_REQUESTED, resetUrlOf } from "./portal-passwords.service.ts";
export { sessionRequired } from "./portal-sessions.service.ts";
export {
  type InviteMailer,
  type PortalUserServiceDeps,
  portalSuspended,
  type ResetMailer,
  type SignInThrottle,
} from "./portal-user.context.ts";

export type PortalUserService = ReturnType<typeof createPortalUserService>;

export function createPortalUserService(deps: PortalUserServiceDeps) {
  const ctx = createPortalUserContext(deps);
  const invites = portalInvites(ctx);
  return {
    requireSecondFactor: deps.requireSecondFactor ?? false,
    ...invites,
    ...portalTeam(invites),
    ...portalPasswords(ctx),
    ...portalSignIn(ctx),
    ...portalSessions(ctx),
  };
}
