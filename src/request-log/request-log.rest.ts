/** The request log over REST: a provider's own (API key) and everyone's (admin JWT). */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { operation, providerOf } from "../rest/typed.ts";
import type { Tally } from "./request-log.repository.ts";
import type { RequestLogQuery, RequestLogService } from "./request-log.service.ts";
import type { StoredRequestLogEntry } from "./request-log.ts";

export const REQUESTS_PATH = "/api/v1/public/requests/";
export const ADMIN_REQUESTS_PATH = "/api/v1/admin/requests/";
export const ADMIN_TALLIES_PATH = "/api/v1/admin/request_tallies/";

function tallyJson(t: Tally): components["schemas"]["RequestTally"] {
  return {
    minute: t.minute.toISOString(),
    provider_id: t.providerId === 0 ? null : t.providerId,
    livemode: t.mode === "none" ? null : t.mode === "live",
    outcome: t.outcome as components["schemas"]["RequestTally"]["outcome"],
    code: t.code === "" ? null : t.code,
    operation: t.operation === "" ? null : t.operation,
    requests: t.requests,
  };
}

export function requestEntryJson(e: StoredRequestLogEntry): components["schemas"]["RequestLogEntry"] {
  return {
    request_id: e.requestId,
    created_at: e.createdAt.toISOString(),
    operation: e.operation,
    protocol: e.protocol as components["schemas"]["RequestLogEntry"]["protocol"],
    status: e.status,
    rpc_code: e.rpcCode,
    outcome: e.outcome,
    code: e.code,
    detail: e.detail,
    errors: e.errors.map((v) => ({ ...v })),
    external_id: e.externalId,
    lead_id: e.leadId,
    duration_ms: Math.round(e.durationMs * 100) / 100,
    livemode: e.livemode,
    client_ip: e.clientIp,
    key_hint: e.keyHint,
    user_agent: e.userAgent,
    request_body: e.requestBody as components["schemas"]["RequestLogEntry"]["request_body"],
    request_body_bytes: e.requestBodyBytes,
    request_body_truncated: e.requestBodyTruncated,
  };
}

export function adminRequestEntryJson(e: StoredRequestLogEntry): components["schemas"]["AdminRequestLogEntry"] {
  return { ...requestEntryJson(e), provider_id: e.providerId, request_body_sha256: e.requestBodySha256 };
}

const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));

/** The filters of a request log list, as the query string gives them (public, admin and portal lists). */
export function requestLogQueryOf(q: {
  page_size?: number;
  page_token?: string;
  outcome?: string;
  code?: string;
  status?: number;
  external_id?: string;
  created_after?: string;
  created_before?: string;
}): RequestLogQuery {
  return {
    pageSize: q.page_size,
    pageToken: q.page_token,
    outcome: q.outcome,
    code: q.code,
    status: q.status,
    externalId: q.external_id,
    createdAfter: date(q.created_after),
    createdBefore: date(q.created_before),
  };
}

export function requestLogRoutes(log: RequestLogService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.get(
    REQUESTS_PATH,
    operation("listRequests", async (req, res) => {
      const page = await log.list(providerOf(res), requestLogQueryOf(req.query));
      res.json(cursorPageJson(req, page, requestEntryJson, publicBaseUrl));
    }),
  );
  router.get(
    `${REQUESTS_PATH}:request_id/`,
    operation("getRequest", async (req, res) => {
      res.json(requestEntryJson(await log.get(providerOf(res), req.params.request_id)));
    }),
  );
  router.get(
    ADMIN_REQUESTS_PATH,
    operation("searchRequests", async (req, res) => {
      const q = req.query;
      const page = await log.listAll({
        ...requestLogQueryOf(q),
        providerId: q.provider_id,
        livemode: q.livemode,
        requestId: q.request_id,
        clientIp: q.client_ip,
      });
      res.json(cursorPageJson(req, page, adminRequestEntryJson, publicBaseUrl));
    }),
  );
  router.get(
    ADMIN_TALLIES_PATH,
    operation("listRequestTallies", async (req, res) => {
      const q = req.query;
      const page = await log.tallies({
        pageSize: q.page_size,
        pageToken: q.page_token,
        providerId: q.provider_id,
        createdAfter: date(q.created_after),
        createdBefore: date(q.created_before),
      });
      res.json(cursorPageJson(req, page, tallyJson, publicBaseUrl));
    }),
  );
  router.get(
    `${ADMIN_REQUESTS_PATH}:request_id/`,
    operation("getAdminRequest", async (req, res) => {
      res.json(adminRequestEntryJson(await log.getAny(req.params.request_id)));
    }),
  );
  return { router };
}
