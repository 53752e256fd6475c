/**
 * Returns over Connect/gRPC: LeadWorkflowService.ReturnLead (the workflow files a return);
 * PublicLeadService.ContestReturn and ListReturns (a provider's key). Messages ↔ the returns
 * service, the one REST calls; a refusal's own members go into the error's ErrorInfo metadata.
 */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import {
  type LeadReturn as LeadReturnMessage,
  LeadReturnSchema,
} from "../../generated/proto/leadprovider/v1/returns_pb.ts";
import { actorOf, providerOf } from "../rpc/context.ts";
import { dateOf, optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { ErrorDetailExtension } from "../rpc/errors.ts";
import { ReturnRefusal, type ReturnsService } from "./returns.service.ts";
import type { LeadReturn } from "./returns.ts";

export function returnMessage(r: LeadReturn, view: "admin" | "provider"): LeadReturnMessage {
  return create(LeadReturnSchema, {
    id: r.id,
    lead: { id: BigInt(r.lead.id), externalId: r.lead.externalId, orderNumber: r.lead.orderNumber },
    providerId: view === "admin" ? BigInt(r.providerId) : 0n,
    livemode: r.livemode,
    state: r.state,
    reason: r.reason,
    ...(r.note !== null && { note: r.note }),
    requestedAt: ts(r.requestedAt),
    contestDeadline: ts(r.contestDeadline),
    ...(r.contest !== null && {
      contest: {
        statement: r.contest.statement,
        evidence: {
          ...(r.contest.evidence.consentCertificateUrl !== null && {
            consentCertificateUrl: r.contest.evidence.consentCertificateUrl,
          }),
          ...(r.contest.evidence.recordingUrl !== null && { recordingUrl: r.contest.evidence.recordingUrl }),
          attachments: r.contest.evidence.attachments.map((a) => ({ name: a.name, url: a.url })),
        },
        contestedAt: ts(r.contest.contestedAt),
      },
    }),
    decidedAt: tsOpt(r.decidedAt),
    ...(r.decisionNote !== null && { decisionNote: r.decisionNote }),
    amountCents: BigInt(r.amountCents),
    currency: r.currency,
  });
}

/** A refusal's closed_at, the cap's numbers … as ErrorInfo metadata (REST: members of the problem). */
export const returnErrorDetails: ErrorDetailExtension = {
  metadata: (err) =>
    err instanceof ReturnRefusal
      ? Object.fromEntries(Object.entries(err.extras).map(([k, v]) => [k, String(v)]))
      : undefined,
};

export function createReturnsWorkflowRpc(
  returns: ReturnsService,
): Pick<ServiceImpl<typeof LeadWorkflowService>, "returnLead"> {
  return {
    async returnLead(req, ctx) {
      const r = await returns.request(actorOf(ctx), req.leadId, { reason: req.reason, note: req.note });
      return { leadReturn: returnMessage(r, "admin") };
    },
  };
}

export function createReturnsPublicRpc(
  returns: ReturnsService,
): Pick<ServiceImpl<typeof PublicLeadService>, "contestReturn" | "listReturns"> {
  return {
    async contestReturn(req, ctx) {
      const owner = providerOf(ctx);
      const e = req.evidence;
      const body = {
        statement: req.statement,
        ...(e && {
          evidence: {
            ...(e.consentCertificateUrl !== undefined && { consent_certificate_url: e.consentCertificateUrl }),
            ...(e.recordingUrl !== undefined && { recording_url: e.recordingUrl }),
            attachments: e.attachments.map((a) => ({ name: a.name, url: a.url })),
          },
        }),
      };
      const r = await returns.contest(`provider:${owner.providerId}`, owner, req.externalId, body);
      return { leadReturn: returnMessage(r, "provider") };
    },
    async listReturns(req, ctx) {
      const page = await returns.listOwn(providerOf(ctx), {
        pageSize: req.pageSize || undefined,
        pageToken: req.pageToken || undefined,
        state: optionalText(req.state),
        reason: optionalText(req.reason),
        createdAfter: dateOf(req.createdAfter),
        createdBefore: dateOf(req.createdBefore),
      });
      return { returns: page.items.map((r) => returnMessage(r, "provider")), nextPageToken: page.nextPageToken };
    },
  };
}
