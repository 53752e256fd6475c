/**
 * Points a request for a path the API does not have toward the one it meant, before any key is
 * asked for (a 401 for a misspelt path points the wrong way):
 * - a path whose slash form is a route (`POST /api/v1/public/leads`) is answered 308 to it, so
 *   clients that follow redirects keep the method and the body;
 * - any other unknown path under /api/ is a 404 that names the closest route.
 * The routes are the contract's paths (openapi.yaml), matched as Express matches them: any case.
 */
import type { RequestHandler } from "express";
import { sendProblem } from "./problem.ts";

interface Route {
  readonly template: string;
  readonly pattern: RegExp;
}

const routesOf = (document: object): Route[] =>
  Object.keys((document as { paths?: Record<string, unknown> }).paths ?? {}).map((template) => ({
    template,
    pattern: new RegExp(
      `^${template
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}$`,
      "i",
    ),
  }));

/** Levenshtein distance, for naming the closest route (a few dozen short strings per 404). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] as number;
}

/** The route a mistyped path most likely meant (placeholders compared as their names). */
export function closestRoute(routes: readonly Route[], path: string): string | undefined {
  let best: { template: string; score: number } | undefined;
  const lower = path.toLowerCase();
  for (const r of routes) {
    const score = distance(lower, r.template);
    if (!best || score < best.score) best = { template: r.template, score };
  }
  return best?.template;
}

export function routeGuide(document: object): RequestHandler {
  // The API's own routes are the ones a mistyped /api/ path can have meant (not /healthz).
  const routes = routesOf(document).filter((r) => r.template.startsWith("/api/"));
  const known = (path: string) => routes.some((r) => r.pattern.test(path));
  return (req, res, next) => {
    const path = req.path;
    // OPTIONS is never redirected: a browser preflight cannot follow a redirect.
    if (req.method === "OPTIONS" || !/^\/api\//i.test(path)) return next();
    try {
      decodeURIComponent(path);
    } catch {
      sendProblem(req, res, {
        status: 400,
        code: "validation_error",
        title: "Invalid request",
        detail: "the path has a malformed percent-escape (a % must be followed by two hex digits of UTF-8)",
        errors: [{ field: "path", code: "invalid", message: "the path has a malformed percent-escape" }],
      });
      return;
    }
    if (known(path)) return next();
    if (!path.endsWith("/") && known(`${path}/`)) {
      const query = req.originalUrl.slice(req.originalUrl.split("?")[0]?.length ?? 0);
      res.redirect(308, `${req.baseUrl}${path}/${query}`);
      return;
    }
    const closest = closestRoute(routes, path);
    sendProblem(req, res, {
      status: 404,
      code: "not_found",
      title: "Not found",
      detail: `no route for ${req.method} ${path}${closest ? `; the closest route is ${closest}` : ""}`,
      ...(closest && { extra: { closest_route: closest } }),
    });
  };
}
