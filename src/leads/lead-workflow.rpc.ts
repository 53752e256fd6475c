/** LeadWorkflowService over Connect/gRPC (internal, JWT): thin mappings onto the workflow service. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { LeadState as LeadStateEnum } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import type {
  LeadWorkflowService,
  WatchLeadChangesResponseSchema,
} from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { DomainError } from "../errors.ts";
import { actorOf as actor } from "../rpc/context.ts";
import { enumName, enumValue, ts } from "../rpc/convert.ts";
import { leadMessage } from "./lead.rpc.ts";
import type { Lead } from "./lead.ts";
import type { LeadChange, LeadWorkflowService as Workflow } from "./lead-workflow.service.ts";

/** A watcher that falls this far behind is cut off rather than buffering without bound. */
const MAX_BACKLOG = 10_000;

const record = (lead: Lead) => ({ lead: leadMessage(lead), providerId: BigInt(lead.providerId) });

function changeMessage(c: LeadChange): MessageInitShape<typeof WatchLeadChangesResponseSchema> {
  return {
    leadId: BigInt(c.leadId),
    orderNumber: c.orderNumber,
    providerId: BigInt(c.providerId),
    externalId: c.externalId,
    livemode: c.livemode,
    change: {
      fromState: enumValue(LeadStateEnum, c.fromState),
      toState: enumValue(LeadStateEnum, c.toState),
      leadStatus: c.leadStatus,
      changedAt: ts(c.changedAt),
      actor: c.actor,
    },
  };
}

/**
 * `shutdown` ends open watch streams so a graceful stop does not wait for them. ReturnLead is
 * returns/' (returns/returns.rpc.ts), joined to these in app.ts.
 */
export function createLeadWorkflowRpc(
  workflow: Workflow,
  shutdown: AbortSignal,
): Omit<ServiceImpl<typeof LeadWorkflowService>, "returnLead"> {
  return {
    async transitionLead(req, ctx) {
      const to = enumName(LeadStateEnum, req.toState) ?? "";
      const { lead, changed } = await workflow.transition(actor(ctx), req.leadId, to, req.leadStatus);
      return { record: record(lead), changed };
    },
    async findLead(req) {
      const key = req.key;
      const test = req.includeTest;
      if (key.case === "id") return { record: record(await workflow.find({ id: key.value }, test)) };
      if (key.case === "orderNumber") return { record: record(await workflow.find({ orderNumber: key.value }, test)) };
      if (key.case === "providerExternalId") {
        const { providerId, externalId } = key.value;
        return { record: record(await workflow.find({ providerId, externalId }, test)) };
      }
      throw new DomainError("invalid_argument", "set one of id, order_number or provider_external_id", {
        code: "validation_error",
        violations: [
          { field: "key", code: "required", message: "set one of id, order_number or provider_external_id" },
        ],
      });
    },
    async listLeads(req) {
      const state = enumName(LeadStateEnum, req.state) ?? "";
      const page = await workflow.list(state, req.pageSize || undefined, req.pageToken || undefined, req.includeTest);
      return { records: page.leads.map(record), nextPageToken: page.nextPageToken };
    },
    async *watchLeadChanges(req, ctx) {
      const queue: LeadChange[] = [];
      let wake: (() => void) | undefined;
      let overflow = false;
      const unsubscribe = await workflow.watch((change) => {
        if (req.providerId !== undefined && BigInt(change.providerId) !== req.providerId) return;
        if (!change.livemode && !req.includeTest) return;
        if (queue.length >= MAX_BACKLOG) overflow = true;
        else queue.push(change);
        wake?.();
      });
      const stop = () => wake?.();
      ctx.signal.addEventListener("abort", stop);
      shutdown.addEventListener("abort", stop);
      try {
        while (!ctx.signal.aborted && !shutdown.aborted) {
          for (let c = queue.shift(); c; c = queue.shift()) yield changeMessage(c);
          if (overflow) {
            throw new DomainError("rate_limited", "the watcher fell too far behind; reconnect", {
              code: "watch_overflow",
            });
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
      } finally {
        unsubscribe();
        ctx.signal.removeEventListener("abort", stop);
        shutdown.removeEventListener("abort", stop);
      }
    },
  };
}
