/**
 * The delivery worker that runs in every instance. It claims due deliveries from the shared table
 * (webhook.repository.ts claimDue: leases taken with FOR UPDATE SKIP LOCKED), sends up to
 * `concurrency` at once, and records each outcome. It wakes when an event was committed here
 * (`eventWritten`, which also NOTIFYs the other instances, throttled to one NOTIFY per
 * NUDGE_INTERVAL_MS so that busy writers do not queue behind Postgres's notification lock), on
 * such a NOTIFY from another instance or a replay, when a delivery finishes (the next event of
 * that lead may go), and otherwise when the next retry or expired lease comes due, at least every
 * IDLE_CHECK_MS in case a notification was missed.
 */
import type { Kysely } from "kysely";
import type { KeyCrypto } from "../api-keys/api-key.ts";
import type { DatabaseHandle } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { providerView } from "../leads/lead.ts";
import type { Logger } from "../logger.ts";
import { errorForLog } from "../logger.ts";
import * as repo from "./webhook.repository.ts";
import { classify, nextAttemptDelayMs, type OutcomeKind, type WebhookTransport } from "./webhook.ts";

export const IDLE_CHECK_MS = 5000;
/** At most one wake-up NOTIFY per this interval; the first event of a quiet spell goes at once. */
export const NUDGE_INTERVAL_MS = 20;
/** After a failed claim (database unavailable), wait this long before trying again. */
const CLAIM_RETRY_MS = 1000;

export interface WorkerDeps {
  readonly database: DatabaseHandle;
  readonly transport: WebhookTransport;
  readonly crypto: KeyCrypto;
  readonly logger: Logger;
  readonly concurrency: number;
  /** Deliveries one endpoint may have in flight across every instance (WEBHOOK_CONCURRENCY_PER_ENDPOINT). */
  readonly perEndpoint: number;
  /** Of this worker's slots, at most this many send test-mode deliveries (WEBHOOK_TEST_CONCURRENCY). */
  readonly testConcurrency: number;
  readonly timeoutMs: number;
  readonly retryScheduleMs: readonly number[];
  /** BUSINESS_TIMEZONE: the day another provider's original is dated to in a lead's `duplicate`. */
  readonly zone: string;
  readonly onOutcome?: (outcome: OutcomeKind | "failed") => void;
}

export interface WebhookWorker {
  start(): Promise<void>;
  /** An event was committed in this instance: deliver it now, and tell the other instances. */
  eventWritten(): void;
  /** Stops claiming; waits up to `timeoutMs` for deliveries in flight (the rest are redelivered later). */
  stop(timeoutMs: number): Promise<void>;
}

export function createWebhookWorker(deps: WorkerDeps): WebhookWorker {
  const db: Kysely<Database> = deps.database.db;
  const { logger, transport, crypto } = deps;
  // A claim holds a delivery for one attempt plus a margin; past it, the delivery is due again.
  const leaseMs = deps.timeoutMs + 5000;
  const inFlight = new Set<Promise<void>>();
  let testInFlight = 0;
  let stopped = true;
  let pumping = false;
  /** The latest claim round, awaited on stop so no query outlives the database. */
  let pumped: Promise<void> = Promise.resolve();
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;

  const schedule = (ms: number) => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(
      () => {
        pumped = pump();
      },
      Math.max(0, ms),
    );
  };

  const wake = () => {
    if (stopped) return;
    if (pumping) again = true;
    else schedule(0);
  };

  async function pump(): Promise<void> {
    if (stopped || pumping) return;
    pumping = true;
    clearTimeout(timer);
    try {
      do {
        again = false;
        while (!stopped && inFlight.size < deps.concurrency) {
          const wanted = deps.concurrency - inFlight.size;
          const claimed = await repo.claimDue(db, {
            limit: wanted,
            testLimit: Math.max(0, deps.testConcurrency - testInFlight),
            perEndpoint: deps.perEndpoint,
            leaseMs,
          });
          for (const d of claimed) track(deliver(d), d.livemode);
          // Fewer than wanted can mean an endpoint reached its cap inside this round's window:
          // claim again (its rows are skipped now) until a round finds nothing.
          if (claimed.length === 0) break;
        }
      } while (again && !stopped);
      // With deliveries in flight, their completions wake the worker; only an idle worker needs
      // to know when the next retry (or expired lease) comes due.
      if (inFlight.size === 0) await sleepUntilDue();
    } catch (err) {
      if (stopped) return;
      logger.warn({ err: errorForLog(err) }, "webhook worker could not claim deliveries; retrying");
      schedule(CLAIM_RETRY_MS);
    } finally {
      pumping = false;
    }
    // Woken while sleeping was being arranged: look again now.
    if (again) schedule(0);
  }

  async function sleepUntilDue(): Promise<void> {
    const due = await repo.nextDueAt(db);
    const wait = due === null ? IDLE_CHECK_MS : Math.min(IDLE_CHECK_MS, due.getTime() - Date.now());
    // Due now but not claimed: another instance holds it or is claiming it; look again shortly.
    schedule(wait <= 0 ? 200 : wait);
  }

  function track(p: Promise<void>, livemode: boolean) {
    inFlight.add(p);
    if (!livemode) testInFlight += 1;
    void p.finally(() => {
      inFlight.delete(p);
      if (!livemode) testInFlight -= 1;
      // Claim again once half the slots are free (not after every completion: under load that
      // was a claim query per delivery); new events wake the worker meanwhile anyway.
      if (inFlight.size <= deps.concurrency / 2) wake();
    });
  }

  async function deliver(d: repo.ClaimedDelivery): Promise<void> {
    try {
      if (d.url === null) {
        await repo.recordAttempt(db, d.id, d.attempt, {
          state: "disabled",
          statusCode: null,
          error: "the provider has no webhook_url",
          retryInMs: null,
        });
        return;
      }
      const secrets = d.secretCiphertexts.map((c) => crypto.decrypt(c));
      const outcome = await transport.send(d.url, secrets, {
        id: d.eventId,
        type: d.type,
        occurredAt: d.eventCreatedAt,
        livemode: d.livemode,
        // The provider's endpoint: actors by role only, a duplicate as providerView words it.
        ...(d.lead && { lead: providerView(d.lead, deps.zone) }),
        ...(d.intakeRules && { intakeRules: d.intakeRules }),
        ...(d.data && { data: d.data }),
      });
      const kind = classify(outcome);
      const log = { event_id: d.eventId, delivery_id: d.id, provider_id: d.providerId, attempt: d.attempt };
      const sent = { providerId: d.providerId, eventId: d.eventId, latencyMs: outcome.latencyMs };
      if (kind === "delivered") {
        await repo.recordAttempt(db, d.id, d.attempt, {
          state: "delivered",
          ...result(outcome),
          retryInMs: null,
          sent,
        });
        logger.info({ ...log, status: outcome.statusCode, ms: outcome.latencyMs }, "webhook delivered");
        deps.onOutcome?.("delivered");
      } else if (kind === "gone") {
        const reason = `the endpoint answered 410 Gone on ${new Date().toISOString()}`;
        await db.transaction().execute(async (trx) => {
          await repo.recordAttempt(trx, d.id, d.attempt, {
            state: "disabled",
            ...result(outcome),
            retryInMs: null,
            sent,
          });
          await repo.disableEndpoint(trx, d.providerId, reason);
        });
        logger.warn({ ...log, status: 410 }, "webhook endpoint answered 410 Gone; endpoint disabled");
        deps.onOutcome?.("gone");
      } else {
        const wait = nextAttemptDelayMs(d.attempt, deps.retryScheduleMs);
        await repo.recordAttempt(db, d.id, d.attempt, {
          state: wait === null ? "failed" : "pending",
          ...result(outcome),
          retryInMs: wait,
          sent,
        });
        const level = wait === null ? "warn" : "info";
        logger[level](
          { ...log, status: outcome.statusCode, error: outcome.error, retry_in_ms: wait },
          wait === null ? "webhook delivery failed; no attempts left" : "webhook attempt failed; will retry",
        );
        deps.onOutcome?.(wait === null ? "failed" : "retry");
      }
    } catch (err) {
      // Not recorded (the database is unreachable, a secret cannot be read): the lease runs out and
      // the delivery is tried again, so nothing is lost.
      logger.warn({ err: errorForLog(err), delivery_id: d.id, event_id: d.eventId }, "webhook attempt not recorded");
    }
  }

  let throttled = false;
  let nudgeWaiting = false;
  const nudge = () => {
    if (stopped) return;
    if (throttled) {
      nudgeWaiting = true;
      return;
    }
    throttled = true;
    wake();
    repo.notifyWorkers(db).catch((err: unknown) => logger.debug({ err: errorForLog(err) }, "wake-up NOTIFY failed"));
    setTimeout(() => {
      throttled = false;
      if (nudgeWaiting) {
        nudgeWaiting = false;
        nudge();
      }
    }, NUDGE_INTERVAL_MS).unref();
  };

  return {
    eventWritten: nudge,
    async start() {
      if (deps.concurrency === 0 || !stopped) return;
      stopped = false;
      unlisten = await deps.database.listen(repo.DELIVERY_CHANNEL, wake);
      schedule(0);
    },
    async stop(timeoutMs) {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      await unlisten?.();
      const drained = Promise.allSettled([pumped, ...inFlight]);
      await Promise.race([drained, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    },
  };
}

const result = (o: { statusCode: number | null; error: string | null }) => ({
  statusCode: o.statusCode,
  error: o.error,
});
