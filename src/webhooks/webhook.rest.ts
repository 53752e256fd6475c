/** Webhook management over REST (admin JWT): JSON ↔ the webhook service. */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { PROVIDERS_PATH } from "../providers/provider.rest.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { actorOf as actor, operation } from "../rest/typed.ts";
import { eventBody } from "./webhook.http.ts";
import type { WebhookService } from "./webhook.service.ts";
import type { Delivery, WebhookEndpoint } from "./webhook.ts";

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function endpointJson(e: WebhookEndpoint): components["schemas"]["WebhookEndpoint"] {
  return {
    url: e.url,
    secret: e.secret,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    secret_rotated_at: iso(e.secretRotatedAt),
    previous_secret_expires_at: iso(e.previousSecretExpiresAt),
    event_types: e.eventTypes === null ? null : [...e.eventTypes],
  };
}

export function deliveryJson(d: Delivery): components["schemas"]["WebhookDelivery"] {
  return {
    id: d.id,
    event_id: d.eventId,
    type: d.type as components["schemas"]["WebhookDelivery"]["type"],
    livemode: d.livemode,
    lead_id: d.leadId,
    order_number: d.orderNumber,
    state: d.state,
    attempts: d.attempts,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    last_attempt_at: iso(d.lastAttemptAt),
    next_attempt_at: iso(d.nextAttemptAt),
    delivered_at: iso(d.deliveredAt),
    created_at: d.createdAt.toISOString(),
  };
}

/** The answer of a secret rotation (admin and portal). */
export function rotatedSecretJson(r: {
  secret: string;
  secretRotatedAt: Date;
  previousSecretExpiresAt: Date | null;
}): components["schemas"]["RotatedWebhookSecret"] {
  return {
    secret: r.secret,
    secret_rotated_at: r.secretRotatedAt.toISOString(),
    previous_secret_expires_at: iso(r.previousSecretExpiresAt),
  };
}

/** The answer of a test event (admin and portal). */
export function testResultJson(r: {
  eventId: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}): components["schemas"]["WebhookTestResult"] {
  return {
    event_id: r.eventId,
    delivered: r.error === null,
    status_code: r.statusCode,
    latency_ms: r.latencyMs,
    error: r.error,
  };
}

/** One page of deliveries with the latest test sends (admin and portal). */
export function deliveryPageJson(
  req: { readonly originalUrl: string },
  page: Awaited<ReturnType<WebhookService["listDeliveries"]>>,
  publicBaseUrl: string | undefined,
): components["schemas"]["WebhookDeliveryList"] {
  const { results, next_page_token, next } = cursorPageJson(req, page, deliveryJson, publicBaseUrl);
  return {
    results,
    test_events: page.testEvents.map((t) => ({
      event_id: t.eventId,
      status_code: t.statusCode,
      latency_ms: t.latencyMs,
      error: t.error,
      at: t.at.toISOString(),
    })),
    next_page_token,
    next,
  };
}

/** A delivery with each of its attempts (admin and portal). */
export function deliveryDetailJson(
  d: Awaited<ReturnType<WebhookService["getDelivery"]>>,
): components["schemas"]["WebhookDeliveryDetail"] {
  return {
    ...deliveryJson(d),
    // The body as sent (or as it will be): the event's `timestamp` is when it happened, so every
    // attempt sends these same bytes; only the signature headers differ.
    payload: d.event === undefined ? null : (JSON.parse(eventBody(d.event)) as Record<string, unknown>),
    attempt_log: d.attemptLog.map((a) => ({
      attempt: a.attempt,
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      error: a.error,
      at: a.at.toISOString(),
    })),
  };
}

export function webhookRoutes(webhooks: WebhookService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.get(
    `${PROVIDERS_PATH}:id/webhook/`,
    operation("getWebhook", async (req, res) => {
      res.json(endpointJson(await webhooks.get(actor(res), req.params.id)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/webhook/rotate_secret/`,
    operation("rotateWebhookSecret", async (req, res) => {
      res.json(rotatedSecretJson(await webhooks.rotateSecret(actor(res), req.params.id, req.body?.overlap_seconds)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/webhook/test/`,
    operation("sendWebhookTest", async (req, res) => {
      res.json(testResultJson(await webhooks.sendTest(actor(res), req.params.id)));
    }),
  );
  router.get(
    `${PROVIDERS_PATH}:id/webhook_deliveries/`,
    operation("listWebhookDeliveries", async (req, res) => {
      const { page_size, page_token } = req.query;
      const page = await webhooks.listDeliveries(req.params.id, { pageSize: page_size, pageToken: page_token });
      res.json(deliveryPageJson(req, page, publicBaseUrl));
    }),
  );
  router.get(
    `${PROVIDERS_PATH}:id/webhook_deliveries/:delivery_id/`,
    operation("getWebhookDelivery", async (req, res) => {
      res.json(deliveryDetailJson(await webhooks.getDelivery(req.params.id, req.params.delivery_id)));
    }),
  );
  router.post(
    `${PROVIDERS_PATH}:id/webhook_deliveries/:delivery_id/replay/`,
    operation("replayWebhookDelivery", async (req, res) => {
      res.status(202).json(deliveryJson(await webhooks.replay(actor(res), req.params.id, req.params.delivery_id)));
    }),
  );
  return { router };
}
