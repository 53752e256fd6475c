/**
 * Typed clients of the service's own contracts, and nothing else: openapi-fetch with the types
 * generated from openapi.yaml for the Management API, and connect-web with the protobuf-es code
 * generated from proto/ for the lead workflow service. The console has no private API.
 */
import { type Client, createClient as createRpcClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import createClient from "openapi-fetch";
import { HttpError } from "react-admin";
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

/**
 * The data of an openapi-fetch call, or an HttpError carrying the status and the problem+json
 * body (react-admin shows `detail`, maps field errors onto the form, and signs out on 401).
 */
export async function data<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data: body, error, response } = await call;
  if (response.ok && body !== undefined && body !== null) return body as NonNullable<T>;
  const problem = (error ?? {}) as Partial<Problem>;
  const fieldErrors = Object.fromEntries((problem.errors ?? []).map((e) => [e.field, e.message]));
  throw new HttpError(problem.detail ?? `${response.status} ${response.statusText}`, response.status, {
    ...problem,
    errors: fieldErrors,
  });
}

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
