/**
 * Portal users (docs/portal.md): administrators invite, re-invite and disable them; a person accepts
 * an invite by choosing a password, signs in (optionally with a TOTP code) and gets a server-side
 * session. Every change, sign-in and failed sign-in is audited under the provider; no password,
 * token or TOTP secret is ever logged, audited or returned after it is set.
 *
 * Composed of three parts sharing one context (portal-user.context.ts: dependencies, clock, audit,
 * attempt counters): invites and the administrators' side (portal-invites.service.ts), sign-in
 * and the second factor (portal-sign-in.service.ts), and sessions (portal-sessions.service.ts).
 */
import { portalInvites } from "./portal-invites.service.ts";
import { portalSessions } from "./portal-sessions.service.ts";
import { portalSignIn } from "./portal-sign-in.service.ts";
import { createPortalUserContext, type PortalUserServiceDeps } from "./portal-user.context.ts";

export { type Invite, inviteUrlOf } from "./portal-invites.service.ts";
export { sessionRequired } from "./portal-sessions.service.ts";
export {
  type InviteMailer,
  type PortalUserServiceDeps,
  portalSuspended,
  type SignInThrottle,
} from "./portal-user.context.ts";

export type PortalUserService = ReturnType<typeof createPortalUserService>;

export function createPortalUserService(deps: PortalUserServiceDeps) {
  const ctx = createPortalUserContext(deps);
  return {
    requireSecondFactor: deps.requireSecondFactor ?? false,
    ...portalInvites(ctx),
    ...portalSignIn(ctx),
    ...portalSessions(ctx),
  };
}
