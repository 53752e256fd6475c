/**
 * The portal's one client: openapi-fetch typed from openapi.yaml, on this origin, with the
 * session cookie the browser sends by itself. No token is held by any script.
 */
import createClient from "openapi-fetch";
import { HttpError } from "react-admin";
import type { components, paths } from "../../generated/openapi/schema.ts";

export type Schemas = components["schemas"];
export type Problem = Schemas["Problem"];

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });

export { data } from "../../ui/src/fetching.ts";

/** A problem's words for a person: its detail, and each field's message. */
export function explain(err: unknown): string {
  if (err instanceof HttpError) {
    const body = (err.body ?? {}) as { errors?: Record<string, string> };
    const fields = Object.values(body.errors ?? {}).filter((m) => !err.message.includes(m));
    return [err.message, ...fields].join(" ");
  }
  return err instanceof Error ? err.message : String(err);
}
