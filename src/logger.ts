/**
 * pino JSON logs. Secrets and personal data never reach a log line: the request logger records
 * only method, route, status, timing and ids, and these paths are redacted as a second guard.
 */
import pino, { type DestinationStream, type Logger } from "pino";
import type { LogLevel } from "./config.ts";

export type { Logger };

export const REDACT_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "api_key",
  "*.api_key",
  "apiKey",
  "*.apiKey",
  "api_key_value",
  "token",
  "*.token",
  "email",
  "*.email",
  "contact_email",
  "*.contact_email",
  "phone_number",
  "*.phone_number",
];

export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      // pid tells the workers of WEB_CONCURRENCY apart (cluster.ts).
      base: { service: "lead-provider-api", pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** An error for a log line: its class, message and code; never a bound SQL parameter. */
export function errorForLog(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown; cause?: unknown };
  return {
    type: e.name,
    message: e.message,
    ...(e.code !== undefined && { code: e.code }),
    stack: e.stack,
    ...(e.cause !== undefined && { cause: errorForLog(e.cause) }),
  };
}
