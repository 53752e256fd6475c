/**
 * The back office at /admin/: the static build of admin/ (Vite, `make install` builds it), served
 * by this process. Every path under /admin/ that is not a file gets index.html, so a deep link
 * such as /admin/providers/1 opens that screen. The Content-Security-Policy allows only this
 * origin's scripts and API calls (no inline scripts; inline styles are MUI's emotion styles).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Router } from "express";
import { PROBLEM_CONTENT_TYPE, problemJson } from "../edge/problem-json.ts";
import { fileUnder, sendCompressed } from "./static-compressed.ts";

export const CONSOLE_DIR = fileURLToPath(new URL("../../admin/dist", import.meta.url));
/** The provider portal's build (portal/, Vite): served at /portal/. */
export const PORTAL_DIR = fileURLToPath(new URL("../../portal/dist", import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export interface ConsoleOptions {
  /**
   * Signs a development admin token for the sign-in page's "Use the development token" button;
   * set only for a service in development on the development secret (auth/dev-token.ts), so in
   * production `GET /admin/dev-token` is the console's 404 and the button is not shown.
   */
  readonly devToken?: (() => Promise<string>) | undefined;
}

export const DEV_TOKEN_PATH = "/admin/dev-token";

export function consoleRoutes(dir = CONSOLE_DIR, options: ConsoleOptions = {}): Router {
  const router = Router();
  const { devToken } = options;
  router.get(DEV_TOKEN_PATH, async (_req, res) => {
    res.setHeader("Content-Security-Policy", CONSOLE_CSP);
    if (devToken === undefined) {
      res.status(404).type(PROBLEM_CONTENT_TYPE);
      res.send(
        problemJson({
          status: 404,
          code: "not_found",
          title: "Not found",
          detail: "development tokens are given only in development (NODE_ENV development or test, no JWT_SECRET)",
        }),
      );
      return;
    }
    res.json({ token: await devToken() });
  });
  router.use(appRoutes("/admin", dir, "the back office", "admin/ into admin/dist"));
  return router;
}

/**
 * A single-page app built by Vite, served at `prefix`: the CSP above on every answer, every text
 * file brotli- or gzip-compressed as the browser accepts (static-compressed.ts), hashed assets
 * cached for a year (immutable), every other path under the prefix answered with index.html (a deep
 * link opens its screen), a 503 naming `make install` when it is not built.
 */
export function appRoutes(prefix: string, dir: string, what: string, builds: string): Router {
  const router = Router();
  const index = join(dir, "index.html");
  router.use(prefix, (_req, res, next) => {
    res.setHeader("Content-Security-Policy", CONSOLE_CSP);
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("X-Frame-Options", "DENY");
    next();
  });
  router.get(prefix, (req, res, next) => {
    if (req.originalUrl.split("?")[0] === prefix) res.redirect(301, `${prefix}/`);
    else next();
  });
  // Hashed file names never change: cached for a year, immutable (replacing the no-store every
  // answer starts with, observe.ts). Sent brotli- or gzip-compressed as the browser accepts.
  router.get(`${prefix}/assets/{*path}`, (req, res, next) => {
    const file = fileUnder(join(dir, "assets"), req.path.slice(`${prefix}/assets`.length));
    if (!file) return next();
    sendCompressed(req, res, file, "public, max-age=31536000, immutable");
  });
  router.use(`${prefix}/assets`, (req, res) => {
    res.setHeader("Cache-Control", "no-store"); // a missing asset may appear with the next build
    res.status(404).type(PROBLEM_CONTENT_TYPE);
    res.send(problemJson({ status: 404, code: "not_found", title: "Not found", detail: `no file ${req.originalUrl}` }));
  });
  // Other files of the build (the icon): an hour. index.html is never cached.
  router.get(`${prefix}/{*path}`, (req, res, next) => {
    const file = fileUnder(dir, req.path.slice(prefix.length));
    if (!file || file === index || /\.(br|gz)$/.test(file)) return next();
    sendCompressed(req, res, file, "public, max-age=3600");
  });
  router.get(`${prefix}/{*path}`, (req, res) => {
    if (!existsSync(index)) {
      res.status(503).type(PROBLEM_CONTENT_TYPE);
      res.send(
        problemJson({
          status: 503,
          code: "console_not_built",
          title: "Service unavailable",
          detail: `${what} is not built; run \`make install\` (it builds ${builds})`,
        }),
      );
      return;
    }
    sendCompressed(req, res, index, "no-store");
  });
  return router;
}
