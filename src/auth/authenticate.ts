/**
 * One authenticator for both edges: reads `Authorization: Bearer …` and answers with the caller
 * or a DomainError. Provider keys and JWTs are never interchangeable.
 */
import { type ApiKeyVerifier, invalidKey } from "../api-keys/api-key.service.ts";
import { KEY_PREFIXES } from "../api-keys/api-key.ts";
import type { Authenticator } from "../edge/identity.ts";
import { DomainError } from "../errors.ts";
import { invalidToken, type JwtVerifier } from "./jwt.ts";

export function bearerToken(header: string | null | undefined): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

type Header = string | null | undefined;

export type { Authenticator };

type Guard = <T>(clientIp: string | undefined, presented: boolean, attempt: () => Promise<T>) => Promise<T>;
const unguarded: Guard = (_ip, _presented, attempt) => attempt();

export function createAuthenticator(
  apiKeys: ApiKeyVerifier,
  verifyJwt: JwtVerifier,
  guard: Guard = unguarded,
): Authenticator {
  const internal = (authorization: Header, clientIp?: string) =>
    guard(clientIp, bearerToken(authorization) !== undefined, async () => {
      const token = bearerToken(authorization);
      if (token === undefined) throw invalidToken();
      if (Object.values(KEY_PREFIXES).some((p) => token.startsWith(p)))
        throw invalidToken("a provider API key is not accepted here; use a JWT");
      return verifyJwt(token);
    });
  return {
    provider(authorization, clientIp) {
      return guard(clientIp, bearerToken(authorization) !== undefined, async () => {
        const token = bearerToken(authorization);
        if (token === undefined) throw invalidKey();
        return apiKeys.verify(token);
      });
    },
    internal,
    async admin(authorization, clientIp) {
      const principal = await internal(authorization, clientIp);
      if (!principal.isAdmin) {
        throw new DomainError("permission_denied", "this operation requires the admin position", { code: "forbidden" });
      }
      return principal;
    },
    async workflow(authorization, clientIp) {
      const principal = await internal(authorization, clientIp);
      if (!principal.canProcessLeads) {
        throw new DomainError("permission_denied", "this operation requires the lead-processing claim", {
          code: "forbidden",
        });
      }
      return principal;
    },
  };
}
