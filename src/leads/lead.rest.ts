/** Public Lead API over REST: JSON ↔ the lead service. */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { noteLead, noteOf } from "../edge/request-note.ts";
import type { DomainError } from "../errors.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { operation, providerOf } from "../rest/typed.ts";
import type { CreatedLead, LeadService } from "./lead.service.ts";
import { type Consent, type Duplicate, isBillable, type Lead, type Place } from "./lead.ts";

export const LEADS_PATH = "/api/v1/public/leads/";

const placeJson = (p: Place): components["schemas"]["Location"] => ({
  zip: p.zip,
  city: p.city,
  state: p.stateCode,
  state_id: p.stateId,
});

export function consentJson(c: Consent): components["schemas"]["LeadConsent"] {
  return {
    id: c.id ?? null,
    trusted_form_cert_url: c.trustedFormCertUrl,
    jornaya_lead_id: c.jornayaLeadId,
    consent_text: c.consentText,
    text_sha256: c.textSha256 ?? null,
    consented_at: c.consentedAt,
    ip_address: c.ipAddress,
    user_agent: c.userAgent,
    page_url: c.pageUrl,
  };
}

/** A duplicate as its provider sees it (the original only when its own); `admin` adds the original's provider. */
export function duplicateJson(d: Duplicate, admin = false): components["schemas"]["Duplicate"] {
  const o = d.original;
  return {
    matched_on: [...d.matchedOn] as components["schemas"]["Duplicate"]["matched_on"],
    first_seen_at: d.firstSeenAt.toISOString(),
    same_provider: d.sameProvider,
    original:
      o === null
        ? null
        : {
            id: o.id,
            order_number: o.orderNumber,
            external_id: o.externalId,
            ...(admin && { provider_id: o.providerId }),
          },
  };
}

/** What a refusal of the leads feature adds to its problem+json body: the duplicate it matched. */
export function leadProblemExtension(err: DomainError): { duplicate: components["schemas"]["Duplicate"] } | undefined {
  return err.duplicate && { duplicate: duplicateJson(err.duplicate) };
}

type ReturnJson = components["schemas"]["LeadReturnStatus"];

export function leadJson(lead: Lead): components["schemas"]["Lead"] {
  return {
    id: lead.id,
    livemode: lead.livemode,
    order_number: lead.orderNumber,
    state: lead.state,
    lead_status: lead.leadStatus,
    external_id: lead.externalId,
    created_at: lead.createdAt.toISOString(),
    updated_at: lead.updatedAt.toISOString(),
    state_changed_at: lead.stateChangedAt.toISOString(),
    first_name: lead.firstName,
    last_name: lead.lastName,
    email: lead.email,
    phone_number: lead.phoneNumber,
    phone_e164: lead.phoneE164,
    company_name: lead.companyName,
    note_from_shipper: lead.noteFromShipper,
    estimated_ship_date: lead.estimatedShipDate,
    overseas_type: lead.overseasType,
    ship_via: lead.shipVia,
    origin: placeJson(lead.origin),
    destination: lead.destination ? placeJson(lead.destination) : null,
    vehicles: lead.vehicles.map((v) => ({
      year: v.year,
      make: v.make,
      model: v.model,
      type: v.type,
      tariff: v.tariff,
      deposit: v.deposit,
      vehicle_run: v.vehicleRun,
      vin: v.vin,
    })),
    sub_id: lead.subId,
    source_url: lead.sourceUrl,
    source: lead.source ?? null,
    consent: lead.consent && consentJson(lead.consent),
    duplicate: lead.duplicate && duplicateJson(lead.duplicate),
    billable: isBillable(lead),
    price: lead.price && {
      amount_cents: lead.price.amountCents,
      currency: lead.price.currency,
      rule: lead.price.rule,
      terms_version: lead.price.termsVersion,
    },
    return: lead.return
      ? {
          id: lead.return.id,
          state: lead.return.state as ReturnJson["state"],
          reason: lead.return.reason as ReturnJson["reason"],
          note: lead.return.note,
          requested_at: lead.return.requestedAt.toISOString(),
          contest_deadline: lead.return.contestDeadline.toISOString(),
          decided_at: lead.return.decidedAt?.toISOString() ?? null,
          decision_note: lead.return.decisionNote,
        }
      : null,
    history: lead.history.map((h) => ({
      from_state: h.fromState,
      to_state: h.toState,
      lead_status: h.leadStatus,
      changed_at: h.changedAt.toISOString(),
      actor: h.actor,
    })),
  };
}

/** The 201 body: the lead, its warnings, and how many warnings were left out (only when some were). */
export function createdLeadJson(created: CreatedLead): components["schemas"]["LeadCreated"] {
  return {
    ...leadJson(created.lead),
    warnings: [...created.warnings],
    ...(created.warningsTruncated > 0 && { warnings_truncated: created.warningsTruncated }),
  };
}

export function leadLocation(externalId: string): string {
  return `${LEADS_PATH}${encodeURIComponent(externalId)}/`;
}

export function leadRoutes(leads: LeadService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.post(
    LEADS_PATH,
    operation("createLead", async (req, res) => {
      const created = await leads.create(providerOf(res), req.body, { source: "api" });
      noteLead(req, created.lead);
      res.status(201).location(leadLocation(created.lead.externalId)).json(createdLeadJson(created));
    }),
  );
  router.get(
    `${LEADS_PATH}:external_id/`,
    operation("getLead", async (req, res) => {
      const note = noteOf(req);
      if (note) note.externalId = req.params.external_id;
      const lead = await leads.get(providerOf(res), req.params.external_id);
      noteLead(req, lead);
      res.json(leadJson(lead));
    }),
  );
  router.get(
    LEADS_PATH,
    operation("listLeads", async (req, res) => {
      const { page_size, page_token, state, updated_after } = req.query;
      const page = await leads.list(providerOf(res), {
        pageSize: page_size,
        pageToken: page_token,
        state,
        updatedAfter: updated_after === undefined ? undefined : new Date(updated_after),
      });
      res.json(cursorPageJson(req, page, leadJson, publicBaseUrl));
    }),
  );
  return {
    router,
    explainers: { createLead: (body) => leads.violations(body) },
    problemExtension: leadProblemExtension,
  };
}
