/**
 * The Connect router: every service with one interceptor that authenticates by service
 * (provider key for the Public API, admin JWT for management, any JWT for internal services)
 * and renders every error through the one DomainError table.
 */
import type { ConnectRouter, Interceptor, ServiceImpl } from "@connectrpc/connect";
import { CommonService } from "../../generated/proto/leadprovider/v1/common_service_pb.ts";
import { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import type { Authenticator } from "../auth/authenticate.ts";
import { DomainError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { errorForLog } from "../logger.ts";
import type { AdmitProvider } from "../rate-limit/admission.ts";
import { clientIpKey, jwtKey, providerKey } from "./context.ts";
import { toConnectError } from "./errors.ts";

export interface RpcDeps {
  readonly auth: Authenticator;
  readonly logger: Logger;
  readonly publicLeads: ServiceImpl<typeof PublicLeadService>;
  readonly providers: ServiceImpl<typeof ProviderService>;
  readonly common: ServiceImpl<typeof CommonService>;
  readonly workflow: ServiceImpl<typeof LeadWorkflowService>;
  /**
   * Admits a provider's Public API call against its rate limits; returns headers to send
   * (RateLimit, RateLimit-Policy) or throws a rate_limited DomainError.
   */
  readonly admitProvider: AdmitProvider;
}

export function createRpcRoutes(deps: RpcDeps): (router: ConnectRouter) => void {
  const authenticate: Interceptor = (next) => async (req) => {
    let limitHeaders: Record<string, string> = {};
    try {
      const authorization = req.header.get("authorization");
      const ip = req.contextValues.get(clientIpKey);
      switch (req.service.typeName) {
        case PublicLeadService.typeName: {
          const principal = await deps.auth.provider(authorization, ip);
          limitHeaders = await deps.admitProvider(principal.providerId, principal);
          req.contextValues.set(providerKey, principal);
          break;
        }
        case ProviderService.typeName:
          req.contextValues.set(jwtKey, await deps.auth.admin(authorization, ip));
          break;
        default:
          req.contextValues.set(jwtKey, await deps.auth.internal(authorization, ip));
      }
      const res = await next(req);
      for (const [k, v] of Object.entries(limitHeaders)) res.header.set(k, v);
      return res;
    } catch (err) {
      const connectError = toConnectError(err);
      for (const [k, v] of Object.entries(limitHeaders))
        if (!connectError.metadata.has(k)) connectError.metadata.set(k, v);
      if (!(err instanceof DomainError) && connectError.code !== 14 /* Unavailable */) {
        deps.logger.error({ err: errorForLog(err), rpc: req.method.name }, "rpc failed");
      }
      throw connectError;
    }
  };
  return (router) => {
    const options = { interceptors: [authenticate] };
    router.service(PublicLeadService, deps.publicLeads, options);
    router.service(ProviderService, deps.providers, options);
    router.service(CommonService, deps.common, options);
    router.service(LeadWorkflowService, deps.workflow, options);
  };
}
