/**
 * Webhooks: what a delivery is, its states, the signing-secret format and the retry schedule.
 * Delivery follows the Standard Webhooks specification (standardwebhooks.com).
 */
import { randomBytes } from "node:crypto";
import type { VersionedRules } from "../intake/intake-rules.ts";
import type { Lead } from "../leads/lead.ts";

export const DELIVERY_STATES = ["pending", "delivered", "failed", "disabled"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** The Standard Webhooks secret form: `whsec_` + base64 of 32 random bytes. */
export const SECRET_PREFIX = "whsec_";

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString("base64")}`;
}

/** A provider's endpoint as administrators see it. */
export interface WebhookEndpoint {
  readonly providerId: number;
  readonly url: string | null;
  /** The event types it receives; null: every type, including types added later. */
  readonly eventTypes: readonly string[] | null;
  readonly secret: string | null;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
  readonly secretRotatedAt: Date | null;
  /** While a rotation's overlap lasts, the previous secret signs too. */
  readonly previousSecretExpiresAt: Date | null;
}

/** One event's delivery to one provider's endpoint. */
export interface Delivery {
  readonly id: number;
  readonly providerId: number;
  readonly eventId: string;
  readonly type: string;
  /** False for a test lead's event. */
  readonly livemode: boolean;
  /** Null for an event about no lead (intake_rules.changed). */
  readonly leadId: number | null;
  /** The lead's order number (null without a lead). */
  readonly orderNumber: string | null;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly lastAttemptAt: Date | null;
  readonly nextAttemptAt: Date | null;
  readonly deliveredAt: Date | null;
  readonly createdAt: Date;
}

/** What one attempt to POST an event produced. */
export interface AttemptOutcome {
  /** The receiver's status code; null when no answer came (refused, timed out, unreachable). */
  readonly statusCode: number | null;
  readonly latencyMs: number;
  /** Why the attempt did not deliver; null when it did. */
  readonly error: string | null;
}

export type OutcomeKind = "delivered" | "gone" | "retry";

/** Any 2xx is delivered; 410 Gone disables the endpoint; everything else is retried. */
export function classify(outcome: AttemptOutcome): OutcomeKind {
  const code = outcome.statusCode;
  if (code !== null && code >= 200 && code < 300) return "delivered";
  if (code === 410) return "gone";
  return "retry";
}

/**
 * When the next attempt is due after `attempts` attempts, or null when the schedule is spent.
 * Each wait is jittered by ±20 % so receivers recovering from an outage are not hit in lockstep.
 */
export function nextAttemptDelayMs(
  attempts: number,
  scheduleMs: readonly number[],
  random: () => number = Math.random,
): number | null {
  const wait = scheduleMs[attempts - 1];
  if (wait === undefined) return null;
  return Math.round(wait * (0.8 + 0.4 * random()));
}

/** An event on its way to a receiver. */
export interface OutgoingEvent {
  /** `webhook-id`: the same for every attempt, so receivers can drop repeats. */
  readonly id: string;
  readonly type: string;
  readonly occurredAt: Date;
  /** The payload's top-level `livemode`: the lead's mode; false for `webhook.test` (no real lead's event). */
  readonly livemode: boolean;
  /** The lead as GET showed it when the event happened; absent for `webhook.test` and intake_rules.changed. */
  readonly lead?: Lead;
  /** intake_rules.changed: the new rules. */
  readonly intakeRules?: VersionedRules;
  /** Money's events: the data as published. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** Sends one signed event to a URL (webhook.http.ts); never throws, reports the outcome. */
export interface WebhookTransport {
  send(url: string, secrets: readonly string[], event: OutgoingEvent): Promise<AttemptOutcome>;
  close(): void;
}
