/**
 * The back office's build: `vite build --config admin/vite.config.ts` writes admin/dist, which the
 * service serves at /admin/. `vite --config admin/vite.config.ts` is the dev server with hot
 * reload; it proxies the API (REST and Connect) to the service on :8080 (LEAD_PROVIDER_URL).
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const target = process.env.LEAD_PROVIDER_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  root: import.meta.dirname,
  base: "/admin/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 4000 },
  server: {
    port: 5173,
    proxy: { "/api": target, "/leadprovider.v1.": target, "/admin/dev-token": target },
  },
});
