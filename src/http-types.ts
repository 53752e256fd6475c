/** The request, response and handler types of the one-port server (server.ts), for everything that handles its requests. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;
export type Handler = (req: AnyRequest, res: AnyResponse) => void;
