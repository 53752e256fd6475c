/**
 * Prints a development JWT signed with the configured HS256 secret (the development secret when
 * JWT_SECRET is unset). Admin by default; `--position AGENT` for another position, `--sub NAME`
 * for another subject, `--ttl SECONDS` for another lifetime (default 3600). Refuses to run under
 * production's rules (any NODE_ENV but development or test).
 */
import { parseArgs } from "node:util";
import { signDevelopmentToken } from "../src/auth/dev-token.ts";
import { loadConfig } from "../src/config.ts";

const { values } = parseArgs({
  options: {
    position: { type: "string" },
    sub: { type: "string", default: "dev-admin" },
    ttl: { type: "string", default: "3600" },
  },
});
const config = loadConfig();
if (config.production) throw new Error(`make token is a development tool; NODE_ENV=${config.nodeEnv}`);
const ttlSeconds = Number(values.ttl);
if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new Error("--ttl must be a whole number of seconds");
process.stdout.write(
  `${await signDevelopmentToken(config.jwt, { position: values.position, sub: values.sub, ttlSeconds })}\n`,
);
