/**
 * One port for REST, Connect, gRPC and gRPC-Web. A TCP listener peeks at the first bytes of
 * each connection: the HTTP/2 client preface goes to an h2c server (gRPC, Connect over h2),
 * anything else to an HTTP/1.1 server (REST, Connect, gRPC-Web). Both run the same handler:
 * connect-node's adapter, whose fallback hands HTTP/1.x requests to Express.
 */
import http from "node:http";
import http2, { type Http2Session } from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import { PROBLEM_CONTENT_TYPE, problemJson } from "./edge/problem-json.ts";
import type { AnyRequest, AnyResponse, Handler } from "./http-types.ts";
import type { Logger } from "./logger.ts";
import { newRequestId } from "./request-id.ts";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

export type { AnyRequest, AnyResponse, Handler };

export interface ServerTimeouts {
  /** Time to receive the first bytes of a new connection and a request's headers. */
  readonly headersMs: number;
  /** Time to receive a whole HTTP/1.1 request. */
  readonly requestMs: number;
  /** Idle keep-alive connection lifetime. */
  readonly keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000 };

export interface OnePortServer {
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes the rest. */
  close(timeoutMs: number): Promise<void>;
}

export function createOnePortServer(handler: Handler, logger: Logger, timeouts = DEFAULT_TIMEOUTS): OnePortServer {
  // HTTP/1.1 connections and how many requests each has in flight / has served. On shutdown, a
  // connection is closed only when it is idle after serving (keep-alive); a fresh one may still be
  // delivering its first request, which is served (with Connection: close) rather than reset.
  const h1Connections = new Map<Duplex, { active: number; served: number }>();
  let draining = false;
  const h1 = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // How often Node checks the two timeouts above (default 30 s would let them overrun).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(timeouts.headersMs / 4)),
    },
    (req, res) => {
      const state = h1Connections.get(req.socket);
      if (state) state.active += 1;
      if (draining) res.setHeader("Connection", "close");
      res.once("close", () => {
        if (!state) return;
        state.active -= 1;
        state.served += 1;
      });
      handler(req, res);
    },
  );
  // Node starts checking headersTimeout/requestTimeout when a server emits "listening"; this one
  // never listens itself (connections are handed to it), so start the checks explicitly.
  h1.emit("listening");
  h1.on("connection", (socket: Duplex) => {
    h1Connections.set(socket, { active: 0, served: 0 });
    socket.once("close", () => h1Connections.delete(socket));
  });
  // Requests Node rejects before any handler runs (oversized headers, malformed HTTP, slow
  // clients) still get a problem+json answer.
  h1.on("clientError", (err: NodeJS.ErrnoException, socket) => answerClientError(err, socket));
  const h2 = http2.createServer({}, handler);
  const sessions = new Set<Http2Session>();
  const sockets = new Set<net.Socket>();
  // The raw socket of the session being created: h2 emits "session" synchronously while handling
  // the "connection" that route() hands it (below).
  let handingOver: net.Socket | undefined;
  h2.on("session", (session) => {
    sessions.add(session);
    const raw = handingOver;
    // An idle session gets GOAWAY; one whose client does not close in turn is destroyed, so its
    // descriptor is freed within a bounded time instead of when the client pleases. Node ends a
    // closed session's socket gracefully (a half-close that waits for the client's FIN), so the
    // raw socket is destroyed too: a client that never closes cannot hold the descriptor.
    session.setTimeout(timeouts.keepAliveMs * 12, () => {
      session.close();
      setTimeout(() => {
        session.destroy();
        raw?.destroy();
      }, timeouts.keepAliveMs).unref();
    });
    session.on("close", () => sessions.delete(session));
  });
  h2.on("sessionError", (err) => logger.debug({ err: err.message }, "http2 session error"));

  // noDelay: small request/response frames must not wait for Nagle's algorithm (40 ms stalls).
  const tcp = net.createServer({ pauseOnConnect: true, noDelay: true }, (socket) => {
    sockets.add(socket);
    if (logger.isLevelEnabled("debug")) logger.debug({ remote_port: socket.remotePort }, "connection accepted");
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    route(socket, timeouts.headersMs, (stream, isHttp2) => {
      if (!isHttp2) {
        h1.emit("connection", stream);
        return;
      }
      handingOver = stream;
      try {
        h2.emit("connection", stream);
      } finally {
        handingOver = undefined;
      }
    });
  });

  return {
    listen(port, host) {
      return new Promise((resolve, reject) => {
        tcp.once("error", reject);
        tcp.listen(port, host, () => {
          tcp.off("error", reject);
          resolve((tcp.address() as net.AddressInfo).port);
        });
      });
    },
    async close(timeoutMs) {
      draining = true;
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const [socket, state] of h1Connections) if (state.active === 0 && state.served > 0) socket.end();
      for (const s of sessions) s.close(); // GOAWAY: open streams finish, new ones are refused
      const timer = setTimeout(() => {
        for (const s of sessions) s.destroy();
        for (const s of sockets) s.destroy();
      }, timeoutMs);
      await closed;
      clearTimeout(timer);
    },
  };
}

const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, "Request header fields too large", "the request line or headers are larger than 16 KiB"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request timeout", "the request was not received in time"],
  ERR_HTTP_HEADERS_TIMEOUT: [408, "Request timeout", "the request headers were not received in time"],
};

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || (err.code === "ECONNRESET" && !socket.writable)) {
    socket.destroy();
    return;
  }
  const [status, title, detail] = CLIENT_ERRORS[err.code ?? ""] ?? [
    400,
    "Bad request",
    "the request is not valid HTTP/1.1",
  ];
  const code = status === 431 ? "headers_too_large" : status === 408 ? "request_timeout" : "bad_request";
  const requestId = newRequestId();
  const body = problemJson({ status, code, title, detail, requestId });
  const head = [
    `HTTP/1.1 ${status} ${title}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    "cache-control: no-store",
    "x-content-type-options: nosniff",
    "connection: close",
  ];
  // Destroyed once the answer is flushed: a client that never closes its side must not keep the
  // descriptor (a dribbling client would otherwise hold it long past the request timeout).
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`, () => socket.destroy());
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * Reads just enough of a new connection to tell the HTTP/2 preface from HTTP/1.x, then hands it
 * on with the peeked bytes put back (unshift): the HTTP/1.1 server reads them as a JS stream,
 * the HTTP/2 session feeds already-buffered bytes to nghttp2 before reading the handle itself.
 */
function route(socket: net.Socket, timeoutMs: number, handOff: (stream: net.Socket, isHttp2: boolean) => void): void {
  let seen = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  socket.once("close", () => clearTimeout(timer));
  const onData = (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, PREFACE.length);
    const isHttp2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (isHttp2 && seen.length < PREFACE.length) return; // need more bytes to decide
    clearTimeout(timer);
    socket.off("data", onData);
    socket.pause();
    if (isHttp2) {
      // Left paused: the HTTP/2 session reads bytes already buffered on the socket (Node feeds
      // them to nghttp2 on the next tick), then reads the native handle directly.
      socket.unshift(seen);
      handOff(socket, true);
    } else {
      socket.unshift(seen);
      handOff(socket, false);
      socket.resume();
    }
  };
  socket.on("data", onData);
  socket.resume();
}
