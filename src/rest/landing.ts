/**
 * `GET /`: a small page for a person who opens the service's address, with the entry points
 * (entry-points.ts); JSON for `Accept: application/json`. `GET /api/v1/`: the contract's routes.
 */
import { Router } from "express";
import { ENTRY_POINTS } from "../entry-points.ts";

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string);

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}li{margin:.4rem 0}";

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Lead Provider API</title>
    <style>${STYLE}</style>
  </head>
  <body>
    <main>
      <h1>Lead Provider API</h1>
      <ul>
${ENTRY_POINTS.map((e) => `        <li><a href="${escapeHtml(e.path)}">${escapeHtml(e.label)}</a> — ${escapeHtml(e.description)}</li>`).join("\n")}
      </ul>
    </main>
  </body>
</html>
`;

export function landingRoutes(document: object): Router {
  const router = Router();
  const paths = Object.keys((document as { paths?: Record<string, unknown> }).paths ?? {});
  // The API base the banner names: what is under it, rather than a 404.
  router.get(["/api", "/api/", "/api/v1", "/api/v1/"], (_req, res) => {
    res.json({ name: "Lead Provider API", openapi: "/openapi.yaml", docs: "/docs", routes: paths });
  });
  router.get("/", (req, res) => {
    res.vary("Accept");
    if (req.accepts(["html", "json"]) === "json") {
      res.json({
        name: "Lead Provider API",
        links: Object.fromEntries(ENTRY_POINTS.map((e) => [e.key, { href: e.path, title: e.description }])),
      });
      return;
    }
    // No script, no fetch: the page's inline style is all the policy allows.
    res.setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
    res.type("html").send(PAGE);
  });
  return router;
}
