/**
 * One authenticator for both edges: reads `Authorization: Bearer …` and answers with the caller
 * or a DomainError. Provider keys and JWTs are never interchangeable.
 */
import { type ApiKeyVerifier, invalidKey, type ProviderPrincipal } from "../api-keys/api-key.service.ts";
import { KEY_PREFIX } from "../api-keys/api-key.ts";
import { DomainError } from "../errors.ts";
import { invalidToken, type JwtPrincipal, type JwtVerifier } from "./jwt.ts";

export function bearerToken(header: string | null | undefined): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

export interface Authenticator {
  /** A provider API key (Public API). */
  provider(authorization: string | null | undefined): Promise<ProviderPrincipal>;
  /** Any valid JWT (states, workflow). */
  internal(authorization: string | null | undefined): Promise<JwtPrincipal>;
  /** A JWT holding the admin position (Management API); 403 for other valid tokens. */
  admin(authorization: string | null | undefined): Promise<JwtPrincipal>;
}

export function createAuthenticator(apiKeys: ApiKeyVerifier, verifyJwt: JwtVerifier): Authenticator {
  const internal = async (authorization: string | null | undefined) => {
    const token = bearerToken(authorization);
    if (token === undefined) throw invalidToken();
    if (token.startsWith(KEY_PREFIX)) throw invalidToken("a provider API key is not accepted here; use a JWT");
    return verifyJwt(token);
  };
  return {
    async provider(authorization) {
      const token = bearerToken(authorization);
      if (token === undefined) throw invalidKey();
      return apiKeys.verify(token);
    },
    internal,
    async admin(authorization) {
      const principal = await internal(authorization);
      if (!principal.isAdmin) {
        throw new DomainError("permission_denied", "this operation requires the admin position", { code: "forbidden" });
      }
      return principal;
    },
  };
}
