/**
 * The Vite configuration both apps build with (admin/vite.config.ts, portal/vite.config.ts): React,
 * the app's folder as root, its dist/ as output. Screens are imported lazily by each app (one
 * chunk per screen, and the libraries only screens use go with them), so the sign-in screen loads
 * only the shell. Every text asset is also written compressed
 * beside itself (`.br`, `.gz`), which the service sends to a browser that accepts it
 * (src/rest/static-compressed.ts). The dev server proxies the given paths to the service on
 * :8080 (LEAD_PROVIDER_URL).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin, type UserConfig } from "vite";

const target = process.env.LEAD_PROVIDER_URL ?? "http://127.0.0.1:8080";
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

/** Writes `<file>.br` (quality 11) and `<file>.gz` (level 9) beside every text file of the build. */
function precompress(): Plugin {
  let outDir = "";
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  return {
    name: "precompress",
    apply: "build",
    configResolved(config) {
      outDir = join(config.root, config.build.outDir);
    },
    closeBundle() {
      for (const file of walk(outDir).filter((f) => COMPRESSIBLE.test(f))) {
        const raw = readFileSync(file);
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(raw, {
            params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
          }),
        );
        writeFileSync(`${file}.gz`, gzipSync(raw, { level: 9 }));
      }
    },
  };
}

/**
 * Moves the build's stylesheet links from the head to the end of the body. A stylesheet in the
 * head holds back the first paint until it has loaded; after the loading state, it lets the
 * browser draw index.html's own loading state at once (the app's few rules are needed only when
 * its script has run).
 */
function stylesAfterLoadingState(): Plugin {
  return {
    name: "styles-after-loading-state",
    apply: "build",
    transformIndexHtml: {
      order: "post",
      handler(html) {
        const links = html.match(/[ \t]*<link rel="stylesheet"[^>]*>\n?/g) ?? [];
        const without = links.reduce((out, link) => out.replace(link, ""), html);
        return without.replace("</body>", `${links.map((l) => `  ${l.trim()}`).join("\n")}\n  </body>`);
      },
    },
  };
}

export function appConfig(app: { root: string; base: string; port: number; proxy: string[] }): UserConfig {
  return defineConfig({
    root: app.root,
    base: app.base,
    plugins: [react(), stylesAfterLoadingState(), precompress()],
    build: {
      outDir: "dist",
      emptyOutDir: true,
      chunkSizeWarningLimit: 1500,
    },
    server: { port: app.port, proxy: Object.fromEntries(app.proxy.map((path) => [path, target])) },
  });
}
