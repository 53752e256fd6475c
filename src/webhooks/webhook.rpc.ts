/** Webhook management on ProviderService over Connect/gRPC: thin mappings onto the webhook service. */
import type { ServiceImpl } from "@connectrpc/connect";
import type {
  ProviderService as ProviderServiceDesc,
  WebhookDelivery as WebhookDeliveryMessage,
} from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { actorOf as actor } from "../rpc/context.ts";
import { optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { WebhookService } from "./webhook.service.ts";
import type { Delivery } from "./webhook.ts";

type WebhookMethods =
  | "getWebhook"
  | "rotateWebhookSecret"
  | "sendWebhookTest"
  | "listWebhookDeliveries"
  | "replayWebhookDelivery";

const some = <T>(v: T | null) => (v === null ? undefined : v);

function deliveryMessage(d: Delivery): Omit<WebhookDeliveryMessage, "$typeName"> {
  return {
    id: BigInt(d.id),
    eventId: d.eventId,
    type: d.type,
    leadId: BigInt(d.leadId ?? 0),
    state: d.state,
    attempts: d.attempts,
    lastStatusCode: some(d.lastStatusCode),
    lastError: some(d.lastError),
    lastAttemptAt: tsOpt(d.lastAttemptAt),
    nextAttemptAt: tsOpt(d.nextAttemptAt),
    deliveredAt: tsOpt(d.deliveredAt),
    createdAt: ts(d.createdAt),
  };
}

export function createWebhookRpc(
  webhooks: WebhookService,
): Pick<ServiceImpl<typeof ProviderServiceDesc>, WebhookMethods> {
  return {
    async getWebhook(req, ctx) {
      const e = await webhooks.get(actor(ctx), req.id);
      return {
        endpoint: {
          url: some(e.url),
          secret: some(e.secret),
          enabled: e.enabled,
          disabledReason: some(e.disabledReason),
          secretRotatedAt: tsOpt(e.secretRotatedAt),
          previousSecretExpiresAt: tsOpt(e.previousSecretExpiresAt),
        },
      };
    },
    async rotateWebhookSecret(req, ctx) {
      const r = await webhooks.rotateSecret(actor(ctx), req.id, req.overlapSeconds);
      return {
        secret: r.secret,
        secretRotatedAt: ts(r.secretRotatedAt),
        previousSecretExpiresAt: tsOpt(r.previousSecretExpiresAt),
      };
    },
    async sendWebhookTest(req, ctx) {
      const r = await webhooks.sendTest(actor(ctx), req.id);
      return {
        eventId: r.eventId,
        delivered: r.error === null,
        statusCode: some(r.statusCode),
        latencyMs: r.latencyMs,
        error: some(r.error),
      };
    },
    async listWebhookDeliveries(req) {
      const page = await webhooks.listDeliveries(req.id, {
        pageSize: req.pageSize || undefined,
        pageToken: optionalText(req.pageToken),
      });
      return { deliveries: page.items.map(deliveryMessage), nextPageToken: page.nextPageToken };
    },
    async replayWebhookDelivery(req, ctx) {
      return { delivery: deliveryMessage(await webhooks.replay(actor(ctx), req.id, req.deliveryId)) };
    },
  };
}
