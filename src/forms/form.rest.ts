/**
 * The drop-in form over REST (docs/forms.md): its gate for `/api/v1/forms/…` (publishable key,
 * Origin, CORS; mounted before the body parser and the OpenAPI validator so that every answer to
 * an allowed origin, refusals included, is readable by the page), the form's own routes, and the
 * settings, keys and consent records for administrators and the portal.
 */
import express, { type Request, type RequestHandler, type Response, Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { ClientAddress } from "../edge/client-address.ts";
import { noteCaller, noteLead } from "../edge/request-note.ts";
import { DomainError } from "../errors.ts";
import { providerId as parseId } from "../providers/provider.service.ts";
import type { RestFeature } from "../rest/feature.ts";
import { actorOf, operation, portalOf } from "../rest/typed.ts";
import type { FormCaller, FormService, FormSettingsView } from "./form.service.ts";
import { FORM_BODY_LIMIT } from "./form.service.ts";
import { FORM_VERSION, type FormMode } from "./form.ts";

type Json = components["schemas"];

export const FORMS_PREFIX = "/api/v1/forms";
/** The form script's path (rest/form-script.ts serves it). */
export const FORM_SCRIPT_PATH = `/forms/${FORM_VERSION}/quote-form.js`;

const callers = new WeakMap<Request, FormCaller>();

function formCallerOf(req: Request): FormCaller {
  const c = callers.get(req);
  if (!c) throw new Error("form route reached without its gate");
  return c;
}

/** The CORS headers of an answer to an allowed origin. */
function allowOrigin(res: Response, origin: string): void {
  res.setHeader("Access-Control-Allow-Origin", origin);
  res.setHeader("Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
}

function keyFrom(req: Request): string | undefined {
  const header = req.get("x-publishable-key");
  if (header !== undefined) return header.trim();
  const q = req.query.publishable_key;
  if (typeof q === "string") return q;
  const b = (req.body as { publishable_key?: unknown } | undefined)?.publishable_key;
  return typeof b === "string" ? b : undefined;
}

/**
 * The gate of `/api/v1/forms/…`: a preflight is answered (204 with CORS headers) only for an
 * origin the key allows — or, when the preflight cannot name a key, an origin some provider
 * allows; every other request must carry a publishable key that allows its Origin. The body (at
 * most 32 KiB) is read after the key and origin are checked when the key is in the header.
 */
export function formGate(forms: FormService, clientAddress: ClientAddress): Router {
  const router = Router();
  const json = express.json({ limit: FORM_BODY_LIMIT, type: ["application/json", "text/plain"] });
  const readBody: RequestHandler = (req, res, next) => json(req, res, next);

  const verify: RequestHandler = async (req, res, next) => {
    try {
      res.vary("Origin");
      const caller = await forms.caller(keyFrom(req), req.get("origin"), clientAddress(req));
      allowOrigin(res, caller.origin);
      callers.set(req, caller);
      noteCaller(req, { kind: "provider", provider: caller.principal });
      next();
    } catch (err) {
      next(err);
    }
  };

  router.options(/.*/, async (req, res, next) => {
    try {
      res.vary("Origin");
      const origin = req.get("origin");
      const key = typeof req.query.publishable_key === "string" ? req.query.publishable_key : undefined;
      const ok =
        origin !== undefined &&
        (key !== undefined
          ? await forms.caller(key, origin, clientAddress(req)).then(
              () => true,
              () => false,
            )
          : await forms.anyAllows(origin));
      if (!ok || origin === undefined) {
        throw new DomainError("permission_denied", "this origin may not use the form's API", {
          code: "origin_not_allowed",
        });
      }
      allowOrigin(res, origin);
      res.setHeader("Access-Control-Allow-Methods", "GET, POST");
      res.setHeader("Access-Control-Allow-Headers", "Content-Type, X-Publishable-Key");
      res.setHeader("Access-Control-Max-Age", "600");
      res.status(204).end();
    } catch (err) {
      next(err);
    }
  });
  router.use((req, res, next) => {
    // The key in the header (or the query): checked before the body is read.
    if (req.get("x-publishable-key") !== undefined || typeof req.query.publishable_key === "string") {
      verify(req, res, (err?: unknown) => (err ? next(err) : readBody(req, res, next)));
      return;
    }
    // Only in the body: read it first.
    readBody(req, res, (err?: unknown) => (err ? next(err) : verify(req, res, next)));
  });
  const mounted = Router();
  mounted.use(FORMS_PREFIX, router);
  return mounted;
}

/** Where the form script lives for a snippet: PUBLIC_BASE_URL, else the origin the request came to. */
function baseUrlOf(req: Request, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
}

/** The snippet a provider pastes, exactly as the portal shows it. */
export function snippetOf(baseUrl: string, key: string): string {
  return `<script src="${baseUrl}${FORM_SCRIPT_PATH}" defer></script>\n<lead-quote-form publishable-key="${key}"></lead-quote-form>`;
}

function settingsJson(v: FormSettingsView, baseUrl: string): Json["FormSettings"] {
  const key = (mode: FormMode) => {
    const k = v.keys[mode];
    return k === null ? null : { publishable_key: k.key, mode, created_at: k.createdAt.toISOString() };
  };
  return {
    allowed_origins: [...v.allowedOrigins],
    consent_text: v.consentText,
    consent_text_is_default: v.consentTextIsDefault,
    enabled: v.enabled,
    updated_at: v.updatedAt?.toISOString() ?? null,
    publishable_keys: { live: key("live"), test: key("test") },
    script_url: `${baseUrl}${FORM_SCRIPT_PATH}`,
    form_version: FORM_VERSION,
    snippets: {
      live: v.keys.live ? snippetOf(baseUrl, v.keys.live.key) : null,
      test: v.keys.test ? snippetOf(baseUrl, v.keys.test.key) : null,
    },
  };
}

type ConsentFound = Awaited<ReturnType<FormService["consent"]>>;

function consentRecordJson(found: ConsentFound): Json["ConsentRecord"] {
  const c = found.consent;
  return {
    id: c.id ?? "",
    lead_id: found.leadId,
    order_number: found.orderNumber,
    external_id: found.externalId,
    livemode: found.livemode,
    text: c.consentText ?? "",
    text_sha256: c.textSha256 ?? "",
    accepted: c.accepted ?? false,
    accepted_at: c.consentedAt ?? "",
    browser_time: c.browserTime ?? null,
    page_url: c.pageUrl,
    origin: c.origin ?? "",
    ip_address: c.ipAddress,
    user_agent: c.userAgent,
    form_version: c.formVersion ?? "",
    trusted_form_cert_url: c.trustedFormCertUrl,
    jornaya_lead_id: c.jornayaLeadId,
    fields: { ...(c.fields ?? {}) },
  };
}

function keyJson(row: { key: string; livemode: boolean; createdAt: Date }): Json["PublishableKey"] {
  return {
    publishable_key: row.key,
    mode: row.livemode ? "live" : "test",
    created_at: row.createdAt.toISOString(),
  };
}

export function formRoutes(
  forms: FormService,
  options: { clientAddress: ClientAddress; publicBaseUrl: string | undefined },
): RestFeature {
  const router = Router();
  const { clientAddress, publicBaseUrl } = options;
  const portalActor = (res: Response) => `portal:${portalOf(res).email}`;

  // The form's own calls, from a page of an allowed origin (the gate has checked key and Origin).
  router.get(
    `${FORMS_PREFIX}/config/`,
    operation("getFormConfig", async (req, res) => {
      const c = formCallerOf(req);
      await forms.read(c, clientAddress(req));
      const cfg = forms.config(c);
      res.json({
        livemode: cfg.livemode,
        broker_name: cfg.brokerName,
        consent_text: cfg.consentText,
        consent_text_sha256: cfg.consentTextSha256,
        form_version: cfg.formVersion,
        challenge: cfg.challenge,
        turnstile_site_key: cfg.turnstileSiteKey,
        overseas_types: {
          DOMESTIC: ["OPEN", "ENCLOSED", "DRIVE_AWAY"],
          FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],
        },
      });
    }),
  );
  router.get(
    `${FORMS_PREFIX}/challenge/`,
    operation("getFormChallenge", async (req, res) => {
      await forms.read(formCallerOf(req), clientAddress(req));
      res.json((await forms.challenge()) as never);
    }),
  );
  router.get(
    `${FORMS_PREFIX}/zip/:zip/`,
    operation("getFormZip", async (req, res) => {
      await forms.read(formCallerOf(req), clientAddress(req));
      res.json(forms.zip(req.params.zip));
    }),
  );
  router.post(
    `${FORMS_PREFIX}/leads/`,
    operation("createFormLead", async (req, res) => {
      const c = formCallerOf(req);
      const { created, consentId } = await forms.submit(c, req.body, {
        clientIp: clientAddress(req),
        userAgent: req.get("user-agent"),
      });
      noteLead(req, created.lead);
      res.status(201).json({
        order_number: created.lead.orderNumber,
        external_id: created.lead.externalId,
        state: created.lead.state,
        livemode: created.lead.livemode,
        consent_id: consentId,
      });
    }),
  );

  // Administrators.
  router.post(
    "/api/v1/lead_providers/:id/publishable_key/",
    operation("issuePublishableKey", async (req, res) => {
      const row = await forms.rotateKey(actorOf(res), parseId(req.params.id), req.body?.mode);
      res.status(201).json(keyJson(row));
    }),
  );
  router.get(
    "/api/v1/lead_providers/:id/form_settings/",
    operation("getFormSettings", async (req, res) => {
      res.json(settingsJson(await forms.settings(parseId(req.params.id)), baseUrlOf(req, publicBaseUrl)));
    }),
  );
  router.put(
    "/api/v1/lead_providers/:id/form_settings/",
    operation("updateFormSettings", async (req, res) => {
      const v = await forms.updateSettings(actorOf(res), parseId(req.params.id), req.body);
      res.json(settingsJson(v, baseUrlOf(req, publicBaseUrl)));
    }),
  );
  router.get(
    "/api/v1/admin/consents/:consent_id/",
    operation("getConsentRecord", async (req, res) => {
      res.json(consentRecordJson(await forms.consent(req.params.consent_id)));
    }),
  );

  // The portal: the signed-in user's own provider only.
  router.get(
    "/api/v1/portal/form_settings/",
    operation("getPortalFormSettings", async (req, res) => {
      res.json(settingsJson(await forms.settings(portalOf(res).providerId), baseUrlOf(req, publicBaseUrl)));
    }),
  );
  router.put(
    "/api/v1/portal/form_settings/",
    operation("updatePortalFormSettings", async (req, res) => {
      const v = await forms.updateSettings(portalActor(res), portalOf(res).providerId, req.body);
      res.json(settingsJson(v, baseUrlOf(req, publicBaseUrl)));
    }),
  );
  router.post(
    "/api/v1/portal/form_settings/publishable_key/",
    operation("issuePortalPublishableKey", async (req, res) => {
      const row = await forms.rotateKey(portalActor(res), portalOf(res).providerId, req.body?.mode);
      res.status(201).json(keyJson(row));
    }),
  );
  router.get(
    "/api/v1/portal/form_stats/",
    operation("getPortalFormStats", async (req, res) => {
      const livemode = req.query.mode !== "test";
      const week = await forms.week(portalOf(res).providerId, livemode);
      res.json({
        livemode,
        week_start: week.since.toISOString(),
        form_leads: week.leads,
        refusals: week.refusals,
      });
    }),
  );
  router.get(
    "/api/v1/portal/consents/:consent_id/",
    operation("getPortalConsentRecord", async (req, res) => {
      res.json(consentRecordJson(await forms.consent(req.params.consent_id, portalOf(res).providerId)));
    }),
  );
  return { router };
}
