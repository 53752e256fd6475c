/** PublicLeadService over Connect/gRPC: maps messages to the lead service and back. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type Duplicate as DuplicateMessage,
  DuplicateSchema,
  type Lead as LeadMessage,
  LeadSchema,
  LeadState as LeadStateEnum,
  OverseasType as OverseasTypeEnum,
  ShipVia as ShipViaEnum,
  VehicleType as VehicleTypeEnum,
} from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import type {
  CreateLeadRequest,
  PublicLeadService,
} from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { providerOf } from "../rpc/context.ts";
import { dateOf, enumName, enumValue, optionalText, toInt, ts } from "../rpc/convert.ts";
import type { ErrorDetailExtension } from "../rpc/errors.ts";
import type { LeadService } from "./lead.service.ts";
import { type Duplicate, isBillable, type Lead } from "./lead.ts";

/** The request as the JSON-like object the lead rules read (same field names as REST). */
export function createLeadInput(req: CreateLeadRequest): Record<string, unknown> {
  return {
    external_id: optionalText(req.externalId),
    first_name: optionalText(req.firstName),
    last_name: optionalText(req.lastName),
    email: optionalText(req.email),
    phone_number: optionalText(req.phoneNumber),
    origin_zip: optionalText(req.originZip),
    estimated_ship_date: optionalText(req.estimatedShipDate),
    overseas_type: enumName(OverseasTypeEnum, req.overseasType),
    ship_via: enumName(ShipViaEnum, req.shipVia),
    vehicles: req.vehicles.map((v) => ({
      year: v.year,
      make: optionalText(v.make),
      model: optionalText(v.model),
      type: enumName(VehicleTypeEnum, v.type),
      tariff: toInt(v.tariff),
      deposit: toInt(v.deposit),
      vehicle_run: v.vehicleRun,
      vin: v.vin,
    })),
    destination_zip: req.destinationZip,
    origin_city: req.originCity,
    destination_city: req.destinationCity,
    company_name: req.companyName,
    note_from_shipper: req.noteFromShipper,
    sub_id: req.subId,
    source_url: req.sourceUrl,
    consent: req.consent && {
      trusted_form_cert_url: req.consent.trustedFormCertUrl,
      jornaya_lead_id: req.consent.jornayaLeadId,
      consent_text: req.consent.consentText,
      consented_at: req.consent.consentedAt,
      ip_address: req.consent.ipAddress,
      user_agent: req.consent.userAgent,
      page_url: req.consent.pageUrl,
    },
  };
}

/** What a refusal of the leads feature adds to its Connect/gRPC error: the duplicate it matched. */
export const leadErrorDetails: ErrorDetailExtension = {
  detail: (err) => (err.duplicate ? { duplicate: duplicateMessage(err.duplicate) } : undefined),
  metadata: (err) => (err.duplicate ? { matched_on: err.duplicate.matchedOn.join(",") } : undefined),
};

/** A duplicate as its provider sees it (the original only when its own). */
export function duplicateMessage(d: Duplicate): DuplicateMessage {
  return create(DuplicateSchema, {
    matchedOn: [...d.matchedOn],
    firstSeenAt: ts(d.firstSeenAt),
    sameProvider: d.sameProvider,
    ...(d.original && {
      original: { id: BigInt(d.original.id), orderNumber: d.original.orderNumber, externalId: d.original.externalId },
    }),
  });
}

const orUnset = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

export function leadMessage(lead: Lead): LeadMessage {
  const place = (p: Lead["origin"]) => ({ zip: p.zip, city: p.city, state: p.stateCode, stateId: p.stateId });
  return create(LeadSchema, {
    id: BigInt(lead.id),
    livemode: lead.livemode,
    orderNumber: lead.orderNumber,
    state: enumValue(LeadStateEnum, lead.state),
    leadStatus: lead.leadStatus,
    externalId: lead.externalId,
    createdAt: ts(lead.createdAt),
    updatedAt: ts(lead.updatedAt),
    stateChangedAt: ts(lead.stateChangedAt),
    firstName: lead.firstName,
    lastName: lead.lastName,
    email: lead.email,
    phoneNumber: lead.phoneNumber,
    phoneE164: lead.phoneE164 ?? "",
    ...(lead.subId !== null && { subId: lead.subId }),
    ...(lead.sourceUrl !== null && { sourceUrl: lead.sourceUrl }),
    ...(lead.consent && {
      consent: {
        trustedFormCertUrl: orUnset(lead.consent.trustedFormCertUrl),
        jornayaLeadId: orUnset(lead.consent.jornayaLeadId),
        consentText: orUnset(lead.consent.consentText),
        consentedAt: orUnset(lead.consent.consentedAt),
        ipAddress: orUnset(lead.consent.ipAddress),
        userAgent: orUnset(lead.consent.userAgent),
        pageUrl: orUnset(lead.consent.pageUrl),
        ...(lead.consent.id !== undefined && { id: lead.consent.id }),
        ...(lead.consent.textSha256 !== undefined && { textSha256: lead.consent.textSha256 }),
      },
    }),
    ...(lead.source && { source: lead.source }),
    ...(lead.duplicate && { duplicate: duplicateMessage(lead.duplicate) }),
    billable: isBillable(lead),
    ...(lead.price && {
      price: {
        amountCents: BigInt(lead.price.amountCents),
        currency: lead.price.currency,
        rule: lead.price.rule,
        termsVersion: lead.price.termsVersion,
      },
    }),
    ...(lead.return && {
      leadReturn: {
        id: lead.return.id,
        state: lead.return.state,
        reason: lead.return.reason,
        ...(lead.return.note !== null && { note: lead.return.note }),
        requestedAt: ts(lead.return.requestedAt),
        contestDeadline: ts(lead.return.contestDeadline),
        ...(lead.return.decidedAt !== null && { decidedAt: ts(lead.return.decidedAt) }),
        ...(lead.return.decisionNote !== null && { decisionNote: lead.return.decisionNote }),
      },
    }),
    ...(lead.companyName !== null && { companyName: lead.companyName }),
    ...(lead.noteFromShipper !== null && { noteFromShipper: lead.noteFromShipper }),
    estimatedShipDate: lead.estimatedShipDate,
    overseasType: enumValue(OverseasTypeEnum, lead.overseasType),
    shipVia: enumValue(ShipViaEnum, lead.shipVia),
    origin: place(lead.origin),
    ...(lead.destination && { destination: place(lead.destination) }),
    vehicles: lead.vehicles.map((v) => ({
      year: v.year,
      make: v.make,
      model: v.model,
      type: enumValue(VehicleTypeEnum, v.type),
      tariff: BigInt(v.tariff),
      deposit: BigInt(v.deposit),
      ...(v.vehicleRun !== null && { vehicleRun: v.vehicleRun }),
      ...(v.vin !== null && { vin: v.vin }),
    })),
    history: lead.history.map((h) => ({
      fromState: h.fromState === null ? LeadStateEnum.UNSPECIFIED : enumValue(LeadStateEnum, h.fromState),
      toState: enumValue(LeadStateEnum, h.toState),
      leadStatus: h.leadStatus,
      changedAt: ts(h.changedAt),
      actor: h.actor,
    })),
  });
}

/** The lead methods of PublicLeadService (its events are in events/event.rpc.ts). */
export function createPublicLeadRpc(
  leads: LeadService,
): Pick<ServiceImpl<typeof PublicLeadService>, "createLead" | "getLead" | "listLeads"> {
  return {
    async createLead(req, ctx) {
      const { lead, warnings } = await leads.create(providerOf(ctx), createLeadInput(req), { source: "grpc" });
      return { lead: leadMessage(lead), warnings: warnings.map((w) => ({ ...w })) };
    },
    async getLead(req, ctx) {
      return { lead: leadMessage(await leads.get(providerOf(ctx), req.externalId)) };
    },
    async listLeads(req, ctx) {
      const page = await leads.list(providerOf(ctx), {
        pageSize: req.pageSize || undefined,
        pageToken: req.pageToken || undefined,
        state: enumName(LeadStateEnum, req.state),
        updatedAfter: dateOf(req.updatedAfter),
      });
      return { leads: page.items.map(leadMessage), nextPageToken: page.nextPageToken };
    },
  };
}
