/**
 * The REST edge: Express 5 with the JSON body limit, per-surface authentication, the OpenAPI
 * request validator (spec compiled once at start-up), the routes and problem+json errors.
 * Only HTTP/1.x reaches it (see server.ts).
 */
import express, { type Request, type RequestHandler, type Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { Authenticator } from "../auth/authenticate.ts";
import { LEADS_PATH, leadRoutes } from "../leads/lead.rest.ts";
import type { LeadService } from "../leads/lead.service.ts";
import type { Logger } from "../logger.ts";
import { PROVIDERS_PATH, providerRoutes, stateRoutes } from "../providers/provider.rest.ts";
import type { ProviderService } from "../providers/provider.service.ts";
import { parseProviderInput } from "../providers/provider.ts";
import type { AdmitProvider } from "../rate-limit/admission.ts";
import type { StateService } from "../states/state.service.ts";
import { createErrorHandler, type Explainer, sendProblem } from "./problem.ts";

export interface Readiness {
  readonly ready: boolean;
  readonly body: Record<string, unknown>;
}

export interface RestDeps {
  /** The parsed openapi.yaml, and its text for GET /openapi.yaml. */
  readonly spec: { readonly document: object; readonly text: string };
  readonly auth: Authenticator;
  readonly leads: LeadService;
  readonly providers: ProviderService;
  readonly states: StateService;
  readonly logger: Logger;
  readonly validateResponses: boolean;
  readonly readiness: () => Promise<Readiness>;
  /** Rate-limit admission for a provider; returns headers or throws rate_limited. */
  readonly admitProvider: AdmitProvider;
  /** Extra routes mounted before the validator (e.g. /metrics, /docs). */
  readonly extraRoutes?: express.Router;
}

const SECURITY_HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** Schema rejections of these bodies are worded by the service layer's own rules. */
function explainer(leads: LeadService): Explainer {
  return (req) => {
    if (req.method === "POST" && req.path === LEADS_PATH) return leads.violations(req.body);
    if (req.method === "POST" && req.path === `${PROVIDERS_PATH}create/`)
      return parseProviderInput(req.body, false).violations;
    if (req.method === "PATCH" && req.path.startsWith(PROVIDERS_PATH))
      return parseProviderInput(req.body, true).violations;
    return [];
  };
}

export function createRestApp(deps: RestDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");

  app.use((_req, res, next) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    next();
  });
  app.get("/openapi.yaml", (_req, res) => {
    res.type("application/yaml").send(deps.spec.text);
  });
  if (deps.extraRoutes) app.use(deps.extraRoutes);

  app.use(express.json({ limit: "64kb", type: ["application/json", "application/*+json"] }));

  const providerAuth: RequestHandler = async (req, res, next) => {
    const principal = await deps.auth.provider(req.get("authorization"), req.socket.remoteAddress);
    const headers = await deps.admitProvider(principal.providerId, principal);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.locals.provider = principal;
    next();
  };
  const jwtAuth =
    (admin: boolean): RequestHandler =>
    async (req, res, next) => {
      const authorization = req.get("authorization");
      const ip = req.socket.remoteAddress;
      res.locals.jwt = admin ? await deps.auth.admin(authorization, ip) : await deps.auth.internal(authorization, ip);
      next();
    };
  app.use("/api/v1/public", providerAuth);
  app.use("/api/v1/lead_providers", jwtAuth(true));
  app.use("/api/v1/common", jwtAuth(false));

  app.use(
    OpenApiValidator.middleware({
      apiSpec: deps.spec.document as never,
      validateApiSpec: false, // redocly lints it in `make test`; re-checking costs start-up time
      validateRequests: { allowUnknownQueryParameters: false },
      validateResponses: deps.validateResponses,
      validateSecurity: false,
      validateFormats: true,
      ajvFormats: { mode: "full" }, // the same email rule as the service layer and Prism
      ignorePaths: /^\/(openapi\.yaml|docs|metrics)(\/|$)/,
    }),
  );

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const r = await deps.readiness();
    res.status(r.ready ? 200 : 503).json(r.body);
  });
  app.use(leadRoutes(deps.leads));
  app.use(providerRoutes(deps.providers));
  app.use(stateRoutes(deps.states));

  app.use((req: Request, res: Response) => {
    sendProblem(req, res, {
      status: 404,
      code: "not_found",
      title: "Not found",
      detail: `no route for ${req.method} ${req.path}`,
    });
  });
  app.use(createErrorHandler(deps.logger, explainer(deps.leads)));
  return app;
}
