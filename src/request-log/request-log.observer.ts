/**
 * The request log's observer of finished requests (observe.ts calls it after each answer): it
 * follows every Public API request except reads of the log and stats themselves, and builds the
 * request's entry from what the edges noted while serving it (edge/request-note.ts) and how it
 * was answered, for the writer (request-log.writer.ts).
 */
import { RPC_CODES } from "../edge/http-status.ts";
import type { RequestNote } from "../edge/request-note.ts";
import type { AnyRequest, AnyResponse } from "../http-types.ts";
import type { FinishedRequest, RequestObserver } from "../observe.ts";
import { outcomeOf, type RequestLogEntry } from "./request-log.ts";

/** Where the observer sends each Public API request's log entry (request-log.writer.ts), and what it asks. */
export interface RequestLogSink {
  record(entry: RequestLogEntry): void;
  /**
   * The provider behind a request's key when the answer came before the gate looked at it (a
   * malformed body, a message Connect could not read), so the entry is the provider's all the
   * same. Nothing is counted against the key or the address.
   */
  readonly identify: (authorization: string) => Promise<{ providerId: number; livemode: boolean } | undefined>;
  readonly clientAddress: (req: AnyRequest) => string | undefined;
  readonly now: () => Date;
}

const PUBLIC_REST = "/api/v1/public";
/** The drop-in form's submissions (forms/): the provider's requests too, answered to a page. */
const FORM_SUBMISSIONS = "/api/v1/forms/leads";
const PUBLIC_RPC = "/leadprovider.v1.publicleadservice/";
/** Reading the log and the stats is not itself logged: polling them would fill the log with itself. */
const UNRECORDED =
  /^\/api\/v1\/public\/(requests|stats)(\/|$)|^\/leadprovider\.v1\.PublicLeadService\/(ListRequests|GetRequest|GetStats)$/i;

/** Express routes REST paths case-insensitively (/Api/V1/Public/Leads/ creates a lead), so this does too. */
function isPublic(path: string): boolean {
  const p = path.toLowerCase();
  if (p === FORM_SUBMISSIONS || p === `${FORM_SUBMISSIONS}/`) return true;
  return (p === PUBLIC_REST || p.startsWith(`${PUBLIC_REST}/`) || p.startsWith(PUBLIC_RPC)) && !UNRECORDED.test(path);
}

/** The grpc-status and grpc-message a gRPC answer's trailers carried (HTTP/2 only). */
function sentGrpcStatus(res: AnyResponse): { code: number; message: string | undefined } | undefined {
  const stream = (res as { stream?: { sentTrailers?: Record<string, string> } }).stream;
  const status = stream?.sentTrailers?.["grpc-status"];
  if (status === undefined) return undefined;
  const message = stream?.sentTrailers?.["grpc-message"];
  let decoded: string | undefined;
  try {
    decoded = message === undefined ? undefined : decodeURIComponent(message);
  } catch {
    decoded = message;
  }
  return { code: Number(status), message: decoded };
}

function stringField(body: unknown, key: string, max: number): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const v = (body as Record<string, unknown>)[key];
  return typeof v === "string" && v.length > 0 && v.length <= max ? v : undefined;
}

/**
 * The `{external_id}` segment of a REST path whose route template names one: a request refused
 * before its route ran (a rate limit at the gate) still names the lead it asked for.
 */
function externalIdOfPath(route: string, path: string): string | undefined {
  const at = route.split("/").indexOf("{external_id}");
  if (at === -1) return undefined;
  const segment = path.split("/")[at];
  if (segment === undefined) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return id.length > 0 && id.length <= 128 ? id : undefined;
}

/** The log entry of a finished Public API request, from its note (edge/request-note.ts) and answer. */
function logEntry(
  req: AnyRequest,
  res: AnyResponse,
  note: RequestNote,
  at: FinishedRequest & { readonly createdAt: Date },
  clientIp: string | undefined,
): RequestLogEntry {
  const rest = at.protocol === "rest";
  const problem = note.problem;
  let status = res.statusCode;
  let rpcCode: string | null = null;
  let protocolDetail: string | null = null;
  if (!rest) {
    if (problem) status = problem.status;
    else if (note.rpcCode === "ok") status = note.successStatus ?? 200;
    else {
      // Refused by the protocol layer before any handler (a malformed message): gRPC says how in
      // its trailers, Connect by its HTTP status.
      const sent = sentGrpcStatus(res);
      const row = sent
        ? RPC_CODES[sent.code]
        : status >= 400
          ? RPC_CODES.find(([, http]) => http === status)
          : undefined;
      if (row) status = row[1];
      rpcCode = row?.[0] ?? null;
      protocolDetail = sent?.message ?? null;
    }
    rpcCode = note.rpcCode ?? rpcCode;
  }
  const code = problem?.code ?? (status >= 400 && rpcCode !== null ? rpcCode : null);
  const provider = note.provider;
  const authorization = provider ? req.headers.authorization : undefined;
  const userAgent = req.headers["user-agent"];
  const body = note.body === undefined ? ((req as { body?: unknown }).body ?? null) : note.body;
  const length = Number(req.headers["content-length"]);
  return {
    requestId: at.requestId,
    createdAt: at.createdAt,
    providerId: provider?.providerId ?? null,
    livemode: provider?.livemode ?? null,
    operation: rest ? `${req.method} ${at.route === "unmatched" ? at.path.slice(0, 200) : at.route}` : at.path.slice(1),
    protocol: at.protocol,
    status,
    rpcCode,
    outcome: outcomeOf(status, code),
    code,
    detail: problem?.detail ?? protocolDetail,
    errors: problem?.errors ?? [],
    externalId:
      note.externalId ??
      stringField(body, "external_id", 128) ??
      (rest ? externalIdOfPath(at.route, at.path) : undefined) ??
      null,
    leadId: note.leadId ?? null,
    durationMs: at.durationMs,
    clientIp: clientIp ?? null,
    keyHint: typeof authorization === "string" && authorization.length > 12 ? authorization.slice(-4) : null,
    userAgent: typeof userAgent === "string" ? userAgent.slice(0, 256) : null,
    requestBody: typeof body === "object" ? body : null,
    requestBodyBytes: Number.isSafeInteger(length) && length >= 0 ? length : null,
    gated: provider !== undefined,
  };
}

/** Follows the Public API's requests into the request log. */
export function createRequestLogObserver(sink: RequestLogSink): RequestObserver {
  return {
    follows: isPublic,
    finished(req, res, note, request) {
      const authorization = req.headers.authorization;
      const entry = logEntry(req, res, note, { ...request, createdAt: sink.now() }, sink.clientAddress(req));
      if (entry.providerId !== null || typeof authorization !== "string" || entry.status === 401) {
        sink.record(entry);
        return;
      }
      const keyHint = authorization.slice(-4);
      void sink.identify(authorization).then(
        (p) => sink.record(p ? { ...entry, providerId: p.providerId, livemode: p.livemode, keyHint } : entry),
        () => sink.record(entry),
      );
    },
  };
}
