/** PublicLeadService.GetStats over Connect/gRPC. */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import type { StatsOutcomesSchema } from "../../generated/proto/leadprovider/v1/request_log_pb.ts";
import { providerOf } from "../rpc/context.ts";
import { optionalText, ts } from "../rpc/convert.ts";
import type { Outcomes, StatsService } from "./stats.service.ts";

function outcomesMessage(o: Outcomes): MessageInitShape<typeof StatsOutcomesSchema> {
  return {
    submitted: BigInt(o.submitted),
    accepted: BigInt(o.accepted),
    rejected: Object.fromEntries(Object.entries(o.rejected).map(([k, v]) => [k, BigInt(v)])),
    duplicates: BigInt(o.duplicates),
    quoted: BigInt(o.quoted),
    ordered: BigInt(o.ordered),
    ...(o.quoteRate !== null && { quoteRate: o.quoteRate }),
    ...(o.orderRate !== null && { orderRate: o.orderRate }),
    ...(o.medianHoursToQuote !== null && { medianHoursToQuote: o.medianHoursToQuote }),
    ...(o.medianHoursToOrder !== null && { medianHoursToOrder: o.medianHoursToOrder }),
    ...(o.lastLeadAt !== null && { lastLeadAt: ts(o.lastLeadAt) }),
    returned: BigInt(o.returned),
    ...(o.returnRate !== null && { returnRate: o.returnRate }),
  };
}

export function createStatsRpc(stats: StatsService): Pick<ServiceImpl<typeof PublicLeadService>, "getStats"> {
  return {
    async getStats(req, ctx) {
      const s = await stats.forProvider(providerOf(ctx), {
        from: optionalText(req.from),
        to: optionalText(req.to),
        granularity: optionalText(req.granularity),
        groupBy: optionalText(req.groupBy),
      });
      return {
        from: s.from,
        to: s.to,
        granularity: s.granularity,
        groupBy: s.groupBy ?? "",
        livemode: s.livemode,
        timezone: s.timezone,
        periods: s.rows.map((r) => ({
          period: r.period,
          ...(r.group !== null && { group: r.group }),
          outcomes: outcomesMessage(r),
        })),
        totals: outcomesMessage(s.totals),
      };
    },
  };
}
