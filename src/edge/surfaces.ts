/**
 * The one table of surfaces: which REST path prefix and which RPC services make up each part of
 * the API, who may call it, and whether it counts against a provider's rate limits. Both edges
 * read it (rest/app.ts mounts one gate per prefix; rpc/interceptors.ts looks services up here),
 * so the rule of a surface is written once.
 */
import type { ProviderPrincipal } from "../api-keys/api-key.service.ts";
import type { Authenticator } from "../auth/authenticate.ts";
import type { JwtPrincipal } from "../auth/jwt.ts";
import type { Admission } from "../rate-limit/admission.ts";
import type { Quota } from "../rate-limit/rate-limiter.ts";

/**
 * Who may call: a provider API key, a JWT with the admin position, a JWT with the lead-processing
 * claim (JWT_WORKFLOW_CLAIM / JWT_WORKFLOW_VALUE, by default the admin position), or any valid JWT.
 */
export type CallerRule = "provider_key" | "admin_jwt" | "workflow_jwt" | "any_jwt";

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

/** The verified caller of a request. */
export type Caller =
  | { readonly kind: "provider"; readonly provider: ProviderPrincipal }
  | { readonly kind: "jwt"; readonly jwt: JwtPrincipal };

/** Authentication and rate limiting by a surface's rule, the same for every edge. */
export interface Gate {
  /** The caller, or a thrown unauthenticated / permission_denied / rate_limited error. */
  authenticate(
    surface: Surface,
    authorization: string | null | undefined,
    clientIp: string | undefined,
  ): Promise<Caller>;
  /**
   * Admits the request against the surface's limits (or, for an operation with its own limit,
   * against that): the quota to report, or throws rate_limited.
   */
  limit(surface: Surface, caller: Caller, ownLimit?: boolean): Promise<Quota | undefined>;
}

export function createGate(auth: Authenticator, admission: Admission): Gate {
  return {
    async authenticate(surface, authorization, clientIp) {
      switch (surface.caller) {
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
