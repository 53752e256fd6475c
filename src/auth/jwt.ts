/**
 * JWT verification with jose: HS256 with a shared secret, or asymmetric keys from a JWKS URL.
 * Algorithms are pinned (never `none`, no HS/RS confusion), exp/nbf checked with 30 s of clock
 * tolerance, iss/aud checked when configured.
 */
import { createSecretKey } from "node:crypto";
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { Config } from "../config.ts";
import type { JwtPrincipal } from "../edge/identity.ts";
import { DomainError } from "../errors.ts";

export type { JwtPrincipal };

export type JwtVerifier = (token: string) => Promise<JwtPrincipal>;

export function invalidToken(message = "the bearer token is missing or invalid"): DomainError {
  return new DomainError("unauthenticated", message, { code: "invalid_token" });
}

const CLOCK_TOLERANCE_SECONDS = 30;

/** Three base64url segments, each exactly as base64url writes it (no padding, no stray bits). */
function isCanonicalCompact(token: string): boolean {
  const parts = token.split(".");
  return (
    parts.length === 3 &&
    parts.every((p) => /^[A-Za-z0-9_-]+$/.test(p) && Buffer.from(p, "base64url").toString("base64url") === p)
  );
}

/** Why a verified token's times are not acceptable: `iat` in the future, or a lifetime over the maximum. */
function lifetimeProblem(payload: JWTPayload, maxLifetime: number, now: number): string | undefined {
  if (typeof payload.iat === "number" && payload.iat > now + CLOCK_TOLERANCE_SECONDS) {
    return "the token is issued in the future (iat)";
  }
  const start = typeof payload.iat === "number" ? payload.iat : typeof payload.nbf === "number" ? payload.nbf : now;
  if (typeof payload.exp === "number" && payload.exp - start > maxLifetime) {
    return `the token lives longer than ${maxLifetime} s (exp − iat); ask for a shorter-lived token`;
  }
  return undefined;
}

export function createJwtVerifier(jwt: Config["jwt"]): JwtVerifier {
  const options = {
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ["exp"],
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
    if (!isCanonicalCompact(token)) throw invalidToken();
    let payload: JWTPayload;
    try {
      ({ payload } = await verify(token));
    } catch (err) {
      // jose checks the claims only once the signature holds: an expired token is genuine, and
      // saying when it expired tells its holder to get a new one rather than to debug the key.
      if (err instanceof errors.JWTExpired && typeof err.payload.exp === "number")
        throw Object.assign(invalidToken(`the token expired at ${new Date(err.payload.exp * 1000).toISOString()}`), {
          cause: err,
        });
      throw Object.assign(invalidToken(), { cause: err });
    }
    const problem = lifetimeProblem(payload, jwt.maxLifetimeSeconds, Date.now() / 1000);
    if (problem) throw invalidToken(problem);
    if (typeof payload.sub !== "string" || payload.sub === "") throw invalidToken("the token has no subject (sub)");
    return {
      subject: payload.sub,
      isAdmin: payload[jwt.adminClaim] === jwt.adminValue,
      canProcessLeads: claimHolds(payload[jwt.workflowClaim], jwt.workflowValue),
      claims: payload,
    };
  };
}

/** A claim holds `value` when it equals it, lists it (array), or names it in a space-separated scope string. */
function claimHolds(claim: unknown, value: string): boolean {
  if (typeof claim === "string") return claim === value || claim.split(" ").includes(value);
  return Array.isArray(claim) && claim.includes(value);
}
