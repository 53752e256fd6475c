/**
 * Static files sent compressed: brotli to a browser that accepts it, else gzip, else as they are,
 * always with `Vary: Accept-Encoding`. A build writes `<file>.br` and `<file>.gz` beside each text
 * file (ui/vite.ts); a file without them is compressed once, on its first request, and the
 * result is kept in memory (keyed by path, size and modification time) for the next ones.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, join, normalize, sep } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Request, Response } from "express";

export type Encoding = "br" | "gzip" | "identity";

const COMPRESSIBLE = new Set([".js", ".mjs", ".css", ".html", ".svg", ".json", ".txt", ".map"]);
const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json",
};

/** The encoding to answer with: br over gzip when both are accepted; none refused with q=0. */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => accepted.get(name) ?? (accepted.get("*") || 0);
  if (weight("br") > 0) return "br";
  if (weight("gzip") > 0) return "gzip";
  return "identity";
}

const cache = new Map<string, Buffer>();

function encoded(file: string, encoding: "br" | "gzip", stamp: string): Buffer {
  const sibling = `${file}.${encoding === "br" ? "br" : "gz"}`;
  if (existsSync(sibling) && statSync(sibling).mtimeMs >= statSync(file).mtimeMs) return readFileSync(sibling);
  const key = `${file}\0${encoding}\0${stamp}`;
  let body = cache.get(key);
  if (!body) {
    const raw = readFileSync(file);
    body =
      encoding === "br"
        ? brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } })
        : gzipSync(raw, { level: 9 });
    cache.set(key, body);
  }
  return body;
}

/** The file under `dir` that `urlPath` names, or undefined (outside `dir`, missing, a folder). */
export function fileUnder(dir: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  const file = normalize(join(dir, decoded));
  if (!file.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return undefined;
  return existsSync(file) && statSync(file).isFile() ? file : undefined;
}

/** Sends `file` in the encoding the request accepts, with the given Cache-Control. */
export function sendCompressed(req: Request, res: Response, file: string, cacheControl: string): void {
  const ext = extname(file).toLowerCase();
  const stat = statSync(file);
  res.setHeader("Cache-Control", cacheControl);
  res.setHeader("Last-Modified", stat.mtime.toUTCString());
  const type = TYPES[ext];
  if (type) res.setHeader("Content-Type", type);
  else res.type(ext);
  if (!COMPRESSIBLE.has(ext)) {
    res.sendFile(file);
    return;
  }
  res.setHeader("Vary", "Accept-Encoding");
  const encoding = chooseEncoding(req.headers["accept-encoding"]);
  const body = encoding === "identity" ? readFileSync(file) : encoded(file, encoding, `${stat.size}:${stat.mtimeMs}`);
  if (encoding !== "identity") res.setHeader("Content-Encoding", encoding);
  res.setHeader("Content-Length", String(body.length));
  res.status(200);
  if (req.method === "HEAD") res.end();
  else res.end(body);
}
