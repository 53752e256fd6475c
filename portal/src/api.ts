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

/** The data of a call, or an HttpError with the status and the problem (react-admin shows `detail`). */
export async function data<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data: body, error, response } = await call;
  if (response.ok && body !== undefined && body !== null) return body as NonNullable<T>;
  const problem = (error ?? {}) as Partial<Problem>;
  const fieldErrors = Object.fromEntries((problem.errors ?? []).map((e) => [e.field, e.message]));
  throw new HttpError(problem.detail ?? `${response.status} ${response.statusText}`, response.status, {
    ...problem,
    errors: fieldErrors,
  });
}

/** A problem's words for a person: its detail, and each field's message. */
export function explain(err: unknown): string {
  if (err instanceof HttpError) {
    const body = (err.body ?? {}) as { errors?: Record<string, string> };
    const fields = Object.values(body.errors ?? {}).filter((m) => !err.message.includes(m));
    return [err.message, ...fields].join(" ");
  }
  return err instanceof Error ? err.message : String(err);
}
