/**
 * Webhook management for administrators: the endpoint and its secret (an audited view, like API
 * keys), secret rotation with an overlap, a test event sent at once, the delivery list and
 * replays. Sending itself: webhook.worker.ts.
 */
import type { Kysely } from "kysely";
import type { KeyCrypto } from "../api-keys/api-key.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import { Fields, type RawId } from "../fields.ts";
import { providerView } from "../leads/lead.ts";
import { type Page, pageOf, readPageRequest } from "../paging.ts";
import { audit, MAX_GRACE_SECONDS, notFound, providerId } from "../providers/provider.service.ts";
import * as repo from "./webhook.repository.ts";
import {
  type AttemptOutcome,
  type Delivery,
  generateSecret,
  type OutgoingEvent,
  type WebhookEndpoint,
  type WebhookTransport,
} from "./webhook.ts";

export const DELIVERY_PAGE = { defaultSize: 20, maxSize: 100 } as const;
export const TEST_EVENT_TYPE = "webhook.test";
/** How many of the latest webhook.test sends the first page of deliveries carries. */
export const TEST_EVENTS_SHOWN = 10;

const deliveryNotFound = (_id: number, deliveryId: number) =>
  new DomainError("not_found", `no delivery ${deliveryId} (of this provider)`, { code: "delivery_not_found" });

export interface WebhookServiceDeps {
  readonly db: Kysely<Database>;
  readonly crypto: KeyCrypto;
  readonly transport: WebhookTransport;
  readonly now?: () => Date;
  /** The business time zone (BUSINESS_TIMEZONE): a delivery's payload is the provider's view, as sent. */
  readonly zone?: string;
}

export type WebhookService = ReturnType<typeof createWebhookService>;

function noUrl(_id: number): DomainError {
  return new DomainError("failed_precondition", "no webhook URL is set to send to; set webhook_url first", {
    code: "webhook_not_configured",
  });
}

export function createWebhookService(deps: WebhookServiceDeps) {
  const { db, crypto, transport } = deps;
  const now = deps.now ?? (() => new Date());

  const endpointOf = async (id: number): Promise<repo.EndpointRow> => {
    const row = await repo.findEndpoint(db, id);
    if (!row) throw notFound(id);
    return row;
  };

  /** The secrets that sign right now: the current one, and the previous one during an overlap. */
  const signingSecrets = (row: repo.EndpointRow): string[] => {
    const secrets = row.secretCiphertext === null ? [] : [crypto.decrypt(row.secretCiphertext)];
    const overlapping = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now();
    if (overlapping && row.previousSecretCiphertext !== null)
      secrets.push(crypto.decrypt(row.previousSecretCiphertext));
    return secrets;
  };

  return {
    /** The endpoint with its secret in plain text: audited, like viewing an API key. */
    async get(actor: string, rawId: RawId): Promise<WebhookEndpoint> {
      const id = providerId(rawId);
      const row = await endpointOf(id);
      const secret = row.secretCiphertext === null ? null : crypto.decrypt(row.secretCiphertext);
      if (secret !== null) await audit(db, actor, "webhook_secret.viewed", id);
      const overlapEnds = row.previousSecretExpiresAt;
      return {
        providerId: id,
        url: row.url,
        eventTypes: row.eventTypes,
        secret,
        enabled: row.enabled,
        disabledReason: row.disabledReason,
        secretRotatedAt: row.secretRotatedAt,
        previousSecretExpiresAt: overlapEnds !== null && overlapEnds > now() ? overlapEnds : null,
      };
    },

    /**
     * A new secret; the old one stops signing at once, or after `overlapSeconds` during which
     * every delivery carries both signatures. Creates the first secret if there is none.
     */
    async rotateSecret(actor: string, rawId: RawId, overlapSeconds: number | undefined) {
      const id = providerId(rawId);
      const f = new Fields();
      const overlap = f.integer({ overlap_seconds: overlapSeconds ?? 0 }, "overlap_seconds", 0, MAX_GRACE_SECONDS) ?? 0;
      throwIfViolations(f.violations);
      const secret = generateSecret();
      const ciphertext = crypto.encrypt(secret);
      const previousExpiresAt = overlap > 0 ? new Date(now().getTime() + overlap * 1000) : null;
      const rotatedAt = await db.transaction().execute(async (trx) => {
        if (!(await repo.findEndpoint(trx, id))) throw notFound(id);
        if (await repo.ensureEndpoint(trx, id, ciphertext)) {
          await audit(trx, actor, "webhook_secret.created", id);
          return (await repo.findEndpoint(trx, id))?.secretRotatedAt ?? now();
        }
        const at = await repo.rotateSecret(trx, id, ciphertext, previousExpiresAt);
        await audit(trx, actor, "webhook_secret.rotated", id, { overlap_seconds: overlap });
        return at;
      });
      return { secret, secretRotatedAt: rotatedAt, previousSecretExpiresAt: previousExpiresAt };
    },

    /** Sends a `webhook.test` event now (even to a disabled endpoint) and reports the attempt. */
    async sendTest(actor: string, rawId: RawId): Promise<AttemptOutcome & { eventId: string }> {
      const id = providerId(rawId);
      const row = await endpointOf(id);
      if (row.url === null) throw noUrl(id);
      const eventId = newEventId();
      const outcome = await transport.send(row.url, signingSecrets(row), {
        id: eventId,
        type: TEST_EVENT_TYPE,
        occurredAt: now(),
        livemode: false,
      });
      await repo.insertAttempt(db, {
        providerId: id,
        deliveryId: null,
        eventId,
        attempt: 1,
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        error: outcome.error,
      });
      await audit(db, actor, "webhook.tested", id, { event_id: eventId, status_code: outcome.statusCode });
      return { ...outcome, eventId };
    },

    /** The provider's deliveries, newest first, one cursor page at a time. */
    async listDeliveries(
      rawId: RawId,
      q: { pageSize?: number | undefined; pageToken?: string | undefined },
    ): Promise<Page<Delivery> & { testEvents: repo.TestSend[] }> {
      const f = new Fields();
      const id = f.id({ id: rawId }, "id") ?? 0;
      const page = readPageRequest(f, q, DELIVERY_PAGE);
      throwIfViolations(f.violations);
      await endpointOf(id);
      const [deliveries, testEvents] = await Promise.all([
        repo.listDeliveries(db, id, page.afterId, page.size + 1),
        // The webhook.test sends go with the first page (they are few, and not paged).
        page.afterId === undefined ? repo.listTestSends(db, id, TEST_EVENTS_SHOWN) : Promise.resolve([]),
      ]);
      return { ...pageOf(deliveries, page.size, (d) => d.id), testEvents };
    },

    /** One delivery with each of its attempts. */
    async getDelivery(
      rawId: RawId,
      rawDeliveryId: RawId,
    ): Promise<Delivery & { attemptLog: repo.AttemptLogEntry[]; event: OutgoingEvent | undefined }> {
      const f = new Fields();
      const id = f.id({ id: rawId }, "id") ?? 0;
      const deliveryId = f.id({ delivery_id: rawDeliveryId }, "delivery_id") ?? 0;
      throwIfViolations(f.violations);
      await endpointOf(id);
      const found = await repo.findDelivery(db, id, deliveryId);
      if (!found) throw deliveryNotFound(id, deliveryId);
      const [attemptLog, event] = await Promise.all([
        repo.listAttempts(db, deliveryId),
        repo.findDeliveryEvent(db, deliveryId),
      ]);
      // As the worker sends it: actors by role only, a duplicate as the provider sees it.
      const sent = event?.lead === undefined ? event : { ...event, lead: providerView(event.lead, deps.zone ?? "UTC") };
      return { ...found, attemptLog, event: sent };
    },

    /** Queues a delivered, failed or disabled delivery again (attempts start over); a pending one is tried now. */
    async replay(actor: string, rawId: RawId, rawDeliveryId: RawId): Promise<Delivery> {
      const f = new Fields();
      const id = f.id({ id: rawId }, "id") ?? 0;
      const deliveryId = f.id({ delivery_id: rawDeliveryId }, "delivery_id") ?? 0;
      throwIfViolations(f.violations);
      return db.transaction().execute(async (trx) => {
        const row = await repo.findEndpoint(trx, id);
        if (!row) throw notFound(id);
        const found = await repo.findDelivery(trx, id, deliveryId);
        if (!found) throw deliveryNotFound(id, deliveryId);
        if (row.url === null) throw noUrl(id);
        if (!row.enabled) {
          throw new DomainError(
            "failed_precondition",
            `provider ${id}'s endpoint is disabled (${row.disabledReason ?? "by an administrator"}); PATCH webhook_url to enable it again`,
            { code: "webhook_disabled" },
          );
        }
        if (found.state !== "pending") {
          await repo.requeue(trx, deliveryId);
          await audit(trx, actor, "webhook_delivery.replayed", id, {
            delivery_id: deliveryId,
            event_id: found.eventId,
          });
        } else {
          // Pending, waiting for its next attempt: "retry now".
          await repo.retryNow(trx, deliveryId);
          await repo.notifyWorkers(trx);
          await audit(trx, actor, "webhook_delivery.retried", id, { delivery_id: deliveryId, event_id: found.eventId });
        }
        return (await repo.findDelivery(trx, id, deliveryId)) ?? found;
      });
    },
  };
}
