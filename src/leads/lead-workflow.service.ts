/**
 * Lead processing for internal systems: forward, adjacent moves (LEAD→QUOTE→ORDER) under a row
 * lock, each recorded in the history in the same transaction and announced on the change feed
 * (Postgres NOTIFY, delivered on commit; PGlite supports the same within its process).
 */
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { DatabaseHandle } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { insertLeadEvent } from "../events/event.repository.ts";
import { type EventType, eventTypeOfChange, newEventId } from "../events/event.ts";
import { Fields, type RawId } from "../fields.ts";
import { pageOf, readPageRequest } from "../paging.ts";
import { applyTransition, findLead, type LeadKey, lockLeadState } from "./lead.repository.ts";
import { checkTransition, LEAD_STATES, type Lead, type LeadState, nextState, type StateChange } from "./lead.ts";
import { listLeadsInState } from "./lead-lists.repository.ts";

export const CHANGE_CHANNEL = "lead_state_changes";
export const LIST_PAGE = { defaultSize: 50, maxSize: 500 } as const;

/** A move of one lead, as the change feed announces it. */
export interface LeadChange extends StateChange {
  readonly leadId: number;
  readonly livemode: boolean;
  readonly orderNumber: string;
  readonly providerId: number;
  readonly externalId: string;
  readonly fromState: LeadState;
}

export type LeadWorkflowService = ReturnType<typeof createLeadWorkflowService>;

/** A lead key as a caller sends it (ids not yet checked). */
export type RawLeadKey =
  | { readonly id: RawId }
  | { readonly orderNumber: string }
  | { readonly providerId: RawId; readonly externalId: string };

function leadKey(raw: RawLeadKey): LeadKey {
  const f = new Fields();
  let key: LeadKey;
  if ("id" in raw) key = { id: f.id({ id: raw.id }, "id") ?? 0 };
  else if ("orderNumber" in raw) {
    key = {
      orderNumber:
        f.text({ order_number: raw.orderNumber }, "order_number", { max: 64, required: true, noControl: true }) ?? "",
    };
  } else {
    const providerId = f.id({ "provider_external_id.provider_id": raw.providerId }, "provider_external_id.provider_id");
    const externalId = f.text(
      { "provider_external_id.external_id": raw.externalId },
      "provider_external_id.external_id",
      {
        max: 128,
        required: true,
        noControl: true,
      },
    );
    key = { providerId: providerId ?? 0, externalId: externalId ?? "" };
  }
  throwIfViolations(f.violations);
  return key;
}

function notFound(key: LeadKey): DomainError {
  const what =
    "id" in key
      ? `id ${key.id}`
      : "orderNumber" in key
        ? `order number ${key.orderNumber}`
        : `external_id ${key.externalId} of provider ${key.providerId}`;
  return new DomainError("not_found", `no lead with ${what}`, { code: "lead_not_found" });
}

export interface WorkflowDeps {
  readonly database: DatabaseHandle;
  /** Called after a change's event was committed (metrics, webhook wake-up). */
  readonly onEvent?: (type: EventType, livemode: boolean) => void;
}

export function createLeadWorkflowService(deps: WorkflowDeps) {
  const db: Kysely<Database> = deps.database.db;
  const listeners = new Set<(change: LeadChange) => void>();
  let unlisten: Promise<() => Promise<void>> | undefined;

  const startFeed = () => {
    unlisten ??= deps.database.listen(CHANGE_CHANNEL, (payload) => {
      const raw = JSON.parse(payload) as Omit<LeadChange, "changedAt"> & { changedAt: string };
      const change = { ...raw, changedAt: new Date(raw.changedAt) };
      for (const listener of listeners) listener(change);
    });
    return unlisten;
  };

  return {
    /**
     * Moves a lead to `to`. When it already is there, only a different `leadStatus` changes
     * anything (a status-only change); otherwise returns `changed: false` (a safe retry).
     * Throws FAILED_PRECONDITION, naming the current state, for any other move.
     */
    async transition(
      actor: string,
      rawLeadId: RawId,
      to: string,
      leadStatus?: string,
    ): Promise<{ lead: Lead; changed: boolean }> {
      const f = new Fields();
      const leadId = f.id({ lead_id: rawLeadId }, "lead_id") ?? 0;
      const target = f.oneOf({ to_state: to }, "to_state", LEAD_STATES, true);
      const status = f.text({ lead_status: leadStatus }, "lead_status", { max: 50, noControl: true });
      throwIfViolations(f.violations);
      const toState = target as LeadState;
      const moved = await db.transaction().execute(async (trx) => {
        const current = await lockLeadState(trx, leadId);
        if (!current) throw notFound({ id: leadId });
        const from = current.state as LeadState;
        const check = checkTransition(from, toState);
        // The current state again: a safe retry changes nothing, unless it brings a different
        // lead_status, which is then the only change (announced as lead.status_changed).
        if (check.kind === "noop" && (status === undefined || status === current.lead_status)) return undefined;
        if (check.kind === "refuse") {
          const next = nextState(from);
          const allowed = next ? `it can move only to ${next}` : "it cannot move any further";
          throw new DomainError("failed_precondition", `lead ${leadId} is in state ${from}; ${allowed}`, {
            code: "invalid_transition",
            currentState: from,
          });
        }
        const finalStatus = status ?? toState;
        await applyTransition(trx, {
          leadId,
          from,
          to: toState,
          leadStatus: finalStatus,
          actor,
          channel: CHANGE_CHANNEL,
          payload: (changedAt) =>
            JSON.stringify({
              leadId,
              livemode: current.livemode,
              orderNumber: current.order_number,
              providerId: current.provider_id,
              externalId: current.external_id,
              fromState: from,
              toState,
              leadStatus: finalStatus,
              changedAt: changedAt.toISOString(),
              actor,
            } satisfies Omit<LeadChange, "changedAt"> & { changedAt: string }),
        });
        // The event carries the lead as it is after the change, written in the same transaction.
        const lead = await findLead(trx, { id: leadId });
        if (!lead) throw notFound({ id: leadId });
        const type = eventTypeOfChange(from, toState);
        await insertLeadEvent(trx, { eventId: newEventId(), type, lead });
        // Who moved it, in the audit trail too (the back office shows moves beside management actions).
        await recordAudit(trx, {
          actor,
          action: "lead.moved",
          targetType: "lead",
          targetId: String(leadId),
          details: { provider_id: current.provider_id, from_state: from, to_state: toState, lead_status: finalStatus },
        });
        return { lead, type };
      });
      if (moved) deps.onEvent?.(moved.type, moved.lead.livemode);
      const lead = moved?.lead ?? (await findLead(db, { id: leadId }));
      if (!lead) throw notFound({ id: leadId });
      return { lead, changed: moved !== undefined };
    },

    /** One lead by any of its keys; a test lead only with `includeTest`. */
    async find(raw: RawLeadKey, includeTest = false): Promise<Lead> {
      const key = leadKey(raw);
      const lead = await findLead(db, "providerId" in key && !includeTest ? { ...key, livemode: true } : key);
      if (!lead || (!lead.livemode && !includeTest)) throw notFound(key);
      return lead;
    },

    /** Leads in `state`, oldest first; `pageToken` is the opaque cursor of the previous page. */
    async list(state: string, pageSize: number | undefined, pageToken: string | undefined, includeTest = false) {
      const f = new Fields();
      const s = f.oneOf({ state }, "state", LEAD_STATES, true);
      const page = readPageRequest(f, { pageSize, pageToken }, LIST_PAGE);
      throwIfViolations(f.violations);
      const rows = await listLeadsInState(db, s as LeadState, page.afterId ?? 0, page.size + 1, includeTest);
      const { items, nextPageToken } = pageOf(rows, page.size, (l) => l.id);
      return { leads: items, nextPageToken };
    },

    /** Calls `listener` for every state change from now on; returns the unsubscribe function. */
    async watch(listener: (change: LeadChange) => void): Promise<() => void> {
      await startFeed();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close(): Promise<void> {
      listeners.clear();
      if (unlisten) await (await unlisten)();
      unlisten = undefined;
    },
  };
}
