/**
 * The interactive API reference at /docs: Scalar's standalone bundle, installed from npm and
 * served from this process (no CDN, no external fonts), reading /openapi.yaml. Beside it, the
 * client libraries' READMEs (each sdks/<name>/README.md), which the reference's introduction links.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import express, { Router } from "express";

const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Lead Provider API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="/docs/assets/standalone.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// "Try it" targets the page's own origin (whatever port or proxy served it), not the contract's
// example server, which the page's CSP (connect-src 'self') would block anywhere else.
const INIT = `Scalar.createApiReference("#app", {
  url: "/openapi.yaml",
  servers: [{ url: window.location.origin, description: "This server" }],
  withDefaultFonts: false,
  hideClientButton: false,
  telemetry: false,
});
`;

/** The SDKs' READMEs, served as text at /docs/sdks/<name> (a checkout without sdks/ answers 404 there). */
const SDK_READMES = {
  typescript: new URL("../../sdks/typescript/README.md", import.meta.url),
  php: new URL("../../sdks/php/README.md", import.meta.url),
} as const;

function readmes(): Map<string, string> {
  const texts = new Map<string, string>();
  for (const [name, url] of Object.entries(SDK_READMES)) {
    try {
      texts.set(name, readFileSync(url, "utf8"));
    } catch {
      // not in this checkout
    }
  }
  return texts;
}

export function docsRoutes(): Router {
  const require = createRequire(import.meta.url);
  const sdks = readmes();
  const assets = join(dirname(require.resolve("@scalar/api-reference")), "browser");
  const router = Router();
  router.use("/docs", (_req, res, next) => {
    res.setHeader("Content-Security-Policy", DOCS_CSP);
    res.setHeader("Cache-Control", "public, max-age=300");
    next();
  });
  router.get(["/docs", "/docs/"], (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(assets, { index: false }));
  router.get(["/docs/sdks/:name", "/docs/sdks/:name/"], (req, res, next) => {
    const text = sdks.get(String(req.params.name));
    if (text === undefined) return next();
    res.type("text/markdown; charset=utf-8").send(text);
  });
  return router;
}
