/** Management API and the states list over REST: JSON ↔ the provider and state services. */
import { type Request, type Response, Router } from "express";
import type { JwtPrincipal } from "../auth/jwt.ts";
import type { StateService } from "../states/state.service.ts";
import type { ProviderService } from "./provider.service.ts";
import type { Provider } from "./provider.ts";

export const PROVIDERS_PATH = "/api/v1/lead_providers/";
export const STATES_PATH = "/api/v1/common/states/";

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function providerJson(p: Provider) {
  return {
    id: p.id,
    name: p.name,
    contact_email: p.contactEmail,
    is_active: p.isActive,
    rate_limit_per_minute: p.rateLimitPerMinute,
    rate_limit_per_day: p.rateLimitPerDay,
    webhook_url: p.webhookUrl,
    notes: p.notes,
    created_at: p.createdAt.toISOString(),
    updated_at: p.updatedAt.toISOString(),
    api_key: p.apiKey && {
      masked: p.apiKey.masked,
      created_at: p.apiKey.createdAt.toISOString(),
      expires_at: iso(p.apiKey.expiresAt),
      last_used_at: iso(p.apiKey.lastUsedAt),
      previous_key_expires_at: iso(p.apiKey.previousKeyExpiresAt),
    },
  };
}

const actor = (res: Response) => (res.locals.jwt as JwtPrincipal).subject;
const id = (req: Request) => Number(req.params.id);

/** `next`/`previous` links keep the caller's filters and change only the page. */
function pageLink(req: Request, page: number): string {
  const url = new URL(req.originalUrl, `${req.protocol}://${req.get("host") ?? "localhost"}`);
  url.searchParams.set("page", String(page));
  return url.toString();
}

export function providerRoutes(providers: ProviderService): Router {
  const router = Router();
  router.get(PROVIDERS_PATH, async (req, res) => {
    const q = req.query as Record<string, unknown>;
    const result = await providers.list({
      page: q.page as number | undefined,
      pageSize: q.page_size as number | undefined,
      search: q.search as string | undefined,
      isActive: q.is_active as boolean | undefined,
    });
    res.json({
      count: result.count,
      next: result.hasNext ? pageLink(req, result.page + 1) : null,
      previous: result.page > 1 ? pageLink(req, result.page - 1) : null,
      results: result.providers.map(providerJson),
    });
  });
  router.post(`${PROVIDERS_PATH}create/`, async (req, res) => {
    res.status(201).json(providerJson(await providers.create(actor(res), req.body)));
  });
  router.get(`${PROVIDERS_PATH}:id/`, async (req, res) => {
    const { provider, apiKey } = await providers.get(actor(res), id(req));
    res.json({ ...providerJson(provider), api_key_value: apiKey });
  });
  router.patch(`${PROVIDERS_PATH}:id/`, async (req, res) => {
    res.json(providerJson(await providers.update(actor(res), id(req), req.body)));
  });
  router.post(`${PROVIDERS_PATH}:id/generate_api_key/`, async (req, res) => {
    const body = (req.body ?? {}) as { expires_at?: string; previous_key_grace_seconds?: number };
    const key = await providers.generateKey(actor(res), id(req), {
      expiresAt: body.expires_at === undefined ? undefined : new Date(body.expires_at),
      previousKeyGraceSeconds: body.previous_key_grace_seconds,
    });
    res.status(201).json({
      api_key: key.apiKey,
      created_at: key.createdAt.toISOString(),
      expires_at: iso(key.expiresAt),
      previous_key_expires_at: iso(key.previousKeyExpiresAt),
    });
  });
  return router;
}

export function stateRoutes(states: StateService): Router {
  const router = Router();
  router.get(STATES_PATH, async (_req, res) => {
    res.json(await states.list());
  });
  return router;
}
