/** PublicLeadService.ListEvents over Connect/gRPC. */
import type { JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { intakeRulesMessage } from "../intake/intake.rpc.ts";
import { leadMessage } from "../leads/lead.rpc.ts";
import { providerOf } from "../rpc/context.ts";
import { dateOf, optionalText, ts } from "../rpc/convert.ts";
import type { EventService } from "./event.service.ts";

export function createEventRpc(events: EventService): Pick<ServiceImpl<typeof PublicLeadService>, "listEvents"> {
  return {
    async listEvents(req, ctx) {
      const page = await events.list(providerOf(ctx), {
        pageSize: req.pageSize || undefined,
        pageToken: req.pageToken || undefined,
        type: optionalText(req.type),
        createdAfter: dateOf(req.createdAfter),
      });
      return {
        events: page.items.map((e) => ({
          id: e.id,
          type: e.type,
          createdAt: ts(e.createdAt),
          livemode: e.livemode,
          ...(e.lead && { lead: leadMessage(e.lead) }),
          ...(e.intakeRules && { intakeRules: intakeRulesMessage(e.intakeRules) }),
          ...(e.data && { data: e.data as JsonObject }),
        })),
        nextPageToken: page.nextPageToken,
      };
    },
  };
}
