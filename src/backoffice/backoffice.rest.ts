/** The back office's reads over REST (admin JWT): leads across providers, the audit trail, usage. */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { duplicateJson, leadJson } from "../leads/lead.rest.ts";
import { PROVIDERS_PATH } from "../providers/provider.rest.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { operation } from "../rest/typed.ts";
import type { Backoffice, WindowUsage } from "./backoffice.service.ts";

export const ADMIN_PATH = "/api/v1/admin/";

const windowJson = (w: WindowUsage): components["schemas"]["WindowUsage"] => ({
  used: w.used,
  limit: w.limit,
  remaining: w.used === null ? null : Math.max(0, w.limit - w.used),
  reset_seconds: w.resetSeconds,
});

export function backofficeRoutes(backoffice: Backoffice, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.get(
    `${ADMIN_PATH}leads/`,
    operation("searchLeads", async (req, res) => {
      const q = req.query;
      const page = await backoffice.leads({
        pageSize: q.page_size,
        pageToken: q.page_token,
        providerId: q.provider_id,
        state: q.state,
        createdAfter: q.created_after === undefined ? undefined : new Date(q.created_after),
        createdBefore: q.created_before === undefined ? undefined : new Date(q.created_before),
        q: q.q,
        includeTest: q.include_test,
        duplicate: q.duplicate,
      });
      res.json(
        cursorPageJson(
          req,
          page,
          (l) => ({
            ...leadJson(l),
            duplicate: l.duplicate && duplicateJson(l.duplicate, true),
            provider_id: l.providerId,
          }),
          publicBaseUrl,
        ),
      );
    }),
  );
  router.get(
    `${ADMIN_PATH}audit_log/`,
    operation("listAuditLog", async (req, res) => {
      const q = req.query;
      const page = await backoffice.audit({
        pageSize: q.page_size,
        pageToken: q.page_token,
        providerId: q.provider_id,
        actor: q.actor,
      });
      res.json(
        cursorPageJson(
          req,
          page,
          (a) => ({
            id: a.id,
            at: a.at.toISOString(),
            actor: a.actor,
            action: a.action,
            target_type: a.targetType,
            target_id: a.targetId,
            target_name: a.targetName ?? null,
            details: a.details ?? {},
          }),
          publicBaseUrl,
        ),
      );
    }),
  );
  router.get(
    `${PROVIDERS_PATH}:id/usage/`,
    operation("getProviderUsage", async (req, res) => {
      const u = await backoffice.usage(req.params.id);
      res.json({
        live: { minute: windowJson(u.live.minute), day: windowJson(u.live.day) },
        test: { minute: windowJson(u.test.minute), day: windowJson(u.test.day) },
      });
    }),
  );
  return { router };
}
