/** A provider's own lead events over REST. */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { intakeRulesJson } from "../intake/intake.rest.ts";
import type { VersionedRules } from "../intake/intake-rules.ts";
import { leadJson } from "../leads/lead.rest.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { operation, providerOf } from "../rest/typed.ts";
import type { EventService } from "./event.service.ts";
import type { LeadEvent } from "./event.ts";

export const EVENTS_PATH = "/api/v1/public/events/";

export function eventJson(e: LeadEvent): components["schemas"]["LeadEvent"] {
  return {
    id: e.id,
    type: e.type,
    created_at: e.createdAt.toISOString(),
    livemode: e.livemode,
    data: e.lead
      ? { lead: leadJson(e.lead) }
      : e.intakeRules
        ? { intake_rules: intakeRulesJson(e.intakeRules as VersionedRules) }
        : { ...e.data },
  } as components["schemas"]["LeadEvent"];
}

export function eventRoutes(events: EventService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  router.get(
    EVENTS_PATH,
    operation("listEvents", async (req, res) => {
      const { page_size, page_token, type, created_after } = req.query;
      const page = await events.list(providerOf(res), {
        pageSize: page_size,
        pageToken: page_token,
        type,
        createdAfter: created_after === undefined ? undefined : new Date(created_after),
      });
      res.json(cursorPageJson(req, page, eventJson, publicBaseUrl));
    }),
  );
  return { router };
}
