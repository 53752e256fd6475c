/**
 * The one table of surfaces: which REST path prefix and which RPC services make up each part of
 * the API, who may call it, and whether it counts against a provider's rate limits. Both edges
 * read it (rest/app.ts mounts one gate per prefix; rpc/interceptors.ts looks services up here),
 * so the rule of a surface is written once.
 */
import { DomainError } from "../errors.ts";
import type { Quota } from "../limits.ts";
import {
  type Authenticator,
  type GateAdmission,
  type JwtPrincipal,
  type PortalPrincipal,
  type ProviderPrincipal,
  secondFactorFirst,
} from "./identity.ts";

/**
 * Who may call: a provider API key, a JWT with the admin position, a JWT with the lead-processing
 * claim (JWT_WORKFLOW_CLAIM / JWT_WORKFLOW_VALUE, by default the admin position), any valid JWT,
 * or a provider portal user's session cookie (and nothing else).
 */
export type CallerRule = "provider_key" | "admin_jwt" | "workflow_jwt" | "any_jwt" | "portal_session";

export interface Surface {
  readonly name: string;
  /** REST path prefix (no trailing slash); undefined when the surface is RPC-only. */
  readonly restPrefix: string | undefined;
  /** Fully-qualified protobuf service names. */
  readonly rpcServices: readonly string[];
  readonly caller: CallerRule;
  /** Counted against the calling provider's per-minute and per-day limits. */
  readonly rateLimited: boolean;
  /**
   * Operations counted against their own small limit instead (REQUEST_LOG_READS_PER_MINUTE): REST
   * paths under the prefix and RPC method names. A provider's request log and stats stay readable
   * while it is throttled.
   */
  readonly ownLimit?: { readonly restPaths: readonly string[]; readonly rpcMethods: readonly string[] };
  /** REST paths under the prefix that need no credential (signing in, reading and accepting an invite). */
  readonly openPaths?: readonly string[];
  /**
   * REST paths under the prefix open to a portal user who must still set up a second factor
   * (PORTAL_REQUIRE_2FA): every other path refuses them, reads included, whatever its route.
   */
  readonly enrolmentPaths?: readonly string[];
  /**
   * A request that changes something (any method but GET, HEAD, OPTIONS) must carry the service's
   * own Origin: the surface's credential is a cookie, which a browser would send from any site.
   */
  readonly sameOriginWrites?: boolean;
}

export const SURFACES: readonly Surface[] = [
  {
    name: "public",
    restPrefix: "/api/v1/public",
    rpcServices: ["leadprovider.v1.PublicLeadService"],
    caller: "provider_key",
    rateLimited: true,
    ownLimit: { restPaths: ["/requests/", "/stats/"], rpcMethods: ["ListRequests", "GetRequest", "GetStats"] },
  },
  {
    name: "management",
    restPrefix: "/api/v1/lead_providers",
    rpcServices: ["leadprovider.v1.ProviderService"],
    caller: "admin_jwt",
    rateLimited: false,
  },
  {
    name: "admin",
    restPrefix: "/api/v1/admin",
    rpcServices: [],
    caller: "admin_jwt",
    rateLimited: false,
  },
  {
    name: "portal",
    restPrefix: "/api/v1/portal",
    rpcServices: [],
    caller: "portal_session",
    rateLimited: false,
    openPaths: [
      "/sign_in/",
      "/sign_out/",
      "/invite/",
      "/invite/accept/",
      "/password_reset/",
      "/password_reset/confirm/",
    ],
    enrolmentPaths: ["/me/", "/me/second_factor/", "/me/second_factor/confirm/"],
    sameOriginWrites: true,
  },
  {
    name: "common",
    restPrefix: "/api/v1/common",
    rpcServices: ["leadprovider.v1.CommonService"],
    caller: "any_jwt",
    rateLimited: false,
  },
  {
    name: "workflow",
    restPrefix: undefined,
    rpcServices: ["leadprovider.v1.LeadWorkflowService"],
    caller: "workflow_jwt",
    rateLimited: false,
  },
];

const BY_SERVICE = new Map(SURFACES.flatMap((s) => s.rpcServices.map((name) => [name, s] as const)));

/** The surface an RPC service belongs to; undefined for a service missing from the table. */
export function surfaceOfService(typeName: string): Surface | undefined {
  return BY_SERVICE.get(typeName);
}

/** Whether an operation of the surface (a REST path under its prefix, or an RPC method name) has its own limit. */
export function hasOwnLimit(surface: Surface, operation: { restPath?: string; rpcMethod?: string }): boolean {
  const own = surface.ownLimit;
  if (!own) return false;
  if (operation.rpcMethod !== undefined) return own.rpcMethods.includes(operation.rpcMethod);
  const path = (operation.restPath ?? "").toLowerCase(); // Express routes case-insensitively
  return own.restPaths.some((p) => path === p.slice(0, -1) || path.startsWith(p));
}

/** Whether a REST path under the surface's prefix needs no credential. */
export function isOpenPath(surface: Surface, restPath: string): boolean {
  const path = restPath.toLowerCase();
  return surface.openPaths?.some((p) => path === p || path === p.slice(0, -1)) ?? false;
}

/**
 * Refuses a portal user who must still set up a second factor anywhere but the surface's
 * enrolment paths: checked once for every route, before the route or its validation runs.
 */
export function refuseUnenrolled(surface: Surface, caller: Caller, restPath: string): void {
  if (caller.kind !== "portal" || !caller.portal.mustEnrolSecondFactor) return;
  const path = restPath.toLowerCase();
  if (surface.enrolmentPaths?.some((p) => path === p || path === p.slice(0, -1))) return;
  throw secondFactorFirst();
}

/** The verified caller of a request (`none`: an open path of a surface). */
export type Caller =
  | { readonly kind: "provider"; readonly provider: ProviderPrincipal }
  | { readonly kind: "jwt"; readonly jwt: JwtPrincipal }
  | { readonly kind: "portal"; readonly portal: PortalPrincipal };

/** Verifies a portal session cookie's token (portal/portal-sessions.service.ts). */
export type PortalAuthenticator = (token: string | undefined) => Promise<PortalPrincipal>;

/** Authentication and rate limiting by a surface's rule, the same for every edge. */
export interface Gate {
  /** The caller, or a thrown unauthenticated / permission_denied / rate_limited error. */
  authenticate(
    surface: Surface,
    authorization: string | null | undefined,
    clientIp: string | undefined,
    sessionToken?: string,
  ): Promise<Caller>;
  /**
   * Admits the request against the surface's limits (or, for an operation with its own limit,
   * against that): the quota to report, or throws rate_limited.
   */
  limit(surface: Surface, caller: Caller, ownLimit?: boolean): Promise<Quota | undefined>;
}

export function createGate(auth: Authenticator, admission: GateAdmission, portal?: PortalAuthenticator): Gate {
  return {
    async authenticate(surface, authorization, clientIp, sessionToken) {
      switch (surface.caller) {
        case "portal_session": {
          // People sign in; servers use the Public API. A key or token here is refused, not ignored.
          if (authorization) {
            throw new DomainError(
              "unauthenticated",
              "the provider portal takes its session cookie only, not an API key or a JWT; sign in at /portal/",
              { code: "session_required" },
            );
          }
          if (!portal) throw new Error("the portal surface has no session verifier");
          const presented = sessionToken !== undefined && sessionToken !== "";
          const principal = await admission.guardAuth(clientIp, presented, () => portal(sessionToken));
          return { kind: "portal", portal: principal };
        }
        case "provider_key":
          return { kind: "provider", provider: await auth.provider(authorization, clientIp) };
        case "admin_jwt":
          return { kind: "jwt", jwt: await auth.admin(authorization, clientIp) };
        case "workflow_jwt":
          return { kind: "jwt", jwt: await auth.workflow(authorization, clientIp) };
        case "any_jwt":
          return { kind: "jwt", jwt: await auth.internal(authorization, clientIp) };
      }
    },
    async limit(surface, caller, ownLimit = false) {
      if (!surface.rateLimited || caller.kind !== "provider") return undefined;
      if (ownLimit) return admission.reads(caller.provider.providerId, caller.provider.livemode);
      return admission.provider(caller.provider.providerId, caller.provider, caller.provider.livemode);
    },
  };
}
