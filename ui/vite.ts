/**
 * The Vite configuration both apps build with (admin/vite.config.ts, portal/vite.config.ts): React,
 * the app's folder as root, its dist/ as output (one bundle of about 1.5 MB, hence the raised
 * chunk-size warning). The dev server proxies the given paths to the service on :8080
 * (LEAD_PROVIDER_URL).
 */
import react from "@vitejs/plugin-react";
import { defineConfig, type UserConfig } from "vite";

const target = process.env.LEAD_PROVIDER_URL ?? "http://127.0.0.1:8080";

export function appConfig(app: { root: string; base: string; port: number; proxy: string[] }): UserConfig {
  return defineConfig({
    root: app.root,
    base: app.base,
    plugins: [react()],
    build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 4000 },
    server: { port: app.port, proxy: Object.fromEntries(app.proxy.map((path) => [path, target])) },
  });
}
