/**
 * The provider portal's build: `vite build --config portal/vite.config.ts` writes portal/dist,
 * which the service serves at /portal/. A sibling of the back office (admin/), never importing
 * from it: both take the same stack (React, react-admin, MUI) and the shared components, theme,
 * messages, fetching and styles from the UI kit in ui/ (and these build settings from
 * ui/vite.ts); the portal has its own entry, sign-in and screens. `vite --config
 * portal/vite.config.ts` is the dev server (:5174), proxying the API to the service on :8080
 * (LEAD_PROVIDER_URL).
 */
import { appConfig } from "../ui/vite.ts";

export default appConfig({ root: import.meta.dirname, base: "/portal/", port: 5174, proxy: ["/api"] });
