/**
 * Portal sessions: started at sign-in (the cookie's token; the database keeps only its digest),
 * checked on every request (ended when over, idle, or of a provider since deactivated), ended at
 * sign-out, and all of a provider's ended when it is deactivated.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DomainError } from "../errors.ts";
import { type PortalUserContext, portalSuspended } from "./portal-user.context.ts";
import * as repo from "./portal-user.repository.ts";
import {
  newToken,
  type PortalPrincipal,
  type PortalUser,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_MS,
  tokenDigest,
} from "./portal-user.ts";

export function sessionRequired(detail = "sign in to the portal first"): DomainError {
  return new DomainError("unauthenticated", detail, { code: "session_required" });
}

/**
 * A new session for the user (its token, for the cookie), replacing the one the browser held
 * before (if any); the user's ended sessions are cleared and its last sign-in recorded.
 */
export async function startSession(ctx: PortalUserContext, userId: number, replacing: string | undefined) {
  const { db, now } = ctx;
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

export function portalSessions(ctx: PortalUserContext) {
  const { db, deps, now, audit } = ctx;

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
        role: s.role,
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
