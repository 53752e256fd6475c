/** Management API over REST: JSON ↔ the provider service. */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { RestFeature } from "../rest/feature.ts";
import { pageLink } from "../rest/links.ts";
import { actorOf as actor, operation } from "../rest/typed.ts";
import type { Sandbox } from "../sandbox/sandbox.service.ts";
import type { ProviderService } from "./provider.service.ts";
import { type ApiKeySummary, type Provider, parseProviderInput } from "./provider.ts";

export const PROVIDERS_PATH = "/api/v1/lead_providers/";

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function keyJson(k: ApiKeySummary | null): components["schemas"]["Provider"]["api_key"] {
  return (
    k && {
      masked: k.masked,
      created_at: k.createdAt.toISOString(),
      expires_at: iso(k.expiresAt),
      last_used_at: iso(k.lastUsedAt),
      previous_key_expires_at: iso(k.previousKeyExpiresAt),
    }
  );
}

export function providerJson(p: Provider): components["schemas"]["Provider"] {
  return {
    id: p.id,
    name: p.name,
    contact_email: p.contactEmail,
    is_active: p.isActive,
    rate_limit_per_minute: p.rateLimitPerMinute,
    rate_limit_per_day: p.rateLimitPerDay,
    webhook_url: p.webhookUrl,
    webhook_event_types: p.webhookEventTypes === null ? null : [...p.webhookEventTypes],
    notes: p.notes,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    api_key: keyJson(p.apiKey),
    test_api_key: keyJson(p.testApiKey),
  };
}

export function providerRoutes(providers: ProviderService, sandbox: Sandbox, publicBaseUrl?: string): RestFeature {
  const router = Router();
  const link = (req: { originalUrl: string }, page: number) => pageLink(req, { page: String(page) }, publicBaseUrl);
  router.get(
    PROVIDERS_PATH,
    operation("listProviders", async (req, res) => {
      const { page, page_size, search, is_active, id } = req.query;
      const result = await providers.list({ page, pageSize: page_size, search, isActive: is_active, ids: id });
      res.json({
        count: result.count,
        next: result.hasNext ? link(req, result.page + 1) : null,
        previous: result.page > 1 ? link(req, result.page - 1) : null,
        results: result.providers.map((p) => {
          const a = result.activity.get(p.id);
          return {
            ...providerJson(p),
            activity: {
              leads_this_week: a?.leadsThisWeek ?? 0,
              last_lead_at: a?.lastLeadAt ? a.lastLeadAt.toISOString() : null,
              webhook_enabled: a?.webhookEnabled ?? null,
              failed_deliveries: a?.failedDeliveries ?? 0,
              pending_deliveries: a?.pendingDeliveries ?? 0,
            },
          };
        }),
      });
    }),
  );
  router.post(
    `${PROVIDERS_PATH}create/`,
    operation("createProvider", async (req, res) => {
      res.status(201).json(providerJson(await providers.create(actor(res), req.body)));
    }),
  );
  router.get(
    `${PROVIDERS_PATH}:id/`,
    operation("getProvider", async (req, res) => {
      const { provider, apiKey, testApiKey } = await providers.get(actor(res), req.params.id);
      res.json({ ...providerJson(provider), api_key_value: apiKey, test_api_key_value: testApiKey });
    }),
  );
  router.get(
    `${PROVIDERS_PATH}:id/api_key/`,
    operation("revealApiKey", async (req, res) => {
      const { mode, apiKey } = await providers.revealKey(actor(res), req.params.id, req.query.mode);
      res.json({ mode, api_key: apiKey });
    }),
  );
  router.patch(
    `${PROVIDERS_PATH}:id/`,
    operation("updateProvider", async (req, res) => {
      res.json(providerJson(await providers.update(actor(res), req.params.id, req.body)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/generate_api_key/`,
    operation("generateApiKey", async (req, res) => {
      const body = req.body ?? {};
      const key = await providers.generateKey(actor(res), req.params.id, {
        mode: body.mode,
        expiresAt: body.expires_at === undefined ? undefined : new Date(body.expires_at),
        previousKeyGraceSeconds: body.previous_key_grace_seconds,
      });
      res.status(201).json({
        api_key: key.apiKey,
        mode: key.mode,
        created_at: key.createdAt.toISOString(),
        expires_at: iso(key.expiresAt),
        previous_key_expires_at: iso(key.previousKeyExpiresAt),
      });
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/revoke_api_key/`,
    operation("revokeApiKey", async (req, res) => {
      res.json(providerJson(await providers.revokeKey(actor(res), req.params.id, req.body?.mode)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/purge_test_data/`,
    operation("purgeTestData", async (req, res) => {
      const { deletedLeads } = await sandbox.purge(actor(res), req.params.id);
      res.json({ deleted_leads: deletedLeads });
    }),
  );
  return {
    router,
    explainers: {
      createProvider: (body) => parseProviderInput(body, false).violations,
      updateProvider: (body) => parseProviderInput(body, true).violations,
    },
  };
}
