/**
 * The Connect interceptors, outermost first (as Connect's docs layer them): errors, then
 * authentication, then rate limits. Who may call a service and whether it is limited come from
 * the one surface table (edge/surfaces.ts).
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { rateLimitHeaders } from "../edge/rate-limit-headers.ts";
import { type Gate, type Surface, surfaceOfService } from "../edge/surfaces.ts";
import { DomainError } from "../errors.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { callerKey, clientIpKey, quotaKey } from "./context.ts";
import { toConnectError } from "./errors.ts";

/** Renders every failure through the one DomainError table; logs only the unexpected ones. */
export function errorsInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (thrown) {
      const err = toConnectError(thrown);
      const quota = (thrown instanceof DomainError ? thrown.quota : undefined) ?? req.contextValues.get(quotaKey);
      if (quota) for (const [k, v] of Object.entries(rateLimitHeaders(quota))) err.metadata.set(k, v);
      if (err.code === Code.Internal && !(thrown instanceof ConnectError)) {
        logger.error({ err: errorForLog(thrown), rpc: req.method.name }, "rpc failed");
      }
      throw err;
    }
  };
}

function surfaceOf(typeName: string): Surface {
  const surface = surfaceOfService(typeName);
  if (!surface) throw new Error(`service ${typeName} has no row in the surface table`);
  return surface;
}

/** Verifies the caller by the rule of the service's surface and hands it to the handler. */
export function authInterceptor(gate: Gate): Interceptor {
  return (next) => async (req) => {
    const surface = surfaceOf(req.service.typeName);
    const caller = await gate.authenticate(
      surface,
      req.header.get("authorization"),
      req.contextValues.get(clientIpKey),
    );
    req.contextValues.set(callerKey, caller);
    return next(req);
  };
}

/** Admits the call against the caller's rate limits and reports the quota on the response. */
export function limitsInterceptor(gate: Gate): Interceptor {
  return (next) => async (req) => {
    const caller = req.contextValues.get(callerKey);
    if (!caller) throw new Error("limitsInterceptor runs after authInterceptor");
    const quota = await gate.limit(surfaceOf(req.service.typeName), caller);
    if (!quota) return next(req);
    req.contextValues.set(quotaKey, quota);
    const res = await next(req);
    for (const [k, v] of Object.entries(rateLimitHeaders(quota))) res.header.set(k, v);
    return res;
  };
}

/** Fails at start-up when a registered service is missing from the surface table. */
export function assertSurfaces(typeNames: readonly string[]): void {
  for (const name of typeNames) surfaceOf(name);
}
