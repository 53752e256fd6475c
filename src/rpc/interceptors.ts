/**
 * The Connect interceptors, outermost first (as Connect's docs layer them): errors, then
 * authentication, then rate limits. Who may call a service and whether it is limited come from
 * the one surface table (edge/surfaces.ts).
 */
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { notedProblem, RPC_CODES } from "../edge/http-status.ts";
import { rateLimitHeaders } from "../edge/rate-limit-headers.ts";
import type { RequestNote } from "../edge/request-note.ts";
import { type Gate, hasOwnLimit, type Surface, surfaceOfService } from "../edge/surfaces.ts";
import { DomainError } from "../errors.ts";
import { errorForLog, type Logger } from "../logger.ts";
import { callerKey, clientIpKey, noteKey, quotaKey } from "./context.ts";
import { type ErrorDetailExtension, toConnectError } from "./errors.ts";

/** Renders every failure through the one DomainError table; logs only the unexpected ones. */
export function errorsInterceptor(logger: Logger, extensions: readonly ErrorDetailExtension[] = []): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (thrown) {
      const err = toConnectError(thrown, extensions);
      const quota = (thrown instanceof DomainError ? thrown.quota : undefined) ?? req.contextValues.get(quotaKey);
      if (quota) for (const [k, v] of Object.entries(rateLimitHeaders(quota))) err.metadata.set(k, v);
      if (err.code === Code.Internal && !(thrown instanceof ConnectError)) {
        logger.error({ err: errorForLog(thrown), rpc: req.method.name }, "rpc failed");
      }
      throw err;
    }
  };
}

/** The lead a response message carries (CreateLead, GetLead), for the request log. */
function noteResponse(note: RequestNote, message: unknown): void {
  const lead = (message as { lead?: { id?: bigint | number; externalId?: string } } | undefined)?.lead;
  if (lead?.id !== undefined) note.leadId = Number(lead.id);
  if (lead?.externalId) note.externalId = lead.externalId;
}

/** What the request log needs to know about a call: the provider, the request, how it ended. */
export function noteRpcFailure(note: RequestNote, thrown: unknown): void {
  if (thrown instanceof ConnectError) {
    // Raised by Connect itself (a message it could not read): its own code and HTTP status.
    const [code, status] = RPC_CODES[thrown.code] ?? ["unknown", 500];
    note.rpcCode = code;
    note.problem = { status, code, detail: thrown.rawMessage };
    return;
  }
  note.problem = notedProblem(thrown);
  note.rpcCode = RPC_CODES[toConnectError(thrown).code]?.[0] ?? "unknown";
  if (thrown instanceof DomainError && thrown.existingLead) note.leadId = thrown.existingLead.id;
}

/**
 * Fills in the request-log note of a Public API call (edge/request-note.ts): the request message
 * in its JSON form, the provider once authenticated, the lead, and the outcome. Runs inside the
 * errors interceptor, so it sees the failure as thrown.
 */
export function requestLogInterceptor(): Interceptor {
  return (next) => async (req) => {
    const note = req.contextValues.get(noteKey);
    if (!note) return next(req);
    if (req.stream === false) {
      note.body = toJson(req.method.input, req.message as never, { useProtoFieldName: true });
      const externalId = (req.message as { externalId?: unknown }).externalId;
      if (typeof externalId === "string" && externalId !== "") note.externalId = externalId;
    }
    try {
      const res = await next(req);
      note.rpcCode = "ok";
      note.successStatus = req.method.name === "CreateLead" ? 201 : 200;
      if (res.stream === false) noteResponse(note, res.message);
      return res;
    } catch (thrown) {
      noteRpcFailure(note, thrown);
      throw thrown;
    } finally {
      const caller = req.contextValues.get(callerKey);
      if (caller?.kind === "provider") note.provider = caller.provider;
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
    const surface = surfaceOf(req.service.typeName);
    const quota = await gate.limit(surface, caller, hasOwnLimit(surface, { rpcMethod: req.method.name }));
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
