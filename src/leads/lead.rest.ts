/** Public Lead API over REST: JSON ↔ the lead service. */
import { type Request, type Response, Router } from "express";
import type { ProviderPrincipal } from "../api-keys/api-key.service.ts";
import type { LeadService } from "./lead.service.ts";
import type { Lead, Place } from "./lead.ts";

export const LEADS_PATH = "/api/v1/public/leads/";

const placeJson = (p: Place) => ({ zip: p.zip, city: p.city, state: p.stateCode, state_id: p.stateId });

export function leadJson(lead: Lead) {
  return {
    id: lead.id,
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
    })),
    history: lead.history.map((h) => ({
      from_state: h.fromState,
      to_state: h.toState,
      lead_status: h.leadStatus,
      changed_at: h.changedAt.toISOString(),
      actor: h.actor,
    })),
  };
}

export function leadLocation(externalId: string): string {
  return `${LEADS_PATH}${encodeURIComponent(externalId)}/`;
}

const provider = (res: Response) => res.locals.provider as ProviderPrincipal;

export function leadRoutes(leads: LeadService): Router {
  const router = Router();
  router.post(LEADS_PATH, async (req: Request, res: Response) => {
    const { lead, warnings } = await leads.create(provider(res).providerId, req.body);
    res
      .status(201)
      .location(leadLocation(lead.externalId))
      .json({ ...leadJson(lead), warnings });
  });
  router.get(`${LEADS_PATH}:external_id/`, async (req: Request, res: Response) => {
    const lead = await leads.get(provider(res).providerId, String(req.params.external_id));
    res.json(leadJson(lead));
  });
  return router;
}
