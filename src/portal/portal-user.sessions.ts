/** The portal user service's sessions: the principal behind a cookie, signing out, the signed-in user, and ending a provider's sessions. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import * as repo from "./portal-user.repository.ts";
import { type PortalUserShared, portalSuspended, sessionRequired } from "./portal-user.shared.ts";
import {
  type PortalPrincipal,
  type PortalUser,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  tokenDigest,
} from "./portal-user.ts";

export function portalSessions(shared: PortalUserShared) {
  const { deps, db, now, audit } = shared;
  return {
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
  };
}
