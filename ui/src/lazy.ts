/**
 * A screen loaded when first shown: `lazyScreen(() => import("./audit.tsx"), "AuditList")` is a
 * component whose code is its own chunk, fetched on the first visit to its route (react-admin's
 * layout shows its loading state meanwhile). The sign-in screen and the shell never wait for it.
 */
import { type ComponentType, type FunctionComponent, lazy } from "react";

export function lazyScreen<M extends Record<string, unknown>, K extends keyof M & string>(
  load: () => Promise<M>,
  name: K,
): FunctionComponent<object> {
  return lazy(async () => ({ default: (await load())[name] as ComponentType<object> })) as FunctionComponent<object>;
}
