/**
 * Writes request-log entries off the request path. `record`, called once an answer has been sent,
 * masks the entry's body, turns the entry into its row (one string) and appends that to a bounded
 * in-memory queue; a timer flushes it in batches (every `flushMs`, at most a second) with one multi-row
 * insert and the day's outcome counts in the same transaction. When the queue is full the oldest
 * entries are dropped and counted (metric, and one log line a minute). A batch that cannot be
 * written (the database unreachable) goes back to the queue for the next flush (still bounded); a
 * batch the database refuses a value of is written one entry at a time, and the refused entry is
 * dropped and counted.
 *
 * The promise (docs/request-log.md, docs/decisions/0019-request-log.md): an entry is queryable within about `flushMs` of the
 * answer; a process killed with SIGKILL loses at most the entries of its last `flushMs`; a clean
 * stop flushes everything. The log never holds up or loses a lead: leads are written by the
 * request itself, before it is answered.
 */

import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import { type BatchRun, runInBatches } from "../batches.ts";
import type { Database } from "../db/schema.ts";
import { businessToday } from "../intake/business-time.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { createListing, type Listing } from "./request-log.listing.ts";
import { keptBody } from "./request-log.mask.ts";
import {
  deleteEntriesBefore,
  deleteTalliesBefore,
  entryRow,
  insertEntries,
  type OutcomeCount,
  type StoredBody,
  type Tally,
  text,
} from "./request-log.repository.ts";
import { CREATE_OPERATIONS, isRead, type RequestLogEntry, subIdOf } from "./request-log.ts";

export interface RequestLogWriterOptions {
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  /** BUSINESS_TIMEZONE: the day an outcome is counted on. */
  readonly zone: string;
  readonly now?: () => Date;
  readonly flushMs?: number;
  readonly maxQueue?: number;
  readonly batchSize?: number;
  /** REQUEST_LOG_RETENTION_DAYS. */
  readonly retentionDays: number;
  readonly onDropped?: (n: number) => void;
  /** Each retention run (metrics). */
  readonly onJobRun?: (run: BatchRun) => void;
  /** Which entries are listed one by one (default: request-log.listing.ts's budget). */
  readonly listing?: Listing;
  /** Each entry counted instead of listed (metric). */
  readonly onTallied?: () => void;
}

export type RequestLogWriter = ReturnType<typeof createRequestLogWriter>;

const PURGE_BATCH = 1000;
/** A retention run stops after this long with work left; the next run goes on. */
const PURGE_RUN_MS = 2000;
const PURGE_EVERY_MS = 10 * 60_000;

/** What a create-lead request adds to the daily outcome counts (providers known only). */
interface Counted {
  readonly providerId: number;
  readonly livemode: boolean;
  readonly createdAt: Date;
  readonly subId: string;
  /** '' for accepted. */
  readonly code: string;
}

/**
 * A recorded entry as the queue holds it until its batch is written: its row, one string with
 * the body as kept (the raw body is never stored), or the tally it adds to when it is counted
 * instead of listed (request-log.listing.ts); and what it counts for in the stats.
 */
interface Queued {
  readonly row: string | undefined;
  readonly tally: Omit<Tally, "requests"> | undefined;
  readonly requestId: string;
  readonly counted: Counted | undefined;
}

/** The size of a body that came without a Content-Length (an RPC message): its JSON form's. */
function bodyBytes(e: RequestLogEntry, body: unknown): number | null {
  if (e.requestBodyBytes !== null) return e.requestBodyBytes;
  return body === null ? null : Buffer.byteLength(JSON.stringify(body) ?? "");
}

/**
 * What is stored of a body: a provider's as the mask allows (request-log.mask.ts); for a request
 * no key named a provider for, nothing but its size and a SHA-256 of its JSON form.
 */
function storedBody(e: RequestLogEntry): StoredBody {
  const body = e.requestBody ?? null;
  if (body === null) return { body: null, truncated: false, bytes: e.requestBodyBytes, sha256: null };
  if (e.providerId === null) {
    const json = JSON.stringify(body) ?? "";
    return {
      body: null,
      truncated: false,
      bytes: e.requestBodyBytes ?? Buffer.byteLength(json),
      sha256: createHash("sha256").update(json).digest("hex"),
    };
  }
  const kept = keptBody(body);
  return { body: kept.body, truncated: kept.truncated, bytes: bodyBytes(e, body), sha256: null };
}

function queued(e: RequestLogEntry, listed: boolean): Queued {
  // A resend answered duplicate_external_id names a lead already counted: it is no new
  // submission, so the stats count it nowhere (docs/stats.md).
  const counted =
    e.providerId !== null &&
    e.livemode !== null &&
    CREATE_OPERATIONS.has(e.operation) &&
    text(e.code) !== "duplicate_external_id"
      ? {
          providerId: e.providerId,
          livemode: e.livemode,
          createdAt: e.createdAt,
          subId: subIdOf(e.requestBody),
          // The code as the row stores it (text).
          code: e.outcome === "accepted" ? "" : (text(e.code) ?? e.outcome),
        }
      : undefined;
  if (listed) return { row: entryRow(e, storedBody(e)), tally: undefined, requestId: e.requestId, counted };
  const tally = {
    minute: new Date(Math.floor(e.createdAt.getTime() / 60_000) * 60_000),
    providerId: e.providerId ?? 0,
    mode: e.livemode === null ? ("none" as const) : e.livemode ? ("live" as const) : ("test" as const),
    outcome: e.outcome,
    code: (text(e.code) ?? "").slice(0, 64),
    // Only answered reads name their operation: a route or RPC method, never a caller's path.
    operation: e.outcome === "accepted" ? (text(e.operation) ?? "").slice(0, 200) : "",
  };
  return { row: undefined, tally, requestId: e.requestId, counted };
}

/** The tallies of a batch's counted requests, sorted by key. */
function talliesOf(entries: readonly Queued[]): Tally[] {
  const tallies = new Map<string, Tally>();
  for (const { tally: t } of entries) {
    if (t === undefined) continue;
    const key = JSON.stringify([t.minute.getTime(), t.providerId, t.mode, t.outcome, t.code, t.operation]);
    const c = tallies.get(key);
    tallies.set(key, { ...t, requests: (c?.requests ?? 0) + 1 });
  }
  return [...tallies.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, t]) => t);
}

/** The daily outcome counts of a batch's create-lead requests (providers known only), sorted by key. */
function outcomeCounts(entries: readonly Queued[], zone: string): OutcomeCount[] {
  const counts = new Map<string, OutcomeCount>();
  for (const { counted: e } of entries) {
    if (e === undefined) continue;
    const day = businessToday(e.createdAt, zone);
    const { subId, code } = e;
    const key = JSON.stringify([e.providerId, e.livemode, day, subId, code]);
    const c = counts.get(key);
    counts.set(
      key,
      c
        ? { ...c, requests: c.requests + 1 }
        : { providerId: e.providerId, livemode: e.livemode, day, subId, code, requests: 1 },
    );
  }
  return [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c);
}

export function createRequestLogWriter(options: RequestLogWriterOptions) {
  const { db, logger } = options;
  const now = options.now ?? (() => new Date());
  const flushMs = Math.min(options.flushMs ?? 500, 1000);
  const maxQueue = options.maxQueue ?? 20_000;
  const batchSize = options.batchSize ?? 500;
  let queue: Queued[] = [];
  let dropped = 0;
  let droppedSinceReport = 0;
  let lastReport = 0;
  let flushing: Promise<void> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  let purgeTimer: NodeJS.Timeout | undefined;
  let firstPurge: NodeJS.Timeout | undefined;
  let purgeBehind = false;
  let stopped = false;
  const listing = options.listing ?? createListing();

  /** Counts dropped entries (metric); `overflow`: the queue was full, said in a log line a minute. */
  function drop(n: number, overflow = true): void {
    dropped += n;
    options.onDropped?.(n);
    if (!overflow) return;
    droppedSinceReport += n;
    const t = Date.now();
    if (t - lastReport >= 60_000) {
      logger.warn({ dropped: droppedSinceReport }, "request log queue full: oldest entries dropped");
      droppedSinceReport = 0;
      lastReport = t;
    }
  }

  function trim(): void {
    const over = queue.length - maxQueue;
    if (over > 0) {
      queue.splice(0, over);
      drop(over);
    }
  }

  async function flushOnce(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, batchSize);
      const rows = batch.flatMap((e) => (e.row === undefined ? [] : [e.row]));
      try {
        await insertEntries(db, rows, outcomeCounts(batch, options.zone), talliesOf(batch));
      } catch (err) {
        if (!isDataError(err)) {
          logger.warn(
            { err: errorForLog(err), entries: batch.length },
            "could not write request log entries; retrying",
          );
          queue = [...batch, ...queue];
          trim();
          return;
        }
        // The database refused a value of the batch (not the connection): one entry at a time,
        // so one entry it cannot store is dropped (and counted) instead of halting the log.
        for (const one of batch) {
          try {
            await insertEntries(
              db,
              one.row === undefined ? [] : [one.row],
              outcomeCounts([one], options.zone),
              talliesOf([one]),
            );
          } catch (err) {
            if (!isDataError(err)) throw err;
            const requestId = one.requestId;
            logger.warn({ err: errorForLog(err), request_id: requestId }, "request log entry refused; dropped");
            drop(1, false);
          }
        }
      }
    }
  }

  return {
    /**
     * Appends an entry (never waits, never throws), its body masked: called once the answer has
     * been sent (observe.ts, on `finish`), so the masking holds up no answer.
     */
    record(entry: RequestLogEntry): void {
      let q: Queued;
      try {
        const listed = listing({ ...entry, read: isRead(entry.operation) });
        if (!listed) options.onTallied?.();
        q = queued(entry, listed);
      } catch (err) {
        let requestId: unknown;
        try {
          requestId = String((entry as { requestId?: unknown } | null)?.requestId);
        } catch {
          // An id that cannot even be read: the line goes without it.
        }
        logger.warn({ err: errorForLog(err), request_id: requestId }, "request log entry unwritable; dropped");
        drop(1, false);
        return;
      }
      queue.push(q);
      if (queue.length > maxQueue) {
        queue.shift();
        drop(1);
      }
    },
    /** Writes every queued entry now (tests, shutdown). */
    flush(): Promise<void> {
      flushing ??= flushOnce().finally(() => {
        flushing = undefined;
      });
      return flushing;
    },
    /**
     * Deletes entries older than the retention, in batches of at most half a second, for at most
     * `runBudgetMs`; how many it deleted. With more left it says so (log, metric) and the next
     * run comes a second later instead of in 10 minutes.
     */
    async purgeExpired(runBudgetMs = Number.POSITIVE_INFINITY): Promise<number> {
      const before = new Date(now().getTime() - options.retentionDays * 86_400_000);
      const run = await runInBatches((limit) => deleteEntriesBefore(db, before, limit), {
        batch: PURGE_BATCH,
        batchBudgetMs: 500,
        runBudgetMs,
      });
      options.onJobRun?.(run);
      await deleteTalliesBefore(db, before);
      if (run.behind) {
        logger.warn(
          { deleted: run.done, batches: run.batches, retention_days: options.retentionDays },
          "request log retention fell behind; going on in a second",
        );
      }
      purgeBehind = run.behind;
      return run.done;
    },
    stats: () => ({ queued: queue.length, dropped }),
    start(): void {
      flushTimer = setInterval(() => void this.flush(), flushMs);
      flushTimer.unref();
      const purge = (): void =>
        void this.purgeExpired(PURGE_RUN_MS)
          .catch((err) => logger.warn({ err: errorForLog(err) }, "could not delete expired request log entries"))
          .then(() => {
            // Behind: go on in a second, between other work, rather than in 10 minutes.
            if (purgeBehind && purgeTimer !== undefined && !stopped) {
              clearTimeout(firstPurge);
              firstPurge = setTimeout(purge, 1000);
              firstPurge.unref();
            }
          });
      purgeTimer = setInterval(purge, PURGE_EVERY_MS);
      purgeTimer.unref();
      firstPurge = setTimeout(purge, 30_000);
      firstPurge.unref();
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(flushTimer);
      clearInterval(purgeTimer);
      clearTimeout(firstPurge);
      await flushing;
      await this.flush().catch((err) => logger.warn({ err: errorForLog(err) }, "could not write request log entries"));
    },
  };
}

/**
 * SQLSTATE class 22 (data exception) or 23 (integrity constraint violation): the statement's
 * values, not the database or the connection, are at fault.
 */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}
