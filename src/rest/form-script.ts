/**
 * The drop-in form's script (forms/, built by Vite into forms/dist/quote-form.js by `make
 * install`), served at its versioned path for any site's `<script src>`: `text/javascript`,
 * cached by browsers and CDNs for a day without revalidation (`immutable`: the path names the
 * version, which only changes compatibly; a fix reaches every page within the day), gzipped for a
 * client that takes it, and readable cross-origin (`Cross-Origin-Resource-Policy: cross-origin`
 * in place of REST's `same-origin`, and `Access-Control-Allow-Origin: *` for a `crossorigin`
 * script tag or a subresource-integrity check). A 503 naming `make install` when it is not built.
 */
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Router } from "express";
import { PROBLEM_CONTENT_TYPE, problemJson } from "../edge/problem-json.ts";

export const FORM_SCRIPT_FILE = fileURLToPath(new URL("../../forms/dist/quote-form.js", import.meta.url));

export const FORM_SCRIPT_CACHE_CONTROL = "public, max-age=86400, immutable";

interface Built {
  readonly mtimeMs: number;
  readonly size: number;
  readonly plain: Buffer;
  readonly gzip: Buffer;
  readonly etag: string;
}

/** The built script, read again only when the file changes (a rebuild under a running service). */
function reader(file: string): () => Built | undefined {
  let cached: Built | undefined;
  return () => {
    let st: { mtimeMs: number; size: number };
    try {
      st = statSync(file);
    } catch {
      return undefined;
    }
    if (cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size) return cached;
    const plain = readFileSync(file);
    const etag = `"${createHash("sha256").update(plain).digest("base64url").slice(0, 27)}"`;
    cached = { mtimeMs: st.mtimeMs, size: st.size, plain, gzip: gzipSync(plain, { level: 9 }), etag };
    return cached;
  };
}

/** Serves the built form script at `path` (the feature names it: /forms/v1/quote-form.js). */
export function formScriptRoutes(path: string, file = FORM_SCRIPT_FILE): Router {
  const router = Router();
  const read = reader(file);
  router.get(path, (req, res) => {
    res.setHeader("Cross-Origin-Resource-Policy", "cross-origin");
    const built = read();
    if (!built) {
      res.status(503).type(PROBLEM_CONTENT_TYPE);
      res.send(
        problemJson({
          status: 503,
          code: "form_script_not_built",
          title: "Service unavailable",
          detail: "the form script is not built; run `make install` (it builds forms/ into forms/dist)",
        }),
      );
      return;
    }
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Content-Type", "text/javascript; charset=utf-8");
    res.setHeader("Cache-Control", FORM_SCRIPT_CACHE_CONTROL);
    res.setHeader("ETag", built.etag);
    res.setHeader("Vary", "Accept-Encoding");
    if (req.get("if-none-match") === built.etag) {
      res.status(304).end();
      return;
    }
    const gzip = /\bgzip\b/.test(req.get("accept-encoding") ?? "");
    const body = gzip ? built.gzip : built.plain;
    if (gzip) res.setHeader("Content-Encoding", "gzip");
    res.setHeader("Content-Length", String(body.length));
    res.status(200).end(req.method === "HEAD" ? undefined : body);
  });
  return router;
}
