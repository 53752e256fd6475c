/** Intake rules over REST: administrators read and replace them; providers read them as they apply now. */
import etag from "etag";
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import { OVERSEAS_TYPES, SHIP_VIA_BY_OVERSEAS_TYPE, VEHICLE_TYPES } from "../leads/lead.ts";
import type { RestFeature } from "../rest/feature.ts";
import { actorOf as actor, operation, providerOf } from "../rest/typed.ts";
import type { CapUsage, IntakeService, PublishedRules, VersionedRules } from "./intake.service.ts";
import { parseIntakeRules, STATE_CODES } from "./intake-rules.ts";

export const PUBLIC_INTAKE_RULES_PATH = "/api/v1/public/intake_rules/";

type Json = components["schemas"];

export function intakeRulesJson(v: VersionedRules): Json["VersionedIntakeRules"] {
  return { ...(v.rules as Json["IntakeRules"]), version: v.version, updated_at: v.updatedAt?.toISOString() ?? null };
}

const capJson = (c: CapUsage | null): Json["CapUsage"] | null =>
  c && { limit: c.limit, used: c.used, remaining: c.remaining, resets_at: c.resetsAt.toISOString() };

function capUsageJson(c: PublishedRules["caps"]): Json["PublishedIntakeRules"]["cap_usage"] {
  return { day: capJson(c.day), week: capJson(c.week), month: capJson(c.month) };
}

export function publishedJson(p: PublishedRules): Json["PublishedIntakeRules"] {
  return {
    ...intakeRulesJson(p),
    livemode: p.livemode,
    open: p.open,
    opens_at: p.opensAt?.toISOString() ?? null,
    closes_at: p.closesAt?.toISOString() ?? null,
    cap_usage: capUsageJson(p.caps),
    duplicate_window_days: p.duplicateWindowDays,
    duplicate_match: p.duplicateMatch as Json["PublishedIntakeRules"]["duplicate_match"],
    business_timezone: p.zone,
    accepted: {
      vehicle_types: [...VEHICLE_TYPES],
      ship_via_by_overseas_type: Object.fromEntries(OVERSEAS_TYPES.map((t) => [t, [...SHIP_VIA_BY_OVERSEAS_TYPE[t]]])),
      states: [...STATE_CODES],
    },
    rate_limits: { per_minute: p.rateLimits.perMinute, per_day: p.rateLimits.perDay },
    rules: p.table.map((r) => ({
      code: r.code,
      field: r.field === "" ? null : r.field,
      setting: r.setting,
      applies_to: r.appliesTo,
      outcome: r.outcome,
      description: r.description,
      active: r.active,
    })),
  };
}

/** True when `header` (If-None-Match) names `tag`, weak or strong, or is `*`. */
export function matches(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, "");
  return header.split(",").some((t) => t.trim() === "*" || bare(t) === bare(tag));
}

export function intakeRoutes(intake: IntakeService): RestFeature {
  const router = Router();
  router.get(
    PUBLIC_INTAKE_RULES_PATH,
    operation("getPublishedIntakeRules", async (req, res) => {
      const body = JSON.stringify(publishedJson(await intake.published(providerOf(res))));
      const tag = etag(body, { weak: true });
      res.setHeader("ETag", tag);
      res.setHeader("Cache-Control", "private, no-cache");
      if (matches(req.get("if-none-match"), tag)) {
        res.status(304).end();
        return;
      }
      res.type("application/json").send(body as never);
    }),
  );
  router.get(
    "/api/v1/lead_providers/:id/intake_rules/",
    operation("getIntakeRules", async (req, res) => {
      const found = await intake.get(req.params.id);
      res.json({ ...intakeRulesJson(found), cap_usage: capUsageJson(found.caps) });
    }),
  );
  router.put(
    "/api/v1/lead_providers/:id/intake_rules/",
    operation("setIntakeRules", async (req, res) => {
      await intake.set(actor(res), req.params.id, req.body);
      const found = await intake.get(req.params.id);
      res.json({ ...intakeRulesJson(found), cap_usage: capUsageJson(found.caps) });
    }),
  );
  return { router, explainers: { setIntakeRules: (body) => parseIntakeRules(body).violations } };
}
