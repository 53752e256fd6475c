/** PublicLeadService.ListRequests and GetRequest over Connect/gRPC. */
import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import type { RequestLogEntrySchema } from "../../generated/proto/leadprovider/v1/request_log_pb.ts";
import { providerOf } from "../rpc/context.ts";
import { dateOf, optionalText, ts } from "../rpc/convert.ts";
import type { RequestLogService } from "./request-log.service.ts";
import type { StoredRequestLogEntry } from "./request-log.ts";

export function requestEntryMessage(e: StoredRequestLogEntry): MessageInitShape<typeof RequestLogEntrySchema> {
  const body = e.requestBody;
  return {
    requestId: e.requestId,
    createdAt: ts(e.createdAt),
    operation: e.operation,
    protocol: e.protocol,
    status: e.status,
    outcome: e.outcome,
    errors: e.errors.map((v) => ({ ...v })),
    durationMs: e.durationMs,
    requestBodyTruncated: e.requestBodyTruncated,
    ...(e.requestBodyBytes !== null && { requestBodyBytes: e.requestBodyBytes }),
    ...(e.rpcCode !== null && { rpcCode: e.rpcCode }),
    ...(e.code !== null && { code: e.code }),
    ...(e.detail !== null && { detail: e.detail }),
    ...(e.externalId !== null && { externalId: e.externalId }),
    ...(e.leadId !== null && { leadId: BigInt(e.leadId) }),
    ...(e.livemode !== null && { livemode: e.livemode }),
    ...(e.clientIp !== null && { clientIp: e.clientIp }),
    ...(e.keyHint !== null && { keyHint: e.keyHint }),
    ...(e.userAgent !== null && { userAgent: e.userAgent }),
    ...(body !== null && typeof body === "object" && !Array.isArray(body) && { requestBody: body as JsonObject }),
  };
}

export function createRequestLogRpc(
  log: RequestLogService,
): Pick<ServiceImpl<typeof PublicLeadService>, "listRequests" | "getRequest"> {
  return {
    async listRequests(req, ctx) {
      const page = await log.list(providerOf(ctx), {
        pageSize: req.pageSize || undefined,
        pageToken: optionalText(req.pageToken),
        outcome: optionalText(req.outcome),
        code: optionalText(req.code),
        status: req.status || undefined,
        externalId: optionalText(req.externalId),
        createdAfter: dateOf(req.createdAfter),
        createdBefore: dateOf(req.createdBefore),
      });
      return { requests: page.items.map(requestEntryMessage), nextPageToken: page.nextPageToken };
    },
    async getRequest(req, ctx) {
      return { request: requestEntryMessage(await log.get(providerOf(ctx), req.requestId)) };
    },
  };
}
