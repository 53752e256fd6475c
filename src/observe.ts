/**
 * The outermost request handler of every protocol: request id, the access log line, request
 * metrics, and /metrics for callers holding METRICS_TOKEN. Log lines carry ids, route, status and
 * timing only: never headers, bodies or query strings (keys, JWTs, emails and phones stay out).
 */

import { hostProblem } from "./edge/host-header.ts";
import { PROBLEM_CONTENT_TYPE, problemJson } from "./edge/problem-json.ts";
import { type RequestNote, startNote } from "./edge/request-note.ts";
import type { FieldViolation } from "./errors.ts";
import type { AnyRequest, AnyResponse, Handler } from "./http-types.ts";
import type { Logger } from "./logger.ts";
import { type Metrics, serveMetrics } from "./metrics.ts";
import { assignRequestId } from "./request-id.ts";

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

/** What observe.ts knows of a finished request besides the request and its answer. */
export interface FinishedRequest {
  readonly requestId: string;
  readonly durationMs: number;
  /** The route label of metrics and the access log (an OpenAPI path template, an RPC path, a bucket). */
  readonly route: string;
  readonly protocol: string;
  /** The URL's path, without the query string. */
  readonly path: string;
}

/**
 * Told of each finished request it chose to follow (the request log: request-log.observer.ts
 * builds its entry), after the answer has been sent. The edges fill in the request's note
 * (edge/request-note.ts) while serving it.
 */
export interface RequestObserver {
  /** Whether to keep a note of a request to this path (and be told when it has finished). */
  follows(path: string): boolean;
  finished(req: AnyRequest, res: AnyResponse, note: RequestNote, request: FinishedRequest): void;
}

export function createObservedHandler(
  inner: Handler,
  logger: Logger,
  metrics: Metrics,
  options: {
    readonly metricsToken: string | undefined;
    readonly routes: readonly string[];
    /** Follows requests to their end (the request log, when REQUEST_LOG_ENABLED); absent: none. */
    readonly observer?: RequestObserver | undefined;
  },
): Handler {
  const { metricsToken, observer } = options;
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
    const note = observer?.follows(path) ? startNote(req) : undefined;
    res.once("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const fast = fastPathOf(res);
      const route = typeof fast === "object" ? fast.route : routeLabel(req);
      const protocol = typeof fast === "object" ? fast.protocol : protocolOf(req);
      metrics.observe(route, req.method ?? "", res.statusCode, protocol, seconds);
      if (note && observer)
        observer.finished(req, res, note, { requestId, durationMs: seconds * 1000, route, protocol, path });
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
