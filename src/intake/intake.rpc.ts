/** Intake rules over Connect/gRPC: ProviderService.Get/SetIntakeRules and PublicLeadService.GetIntakeRules. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type IntakeRules as IntakeRulesMessage,
  IntakeRulesSchema,
  type PublishedIntakeRules,
  PublishedIntakeRulesSchema,
} from "../../generated/proto/leadprovider/v1/intake_pb.ts";
import type { ProviderService } from "../../generated/proto/leadprovider/v1/provider_service_pb.ts";
import type { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { throwIfViolations } from "../errors.ts";
import { OVERSEAS_TYPES, SHIP_VIA_BY_OVERSEAS_TYPE, VEHICLE_TYPES } from "../leads/lead.ts";
import { actorOf, providerOf } from "../rpc/context.ts";
import { optionalText, ts, tsOpt } from "../rpc/convert.ts";
import type { CapUsage, IntakeService, PublishedRules, VersionedRules } from "./intake.service.ts";
import { STATE_CODES } from "./intake-rules.ts";

const list = (l: readonly string[] | null) => (l === null ? undefined : { values: [...l] });

export function intakeRulesMessage(v: VersionedRules): IntakeRulesMessage {
  const r = v.rules;
  return create(IntakeRulesSchema, {
    paused: r.paused,
    ...(r.paused_reason !== null && { pausedReason: r.paused_reason }),
    originStates: list(r.origin_states),
    destinationStates: list(r.destination_states),
    overseasTypes: list(r.overseas_types),
    shipVia: list(r.ship_via),
    vehicleTypes: list(r.vehicle_types),
    maxVehicles: r.max_vehicles,
    requireDestinationZip: r.require_destination_zip,
    shipDateMinDays: r.ship_date_min_days,
    shipDateMaxDays: r.ship_date_max_days,
    rejectDisposableEmail: r.reject_disposable_email,
    consentRequired: r.consent_required,
    duplicatePolicy: r.duplicate_policy,
    caps: {
      ...(r.caps.day !== null && { day: r.caps.day }),
      ...(r.caps.week !== null && { week: r.caps.week }),
      ...(r.caps.month !== null && { month: r.caps.month }),
    },
    ...(r.schedule !== null && {
      schedule: {
        days: Object.fromEntries(
          Object.entries(r.schedule).map(([day, openings]) => [day, { openings: [...(openings ?? [])] }]),
        ),
      },
    }),
    version: v.version,
    updatedAt: tsOpt(v.updatedAt),
  });
}

/** The message as the JSON-like document the rules parser reads (unset members: defaults). */
export function rulesInput(m: IntakeRulesMessage | undefined): Record<string, unknown> {
  if (!m) return {};
  const values = (l: { values: string[] } | undefined) => (l === undefined ? null : l.values);
  return {
    paused: m.paused,
    paused_reason: m.pausedReason ?? null,
    origin_states: values(m.originStates),
    destination_states: values(m.destinationStates),
    overseas_types: values(m.overseasTypes),
    ship_via: values(m.shipVia),
    vehicle_types: values(m.vehicleTypes),
    max_vehicles: m.maxVehicles ?? null,
    require_destination_zip: m.requireDestinationZip,
    ship_date_min_days: m.shipDateMinDays ?? null,
    ship_date_max_days: m.shipDateMaxDays ?? null,
    reject_disposable_email: m.rejectDisposableEmail,
    consent_required: m.consentRequired,
    duplicate_policy: optionalText(m.duplicatePolicy) ?? null,
    caps: m.caps ? { day: m.caps.day ?? null, week: m.caps.week ?? null, month: m.caps.month ?? null } : null,
    schedule: m.schedule
      ? Object.fromEntries(
          Object.entries(m.schedule.days).map(([day, d]) => [
            day,
            d.openings.map((o) => ({ open: o.open, close: o.close })),
          ]),
        )
      : null,
  };
}

const capMessage = (c: CapUsage | null) =>
  c === null ? undefined : { limit: c.limit, used: c.used, remaining: c.remaining, resetsAt: ts(c.resetsAt) };

export function publishedMessage(p: PublishedRules): PublishedIntakeRules {
  return create(PublishedIntakeRulesSchema, {
    rules: intakeRulesMessage(p),
    open: p.open,
    opensAt: tsOpt(p.opensAt),
    closesAt: tsOpt(p.closesAt),
    capDay: capMessage(p.caps.day),
    capWeek: capMessage(p.caps.week),
    capMonth: capMessage(p.caps.month),
    duplicateWindowDays: p.duplicateWindowDays,
    duplicateMatch: [...p.duplicateMatch],
    businessTimezone: p.zone,
    accepted: {
      vehicleTypes: [...VEHICLE_TYPES],
      shipViaByOverseasType: Object.fromEntries(
        OVERSEAS_TYPES.map((t) => [t, { values: [...SHIP_VIA_BY_OVERSEAS_TYPE[t]] }]),
      ),
      states: [...STATE_CODES],
    },
    rateLimitPerMinute: p.rateLimits.perMinute,
    rateLimitPerDay: p.rateLimits.perDay,
    ruleTable: p.table.map((r) => ({
      code: r.code,
      field: r.field,
      setting: r.setting ?? "",
      appliesTo: r.appliesTo,
      outcome: r.outcome,
      description: r.description,
      active: r.active,
    })),
    livemode: p.livemode,
  });
}

export function createIntakeProviderRpc(
  intake: IntakeService,
): Pick<ServiceImpl<typeof ProviderService>, "getIntakeRules" | "setIntakeRules"> {
  return {
    async getIntakeRules(req) {
      return { rules: intakeRulesMessage(await intake.get(req.id)) };
    },
    async setIntakeRules(req, ctx) {
      // Without `rules` a request would reset every rule to its default: refuse it instead.
      if (!req.rules) throwIfViolations([{ field: "rules", code: "required", message: "rules is required" }]);
      return { rules: intakeRulesMessage(await intake.set(actorOf(ctx), req.id, rulesInput(req.rules))) };
    },
  };
}

export function createIntakePublicRpc(
  intake: IntakeService,
): Pick<ServiceImpl<typeof PublicLeadService>, "getIntakeRules"> {
  return {
    async getIntakeRules(_req, ctx) {
      return { intakeRules: publishedMessage(await intake.published(providerOf(ctx))) };
    },
  };
}
