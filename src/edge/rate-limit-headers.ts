/**
 * A quota as the IETF httpapi RateLimit header draft writes it; sent as HTTP headers by REST
 * and as response metadata by Connect/gRPC.
 */
import type { Quota } from "../limits.ts";

export function rateLimitHeaders(quota: Quota): Record<string, string> {
  const { perMinute, perDay } = quota.limits;
  const headers: Record<string, string> = {
    "RateLimit-Policy": `"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`,
  };
  if (quota.window !== undefined) {
    headers.RateLimit = `"${quota.window}";r=${quota.remaining ?? 0};t=${quota.resetSeconds ?? 0}`;
  }
  return headers;
}
