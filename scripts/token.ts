/**
 * Prints a development JWT signed with the configured HS256 secret (the development secret when
 * JWT_SECRET is unset), valid for one hour. Admin by default; `--position AGENT` for another
 * position, `--sub NAME` for another subject. Refuses to run with NODE_ENV=production.
 */
import { createSecretKey } from "node:crypto";
import { parseArgs } from "node:util";
import { SignJWT } from "jose";
import { loadConfig } from "../src/config.ts";

const { values } = parseArgs({
  options: {
    position: { type: "string" },
    sub: { type: "string", default: "dev-admin" },
    ttl: { type: "string", default: "3600" },
  },
});
const config = loadConfig();
if (config.production) throw new Error("make token is a development tool; NODE_ENV=production");
if (config.jwt.secret === undefined) throw new Error("make token needs an HS256 secret (JWT_SECRET), not a JWKS URL");

const jwt = new SignJWT({ [config.jwt.adminClaim]: values.position ?? config.jwt.adminValue })
  .setProtectedHeader({ alg: "HS256", typ: "JWT" })
  .setSubject(values.sub)
  .setIssuedAt()
  .setExpirationTime(`${Number(values.ttl)}s`);
if (config.jwt.issuer) jwt.setIssuer(config.jwt.issuer);
if (config.jwt.audience) jwt.setAudience(config.jwt.audience);
process.stdout.write(`${await jwt.sign(createSecretKey(Buffer.from(config.jwt.secret, "utf8")))}\n`);
