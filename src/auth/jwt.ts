/**
 * JWT verification with jose: HS256 with a shared secret, or asymmetric keys from a JWKS URL.
 * Algorithms are pinned (never `none`, no HS/RS confusion), exp/nbf checked with 30 s of clock
 * tolerance, iss/aud checked when configured.
 */
import { createSecretKey } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { Config } from "../config.ts";
import { DomainError } from "../errors.ts";

export interface JwtPrincipal {
  /** The token's `sub`: who acts (recorded in audit and history). */
  readonly subject: string;
  readonly isAdmin: boolean;
  readonly claims: JWTPayload;
}

export type JwtVerifier = (token: string) => Promise<JwtPrincipal>;

export function invalidToken(message = "the bearer token is missing or invalid"): DomainError {
  return new DomainError("unauthenticated", message, { code: "invalid_token" });
}

export function createJwtVerifier(jwt: Config["jwt"]): JwtVerifier {
  const options = {
    clockTolerance: 30,
    ...(jwt.issuer !== undefined && { issuer: jwt.issuer }),
    ...(jwt.audience !== undefined && { audience: jwt.audience }),
  };
  let verify: (token: string) => Promise<{ payload: JWTPayload }>;
  if (jwt.jwksUrl !== undefined) {
    const jwks: JWTVerifyGetKey = createRemoteJWKSet(new URL(jwt.jwksUrl));
    const algorithms = [...jwt.jwksAlgorithms];
    verify = (token) => jwtVerify(token, jwks, { ...options, algorithms });
  } else {
    const key = createSecretKey(Buffer.from(jwt.secret ?? "", "utf8"));
    verify = (token) => jwtVerify(token, key, { ...options, algorithms: ["HS256"] });
  }
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await verify(token));
    } catch (err) {
      throw Object.assign(invalidToken(), { cause: err });
    }
    if (typeof payload.sub !== "string" || payload.sub === "") throw invalidToken("the token has no subject (sub)");
    return { subject: payload.sub, isAdmin: payload[jwt.adminClaim] === jwt.adminValue, claims: payload };
  };
}
