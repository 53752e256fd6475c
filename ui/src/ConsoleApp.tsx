/**
 * react-admin as both apps run it: under a router basename (/admin, /portal), with the kit's theme
 * and English messages, and no telemetry. The app brings its resources and routes as children.
 */
import { Admin, type AdminProps } from "react-admin";
import { BrowserRouter } from "react-router-dom";
import { i18nProvider } from "./i18n.ts";
import { theme } from "./theme.ts";

export function ConsoleApp({ basename, ...props }: { basename: string } & AdminProps) {
  return (
    <BrowserRouter basename={basename}>
      <Admin i18nProvider={i18nProvider} theme={theme} disableTelemetry {...props} />
    </BrowserRouter>
  );
}
