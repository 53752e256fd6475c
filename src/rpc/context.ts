/** Per-request values that travel from the interceptors to the handlers, and their readers. */
import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { ProviderPrincipal } from "../edge/identity.ts";
import type { RequestNote } from "../edge/request-note.ts";
import type { Caller } from "../edge/surfaces.ts";
import type { Quota } from "../limits.ts";

export const callerKey = createContextKey<Caller | undefined>(undefined, {
  description: "the verified caller (provider key or JWT)",
});
export const quotaKey = createContextKey<Quota | undefined>(undefined, {
  description: "the caller's rate-limit quota after admission",
});
export const noteKey = createContextKey<RequestNote | undefined>(undefined, {
  description: "the request-log note of a Public API call (edge/request-note.ts)",
});
export const clientIpKey = createContextKey<string | undefined>(undefined, {
  description: "the address of the connected client",
});

/** The provider behind the API key of a Public API call. */
export function providerOf(ctx: HandlerContext): ProviderPrincipal {
  const caller = ctx.values.get(callerKey);
  if (caller?.kind !== "provider") throw new Error(`${ctx.method.name} called without an authenticated provider`);
  return caller.provider;
}

/** The JWT subject of an administrator's or internal system's call (recorded in audit and history). */
export function actorOf(ctx: HandlerContext): string {
  const caller = ctx.values.get(callerKey);
  if (caller?.kind !== "jwt") throw new Error(`${ctx.method.name} called without a verified JWT`);
  return caller.jwt.subject;
}
