/**
 * Typed clients of the service's own contracts, and nothing else: openapi-fetch with the types
 * generated from openapi.yaml for the Management API, and connect-web with the protobuf-es code
 * generated from proto/ for the lead workflow service. The console has no private API.
 */
import { type Client, createClient as createRpcClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import createClient from "openapi-fetch";
import type { components, paths } from "../../generated/openapi/schema.ts";
import { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { getToken } from "./session.ts";

export type Schemas = components["schemas"];
export type Problem = Schemas["Problem"];

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use({
  onRequest({ request }) {
    const token = getToken();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
});

export { data } from "../../ui/src/fetching.ts";

export const workflow: Client<typeof LeadWorkflowService> = createRpcClient(
  LeadWorkflowService,
  createConnectTransport({
    baseUrl: window.location.origin,
    interceptors: [
      (next) => async (req) => {
        const token = getToken();
        if (token) req.header.set("Authorization", `Bearer ${token}`);
        return next(req);
      },
    ],
  }),
);
