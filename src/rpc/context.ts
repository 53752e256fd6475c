/** Per-request values that travel from the interceptors to the handlers. */
import { createContextKey } from "@connectrpc/connect";
import type { ProviderPrincipal } from "../api-keys/api-key.service.ts";
import type { JwtPrincipal } from "../auth/jwt.ts";

export const providerKey = createContextKey<ProviderPrincipal | undefined>(undefined, {
  description: "the provider behind the API key",
});
export const jwtKey = createContextKey<JwtPrincipal | undefined>(undefined, {
  description: "the verified JWT caller",
});
export const clientIpKey = createContextKey<string | undefined>(undefined, {
  description: "the address of the connected client",
});
