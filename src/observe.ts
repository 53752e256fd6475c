/**
 * The outermost request handler of every protocol: request id, the access log line, request
 * metrics, and /metrics for callers holding METRICS_TOKEN. Log lines carry ids, route, status and
 * timing only: never headers, bodies or query strings (keys, JWTs, emails and phones stay out).
 */

import { hostProblem } from "./edge/host-header.ts";
import { RPC_CODES } from "./edge/http-status.ts";
import { PROBLEM_CONTENT_TYPE, problemJson } from "./edge/problem-json.ts";
import { type RequestNote, startNote } from "./edge/request-note.ts";
import type { FieldViolation } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { type Metrics, serveMetrics } from "./metrics.ts";
import { assignRequestId } from "./request-id.ts";
import { outcomeOf, type RequestLogEntry } from "./request-log/request-log.ts";
import type { AnyRequest, AnyResponse, Handler } from "./server.ts";

const RPC_PATH = /^\/leadprovider\.v1\.[A-Za-z]+\/[A-Za-z]+$/;

interface RouteNode {
  template?: string;
  readonly children: Map<string, RouteNode>;
  /** A `{param}` segment: any one non-empty segment. */
  param?: RouteNode;
}

/**
 * Route labels of bounded cardinality: the OpenAPI path template a REST request matches (also
 * for requests refused before routing, e.g. 401 or 429), the RPC method path, or a fixed bucket.
 * Templates are held in a tree of path segments, so a label is one walk down the path, not a
 * regular expression per template tried in turn.
 */
export function createRouteLabeler(templates: readonly string[]): (req: AnyRequest) => string {
  const root: RouteNode = { children: new Map() };
  for (const template of templates) {
    let node = root;
    for (const segment of template.split("/")) {
      if (segment.startsWith("{") && segment.endsWith("}")) {
        node.param ??= { children: new Map() };
        node = node.param;
      } else {
        let next = node.children.get(segment);
        if (!next) {
          next = { children: new Map() };
          node.children.set(segment, next);
        }
        node = next;
      }
    }
    node.template ??= template;
  }
  const find = (segments: readonly string[], i: number, node: RouteNode): string | undefined => {
    if (i === segments.length) return node.template;
    const segment = segments[i] as string;
    const exact = node.children.get(segment);
    const found = exact && find(segments, i + 1, exact);
    if (found !== undefined) return found;
    return node.param && segment !== "" ? find(segments, i + 1, node.param) : undefined;
  };
  return (req) => {
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    if (RPC_PATH.test(path)) return path;
    if (path.startsWith("/docs")) return "/docs";
    return find(path.split("/"), 0, root) ?? "unmatched";
  };
}

export function protocolOf(req: AnyRequest): string {
  const type = String(req.headers["content-type"] ?? "");
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  if (RPC_PATH.test(req.url?.split("?")[0] ?? "")) return "connect";
  return "rest";
}

/**
 * Headers every answer carries, whatever the protocol (REST adds its own on top, see
 * rest/app.ts): nothing is cached, nothing is sniffed, HTTPS is remembered.
 */
const COMMON_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
};

/** The name of a header the request repeats that it may carry only once (two would leave open which one counts). */
function repeatedHeader(req: AnyRequest): string | undefined {
  const raw = req.rawHeaders;
  let authorization = 0;
  let host = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // Only names of the right length are lowercased: no string is made for the other headers.
    if (name.length === 13 && name.toLowerCase() === "authorization") authorization += 1;
    else if (name.length === 4 && name.toLowerCase() === "host") host += 1;
  }
  return authorization > 1 ? "authorization" : host > 1 ? "host" : undefined;
}

/** A 400 problem+json for a request refused before routing, whatever its protocol. */
function refuse(res: AnyResponse, requestId: string, code: string, detail: string, errors?: FieldViolation[]): void {
  res.statusCode = 400;
  res.setHeader("content-type", PROBLEM_CONTENT_TYPE);
  res.end(problemJson({ status: 400, code, title: "Bad request", detail, requestId, errors }));
}

const FAST_PATH = Symbol("served by a fast path");

/** A request's labels in metrics and the log: its route template and protocol. */
export interface RouteLabels {
  readonly route: string;
  readonly protocol: string;
}

/**
 * Marks an answer as written by a fast path (rest/fast-path.ts, rpc/fast-path.ts) rather than by
 * Express or connect-node: the access log line says `fast_path: true`, so which path served a
 * request can be seen (and tested) without changing the answer itself. A fast path that knows
 * the request's route and protocol passes them, so they are not worked out again from the URL
 * and headers (test/observability.test.ts checks they are the labeler's).
 */
export function markFastPath(res: object, labels?: RouteLabels): void {
  (res as Record<symbol, unknown>)[FAST_PATH] = labels ?? true;
}

function fastPathOf(res: object): RouteLabels | true | undefined {
  return (res as Record<symbol, RouteLabels | true | undefined>)[FAST_PATH];
}

/** Where observe.ts sends each Public API request's log entry (request-log/request-log.writer.ts). */
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
const PUBLIC_RPC = "/leadprovider.v1.publicleadservice/";
/** Reading the log and the stats is not itself logged: polling them would fill the log with itself. */
const UNRECORDED =
  /^\/api\/v1\/public\/(requests|stats)(\/|$)|^\/leadprovider\.v1\.PublicLeadService\/(ListRequests|GetRequest|GetStats)$/i;

/** Express routes REST paths case-insensitively (/Api/V1/Public/Leads/ creates a lead), so this does too. */
function isPublic(path: string): boolean {
  const p = path.toLowerCase();
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

/** The log entry of a finished Public API request, from its note (edge/request-note.ts) and answer. */
function logEntry(
  req: AnyRequest,
  res: AnyResponse,
  note: RequestNote,
  at: { requestId: string; createdAt: Date; durationMs: number; route: string; protocol: string; path: string },
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
    externalId: note.externalId ?? stringField(body, "external_id", 128) ?? null,
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

export function createObservedHandler(
  inner: Handler,
  logger: Logger,
  metrics: Metrics,
  options: {
    readonly metricsToken: string | undefined;
    readonly routes: readonly string[];
    /** Records every Public API request (REQUEST_LOG_ENABLED); absent: nothing is recorded. */
    readonly requestLog?: RequestLogSink | undefined;
  },
): Handler {
  const { metricsToken, requestLog } = options;
  const routeLabel = createRouteLabeler(options.routes);
  // The access log line is built only when it is written (LOG_LEVEL=info or lower).
  const logInfo = logger.isLevelEnabled("info");
  return (req: AnyRequest, res: AnyResponse) => {
    if (req.url === "/metrics" && req.method === "GET" && metricsToken !== undefined && req.httpVersionMajor < 2) {
      void serveMetrics(metrics, metricsToken, req as never, res as never);
      return;
    }
    const requestId = assignRequestId(req, res);
    for (const k in COMMON_HEADERS) res.setHeader(k, COMMON_HEADERS[k] as string);
    const started = process.hrtime.bigint();
    const url = req.url ?? "";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const note = requestLog && isPublic(path) ? startNote(req) : undefined;
    res.once("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const fast = fastPathOf(res);
      const route = typeof fast === "object" ? fast.route : routeLabel(req);
      const protocol = typeof fast === "object" ? fast.protocol : protocolOf(req);
      metrics.observe(route, req.method ?? "", res.statusCode, protocol, seconds);
      if (note && requestLog) {
        const at = { requestId, createdAt: requestLog.now(), durationMs: seconds * 1000, route, protocol, path };
        const authorization = req.headers.authorization;
        const entry = logEntry(req, res, note, at, requestLog.clientAddress(req));
        if (entry.providerId !== null || typeof authorization !== "string" || entry.status === 401) {
          requestLog.record(entry);
        } else {
          const keyHint = authorization.slice(-4);
          void requestLog.identify(authorization).then(
            (p) => requestLog.record(p ? { ...entry, providerId: p.providerId, livemode: p.livemode, keyHint } : entry),
            () => requestLog.record(entry),
          );
        }
      }
      if (logInfo) {
        const line = { request_id: requestId, method: req.method, route, protocol, status: res.statusCode };
        logger.info(
          fast !== undefined ? { ...line, ms: seconds * 1000, fast_path: true } : { ...line, ms: seconds * 1000 },
          "request",
        );
      }
    });
    const repeated = repeatedHeader(req);
    if (repeated !== undefined) {
      refuse(res, requestId, "duplicate_header", `the ${repeated} header must be sent once`);
      return;
    }
    // Before anything reads the Host (the portal's Origin check and invite links, Connect's URL).
    const badHost = hostProblem(req.headers);
    if (badHost !== undefined) {
      refuse(res, requestId, "invalid_host", badHost, [{ field: "Host", code: "invalid_host", message: badHost }]);
      return;
    }
    inner(req, res);
  };
}
