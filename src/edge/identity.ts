/**
 * Who a request comes from, as both edges' gate (edge/surfaces.ts) knows it: the verified
 * callers (a provider's API key, a JWT, a portal user's session), the authenticator and the
 * admission the gate calls. The features implement them (api-keys/, auth/, portal/, rate-limit/)
 * and app.ts wires them in, so the edges import no feature.
 */
import type { JWTPayload } from "jose";
import { DomainError } from "../errors.ts";
import type { Limits, Quota } from "../limits.ts";

/** The provider behind an API key (api-keys/api-key.service.ts verifies it). */
export interface ProviderPrincipal {
  readonly providerId: number;
  /** False for a test key (`lp_test_`): the caller works in the sandbox. */
  readonly livemode: boolean;
  readonly keyId: number;
  readonly perMinute: number;
  readonly perDay: number;
}

/** The holder of a verified JWT (auth/jwt.ts). */
export interface JwtPrincipal {
  /** The token's `sub`: who acts (recorded in audit and history). */
  readonly subject: string;
  readonly isAdmin: boolean;
  /** Holds the configured lead-processing claim (JWT_WORKFLOW_CLAIM / JWT_WORKFLOW_VALUE). */
  readonly canProcessLeads: boolean;
  readonly claims: JWTPayload;
}

/** The signed-in person behind a portal request (portal/portal-sessions.service.ts). */
export interface PortalPrincipal {
  readonly userId: number;
  readonly providerId: number;
  readonly email: string;
  /** `admin` may also manage its own provider's people (portal/portal-team.service.ts). */
  readonly role: "admin" | "member";
  /** PORTAL_REQUIRE_2FA is on and this user has no second factor yet: only enrolment is open. */
  readonly mustEnrolSecondFactor: boolean;
}

/** PORTAL_REQUIRE_2FA is on and the user has no second factor: only enrolment (and me/, sign-out) answers. */
export function secondFactorFirst(): DomainError {
  return new DomainError("permission_denied", "set up a second factor (TOTP) first: this portal requires one", {
    code: "second_factor_required",
  });
}

type Header = string | null | undefined;

/** Reads `Authorization: Bearer …` (auth/authenticate.ts); `clientIp` lets repeated failures from one address be refused. */
export interface Authenticator {
  /** A provider API key (Public API). */
  provider(authorization: Header, clientIp?: string): Promise<ProviderPrincipal>;
  /** Any valid JWT (states, workflow). */
  internal(authorization: Header, clientIp?: string): Promise<JwtPrincipal>;
  /** A JWT holding the admin position (Management API); 403 for other valid tokens. */
  admin(authorization: Header, clientIp?: string): Promise<JwtPrincipal>;
  /** A JWT holding the lead-processing claim (workflow service); 403 for other valid tokens. */
  workflow(authorization: Header, clientIp?: string): Promise<JwtPrincipal>;
}

/** The rate-limit rules the gate applies (rate-limit/admission.ts implements them). */
export interface GateAdmission {
  /**
   * Admits one Public API request of the provider; returns its quota, or throws rate_limited.
   * Test-mode requests are counted in their own bucket (same limits), never against live quota.
   */
  provider(providerId: number, limits: Limits, livemode?: boolean): Quota | Promise<Quota>;
  /**
   * Runs an authentication attempt. A success is never refused. A failed attempt with a
   * `presented` credential counts against `clientIp`, and once the address has failed too often
   * this minute it is answered 429 instead of 401; a request with no credential at all (a
   * preflight, a health probe) costs nothing.
   */
  guardAuth<T>(clientIp: string | undefined, presented: boolean, attempt: () => Promise<T>): Promise<T>;
  /**
   * Admits one read of the provider's request log or stats: counted in its own bucket (per mode)
   * against `readsPerMinute`, never against the provider's API limits, so a throttled provider
   * can still see why.
   */
  reads(providerId: number, livemode: boolean): Quota | Promise<Quota>;
}
