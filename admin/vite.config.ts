/**
 * The back office's build: `vite build --config admin/vite.config.ts` writes admin/dist, which the
 * service serves at /admin/. `vite --config admin/vite.config.ts` is the dev server with hot
 * reload; it proxies the API (REST and Connect) to the service on :8080 (LEAD_PROVIDER_URL).
 * The settings both apps share are in ui/vite.ts.
 */
import { appConfig } from "../ui/vite.ts";

export default appConfig({
  root: import.meta.dirname,
  base: "/admin/",
  port: 5173,
  proxy: ["/api", "/leadprovider.v1.", "/admin/dev-token"],
});
