/**
 * Development admin tokens, signed with the configured HS256 secret: `make token` prints one, and
 * a service in development (NODE_ENV development or test, on the built-in development secret)
 * hands one to the back office's "Use the development token" button. Nothing here is reachable
 * with production's rules (config.ts), and the secret never leaves the service: the console
 * bundle holds no secret.
 */
import { createSecretKey } from "node:crypto";
import { SignJWT } from "jose";
import type { Config } from "../config.ts";

export interface DevTokenOptions {
  /** The admin claim's value; the configured admin value when unset. */
  readonly position?: string | undefined;
  readonly sub?: string | undefined;
  readonly ttlSeconds?: number | undefined;
}

export async function signDevelopmentToken(jwt: Config["jwt"], options: DevTokenOptions = {}): Promise<string> {
  if (jwt.secret === undefined)
    throw new Error("a development token needs an HS256 secret (JWT_SECRET), not a JWKS URL");
  const token = new SignJWT({ [jwt.adminClaim]: options.position ?? jwt.adminValue })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(options.sub ?? "dev-admin")
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 3600}s`);
  if (jwt.issuer) token.setIssuer(jwt.issuer);
  if (jwt.audience) token.setAudience(jwt.audience);
  return token.sign(createSecretKey(Buffer.from(jwt.secret, "utf8")));
}

/** True when this service may hand out development tokens: development rules on the development secret. */
export function devTokensAllowed(config: Pick<Config, "production" | "jwt">): boolean {
  return !config.production && config.jwt.usingDevSecret;
}
