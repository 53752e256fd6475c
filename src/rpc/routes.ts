/**
 * The Connect router: every service behind the same three interceptors (errors, auth, limits).
 * Who may call what is in edge/surfaces.ts.
 */
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { CommonService } from "../../generated/proto/leadprovider/v1/common_service_pb.ts";
import { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import type { Gate } from "../edge/surfaces.ts";
import type { Logger } from "../logger.ts";
import type { ErrorDetailExtension } from "./errors.ts";
import {
  assertSurfaces,
  authInterceptor,
  errorsInterceptor,
  limitsInterceptor,
  requestLogInterceptor,
} from "./interceptors.ts";

export interface RpcDeps {
  readonly gate: Gate;
  readonly logger: Logger;
  readonly publicLeads: ServiceImpl<typeof PublicLeadService>;
  readonly providers: ServiceImpl<typeof ProviderService>;
  readonly common: ServiceImpl<typeof CommonService>;
  readonly workflow: ServiceImpl<typeof LeadWorkflowService>;
  /** What features add to the error answers of their own DomainErrors (rpc/errors.ts). */
  readonly errorDetails?: readonly ErrorDetailExtension[];
}

export function createRpcRoutes(deps: RpcDeps): (router: ConnectRouter) => void {
  const services = [PublicLeadService, ProviderService, CommonService, LeadWorkflowService];
  assertSurfaces(services.map((s) => s.typeName));
  const options = {
    interceptors: [
      errorsInterceptor(deps.logger, deps.errorDetails),
      requestLogInterceptor(),
      authInterceptor(deps.gate),
      limitsInterceptor(deps.gate),
    ],
  };
  return (router) => {
    router.service(PublicLeadService, deps.publicLeads, options);
    router.service(ProviderService, deps.providers, options);
    router.service(CommonService, deps.common, options);
    router.service(LeadWorkflowService, deps.workflow, options);
  };
}
