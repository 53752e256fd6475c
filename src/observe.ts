/**
 * The outermost request handler of every protocol: request id, the access log line, request
 * metrics, and /metrics for callers holding METRICS_TOKEN. Log lines carry ids, route, status and
 * timing only: never headers, bodies or query strings (keys, JWTs, emails and phones stay out).
 */

import { PROBLEM_CONTENT_TYPE, problemJson } from "./edge/problem-json.ts";
import type { Logger } from "./logger.ts";
import { type Metrics, serveMetrics } from "./metrics.ts";
import { assignRequestId } from "./request-id.ts";
import type { AnyRequest, AnyResponse, Handler } from "./server.ts";

const RPC_PATH = /^\/leadprovider\.v1\.[A-Za-z]+\/[A-Za-z]+$/;

/**
 * Route labels of bounded cardinality: the OpenAPI path template a REST request matches (also
 * for requests refused before routing, e.g. 401 or 429), the RPC method path, or a fixed bucket.
 */
export function createRouteLabeler(templates: readonly string[]): (req: AnyRequest) => string {
  const patterns = templates.map((t) => ({
    template: t,
    regex: new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`),
  }));
  return (req) => {
    const path = req.url?.split("?")[0] ?? "";
    if (RPC_PATH.test(path)) return path;
    if (path.startsWith("/docs")) return "/docs";
    return patterns.find((p) => p.regex.test(path))?.template ?? "unmatched";
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

/** Headers a request may carry only once: two would leave open which one counts. */
const SINGLE_HEADERS = ["authorization", "host"];

/** The name of a header the request repeats, if any. */
function repeatedHeader(req: AnyRequest): string | undefined {
  const raw = req.rawHeaders;
  return SINGLE_HEADERS.find((name) => {
    let seen = 0;
    for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) seen += 1;
    return seen > 1;
  });
}

export function createObservedHandler(
  inner: Handler,
  logger: Logger,
  metrics: Metrics,
  options: { readonly metricsToken: string | undefined; readonly routes: readonly string[] },
): Handler {
  const { metricsToken } = options;
  const routeLabel = createRouteLabeler(options.routes);
  return (req: AnyRequest, res: AnyResponse) => {
    if (req.url === "/metrics" && req.method === "GET" && metricsToken !== undefined && req.httpVersionMajor < 2) {
      void serveMetrics(metrics, metricsToken, req as never, res as never);
      return;
    }
    const requestId = assignRequestId(req, res);
    for (const [k, v] of Object.entries(COMMON_HEADERS)) res.setHeader(k, v);
    const started = process.hrtime.bigint();
    res.once("finish", () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(req);
      const protocol = protocolOf(req);
      metrics.observe(route, req.method ?? "", res.statusCode, protocol, seconds);
      logger.info(
        { request_id: requestId, method: req.method, route, protocol, status: res.statusCode, ms: seconds * 1000 },
        "request",
      );
    });
    const repeated = repeatedHeader(req);
    if (repeated !== undefined) {
      res.statusCode = 400;
      res.setHeader("content-type", PROBLEM_CONTENT_TYPE);
      res.end(
        problemJson({
          status: 400,
          code: "duplicate_header",
          title: "Bad request",
          detail: `the ${repeated} header must be sent once`,
          requestId,
        }),
      );
      return;
    }
    inner(req, res);
  };
}
