/**
 * The REST edge: Express 5 with the JSON body limit, one gate per surface (edge/surfaces.ts),
 * the OpenAPI request validator (spec compiled once at start-up), each feature's routes and
 * problem+json errors. Only HTTP/1.x reaches it (see server.ts).
 */
import express, { type Request, type RequestHandler, type Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import type { ClientAddress } from "../edge/client-address.ts";
import { portalSessionToken } from "../edge/portal-cookie.ts";
import { rateLimitHeaders } from "../edge/rate-limit-headers.ts";
import { noteCaller } from "../edge/request-note.ts";
import { type Gate, hasOwnLimit, isOpenPath, refuseUnenrolled, SURFACES, type Surface } from "../edge/surfaces.ts";
import { DomainError, type FieldViolation } from "../errors.ts";
import type { Logger } from "../logger.ts";
import type { Readiness } from "../readiness.ts";
import type { RestFeature } from "./feature.ts";
import { handoffOf } from "./handoff.ts";
import { createErrorHandler, type Explainer, sendProblem } from "./problem.ts";
import { routeGuide } from "./route-guide.ts";
import { operationIdOf } from "./typed.ts";

export interface RestDeps {
  /** The parsed openapi.yaml, and its text for GET /openapi.yaml. */
  readonly spec: { readonly document: object; readonly text: string };
  readonly gate: Gate;
  /** The client's address, behind trusted proxies the forwarded one. */
  readonly clientAddress: ClientAddress;
  readonly features: readonly RestFeature[];
  readonly logger: Logger;
  readonly validateResponses: boolean;
  readonly readiness: () => Promise<Readiness>;
  /** PUBLIC_BASE_URL: the origin the portal's changes must come from (else the request's own). */
  readonly publicBaseUrl?: string | undefined;
  /** Extra routes mounted before the validator (e.g. /metrics, /docs). */
  readonly extraRoutes?: readonly express.Router[];
}

/** REST's own headers, on top of those every answer carries (observe.ts: no-store, nosniff, HSTS). */
export const SECURITY_HEADERS: Record<string, string> = {
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a change whose Origin is missing or not this service's: PUBLIC_BASE_URL's origin when
 * set, else the origin the request was addressed to (its Host, on the scheme it arrived by).
 */
function checkOrigin(req: Request, publicBaseUrl: string | undefined): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.get("origin");
  const own = publicBaseUrl ? new URL(publicBaseUrl).origin : `${req.protocol}://${req.get("host") ?? ""}`;
  if (origin === own) return;
  throw new DomainError(
    "permission_denied",
    origin === undefined
      ? "the request must come from this service's own pages: it carries no Origin header"
      : `the request must come from this service's own pages (Origin ${origin} is not ${own})`,
    { code: "cross_origin_refused" },
  );
}

/** Authenticates and rate-limits every request under the surface's prefix, by its rule. */
function gateFor(gate: Gate, surface: Surface, clientAddress: ClientAddress, publicBaseUrl?: string): RequestHandler {
  return async (req, res, next) => {
    if (surface.sameOriginWrites) checkOrigin(req, publicBaseUrl);
    if (isOpenPath(surface, req.path)) return next();
    // Handed over by a shortcut (rest/handoff.ts), which has been through this gate already.
    const handoff = handoffOf(req);
    if (handoff) {
      if (handoff.caller) noteCaller(req, handoff.caller);
      if (handoff.error !== undefined) throw handoff.error;
      res.locals.caller = handoff.caller;
      return next();
    }
    const session = surface.caller === "portal_session" ? portalSessionToken(req.get("cookie")) : undefined;
    const caller = await gate.authenticate(surface, req.get("authorization"), clientAddress(req), session);
    res.locals.caller = caller;
    noteCaller(req, caller);
    refuseUnenrolled(surface, caller, req.path);
    const quota = await gate.limit(surface, caller, hasOwnLimit(surface, { restPath: req.path }));
    if (quota) for (const [k, v] of Object.entries(rateLimitHeaders(quota))) res.setHeader(k, v);
    next();
  };
}

/** The feature's own wording of a rejected body, found by the operation the validator matched. */
function explainerOf(features: readonly RestFeature[]): Explainer {
  const table = new Map<string, (body: unknown) => readonly FieldViolation[]>();
  for (const f of features) for (const [op, explain] of Object.entries(f.explainers ?? {})) table.set(op, explain);
  return (req: Request) => {
    const op = operationIdOf(req);
    const explain = op === undefined ? undefined : table.get(op);
    return explain ? explain(req.body) : [];
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
  for (const routes of deps.extraRoutes ?? []) app.use(routes);
  app.use(routeGuide(deps.spec.document));

  app.use(express.json({ limit: "64kb", type: ["application/json", "application/*+json"] }));
  for (const surface of SURFACES)
    if (surface.restPrefix)
      app.use(surface.restPrefix, gateFor(deps.gate, surface, deps.clientAddress, deps.publicBaseUrl));
  for (const feature of deps.features) if (feature.guard) app.use(feature.guard);

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
  for (const feature of deps.features) app.use(feature.router);

  app.use((req: Request, res: Response) => {
    sendProblem(req, res, {
      status: 404,
      code: "not_found",
      title: "Not found",
      detail: `no route for ${req.method} ${req.path}`,
    });
  });
  const extensions = deps.features.flatMap((f) => (f.problemExtension ? [f.problemExtension] : []));
  app.use(createErrorHandler(deps.logger, explainerOf(deps.features), extensions));
  return app;
}
