/**
 * The provider portal's build: `vite build --config portal/vite.config.ts` writes portal/dist,
 * which the service serves at /portal/. A sibling of the back office (admin/), never importing
 * from it: both take the same stack (React, react-admin, MUI) and the shared components, theme,
 * messages, fetching and styles from the UI kit in ui/; the portal has its own entry, sign-in and
 * screens. `vite --config portal/vite.config.ts` is the dev server (:5174),
 * proxying the API to the service on :8080 (LEAD_PROVIDER_URL).
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const target = process.env.LEAD_PROVIDER_URL ?? "http://127.0.0.1:8080";

export default defineConfig({
  root: import.meta.dirname,
  base: "/portal/",
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, chunkSizeWarningLimit: 4000 },
  server: { port: 5174, proxy: { "/api": target } },
});
