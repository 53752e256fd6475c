/**
 * The RPC edge's hook for a shortcut in front of connect-node (a fast path, registered at
 * composition by app.ts): it takes the HTTP/2 calls it serves itself and answers them as
 * connect-node would (the same gate, error table and request-log note), and says false for
 * everything else, which connect-node serves.
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Handler } from "../http-types.ts";

/** True when the shortcut has taken the call (and will answer it). */
export type GrpcShortcut = (req: Http2ServerRequest, res: Http2ServerResponse) => boolean;

/** connect-node behind the shortcut, or connect-node alone when there is none (FAST_PATHS=off). */
export function withGrpcShortcut(connect: Handler, shortcut: GrpcShortcut | undefined): Handler {
  if (!shortcut) return connect;
  return (req, res) => {
    if (req.httpVersionMajor >= 2 && shortcut(req as Http2ServerRequest, res as Http2ServerResponse)) return;
    connect(req, res);
  };
}
