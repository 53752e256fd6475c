/**
 * The sandbox: moves test leads as their reserved note asks (through the workflow service, so
 * they produce the same history, change feed, events and webhooks as live moves), deletes test
 * leads past their retention, and lets an administrator purge a provider's test data at once.
 * Every instance runs the loop; moves are idempotent under the workflow's row lock, so two
 * instances moving the same lead make one move.
 */
import type { Kysely } from "kysely";
import { type BatchRun, runInBatches } from "../batches.ts";
import type { Database } from "../db/schema.ts";
import type { RawId } from "../fields.ts";
import type { LeadWorkflowService } from "../leads/lead-workflow.service.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { audit, notFound, providerId } from "../providers/provider.service.ts";
import { deleteTestLeads, dueTestLeads } from "./sandbox.repository.ts";
import { nextSandboxStep, SANDBOX_STEP_SECONDS, unfinishedPositions } from "./sandbox.ts";

export const SANDBOX_ACTOR = "sandbox";
/** Where test leads still have a move to make (the mover selects only those). */
const UNFINISHED = unfinishedPositions();
const TICK_MS = 500;
const RETENTION_EVERY_MS = 3600_000;
const DELETE_BATCH = 500;
/** A batch of deletions should take at most this long; a slower one is followed by a smaller one. */
const BATCH_BUDGET_MS = 500;
/**
 * Retention runs between the mover's steps: at most this long per tick, so a new test lead still
 * moves within seconds however much there is to delete; the rest is deleted at the next ticks.
 */
const RETENTION_RUN_MS = 1000;

export interface SandboxDeps {
  readonly db: Kysely<Database>;
  readonly workflow: LeadWorkflowService;
  readonly logger: Logger;
  /** Test leads older than this many days are deleted. */
  readonly retentionDays: number;
  readonly now?: () => Date;
  /** Each retention or purge run (metrics). */
  readonly onJobRun?: (job: "sandbox_retention" | "test_data_purge", run: BatchRun) => void;
}

export type Sandbox = ReturnType<typeof createSandbox>;

export function createSandbox(deps: SandboxDeps) {
  const { db, workflow, logger } = deps;
  const now = deps.now ?? (() => new Date());
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let lastRetention = 0;

  let retentionBehind = false;

  const deleteAll = (which: { providerId?: number; createdBefore?: Date }, runBudgetMs: number) =>
    runInBatches((limit) => deleteTestLeads(db, which, limit), {
      batch: DELETE_BATCH,
      batchBudgetMs: BATCH_BUDGET_MS,
      runBudgetMs,
    });

  /** Makes every move that is due now. */
  async function advance(): Promise<number> {
    const due = await dueTestLeads(db, UNFINISHED, SANDBOX_STEP_SECONDS * 1000, 100);
    let moved = 0;
    for (const lead of due) {
      const step = nextSandboxStep(lead.marker, lead.state, lead.leadStatus);
      if (!step) continue;
      const { changed } = await workflow.transition(SANDBOX_ACTOR, lead.id, step.to, step.leadStatus);
      if (changed) moved += 1;
    }
    return moved;
  }

  /**
   * Deletes test leads past their retention, for at most `runBudgetMs`; with more left it says so
   * (log, metric) and the next tick goes on.
   */
  async function expire(runBudgetMs = Number.POSITIVE_INFINITY): Promise<number> {
    const cutoff = new Date(now().getTime() - deps.retentionDays * 86_400_000);
    const run = await deleteAll({ createdBefore: cutoff }, runBudgetMs);
    deps.onJobRun?.("sandbox_retention", run);
    retentionBehind = run.behind;
    if (run.behind) {
      logger.warn(
        { deleted: run.done, batches: run.batches, retention_days: deps.retentionDays },
        "test lead retention fell behind; going on at the next step",
      );
    } else if (run.done > 0) {
      logger.info({ deleted: run.done, retention_days: deps.retentionDays }, "expired test leads deleted");
    }
    return run.done;
  }

  async function tick(): Promise<void> {
    try {
      await advance();
      if (retentionBehind || Date.now() - lastRetention >= RETENTION_EVERY_MS) {
        lastRetention = Date.now();
        await expire(RETENTION_RUN_MS);
      }
    } catch (err) {
      logger.warn({ err: errorForLog(err) }, "sandbox step failed; retrying");
    }
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = tick().finally(schedule);
    }, TICK_MS);
  };

  return {
    advance,
    expire,

    /** Deletes every test lead of the provider (with its events and deliveries); live data stays. */
    async purge(actor: string, rawId: RawId): Promise<{ deletedLeads: number }> {
      const id = providerId(rawId);
      if (!(await findProvider(db, id))) throw notFound(id);
      // To the end (the administrator asked for all of it), in batches that keep to their budget.
      const run = await deleteAll({ providerId: id }, Number.POSITIVE_INFINITY);
      deps.onJobRun?.("test_data_purge", run);
      const deletedLeads = run.done;
      await audit(db, actor, "test_data.purged", id, { deleted_leads: deletedLeads });
      return { deletedLeads };
    },

    start(): void {
      if (!stopped) return;
      stopped = false;
      schedule();
    },

    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
