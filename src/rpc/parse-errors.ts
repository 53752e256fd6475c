/**
 * A message that is not valid protobuf is the caller's mistake, so it is answered INVALID_ARGUMENT.
 * connect-es answers it INTERNAL (its binary parser wraps every failure as `parse binary: …` with
 * Code.Internal, before any interceptor runs, while a malformed JSON message gets
 * INVALID_ARGUMENT), so each of the router's handlers is wrapped here and such an answer is
 * re-coded on its way out, whatever the protocol: gRPC's trailers, gRPC-web's trailer frame, the
 * Connect protocol's error body and HTTP status. The fast path (leads/fast/grpc.ts) answers the
 * same for the methods it serves.
 */
import { Code, type ConnectRouter } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerResponse } from "@connectrpc/connect/protocol";

const PARSE_BINARY = "parse binary:";
const GRPC_INTERNAL = String(Code.Internal);
const GRPC_INVALID_ARGUMENT = String(Code.InvalidArgument);
/** gRPC-web's trailer frame flag (the frame that carries the status). */
const TRAILER_FLAG = 0x80;

function decoded(message: string | null): string {
  if (message === null) return "";
  try {
    return decodeURIComponent(message);
  } catch {
    return message;
  }
}

/** gRPC: the status lives in the trailers, set once the body is done. */
function recodeTrailer(trailer: Headers | undefined): void {
  if (trailer?.get("grpc-status") !== GRPC_INTERNAL) return;
  if (decoded(trailer.get("grpc-message")).startsWith(PARSE_BINARY)) trailer.set("grpc-status", GRPC_INVALID_ARGUMENT);
}

/** gRPC-web: the status is in the body's trailer frame (flag 0x80, length, HTTP/1 header lines). */
function recodeTrailerFrame(chunk: Uint8Array): Uint8Array {
  if (chunk.length < 5 || chunk[0] !== TRAILER_FLAG) return chunk;
  const text = Buffer.from(chunk.subarray(5)).toString("latin1");
  const status = /^grpc-status:\s*(\d+)\s*$/im.exec(text)?.[1];
  const message = /^grpc-message:\s*(.*?)\s*$/im.exec(text)?.[1] ?? null;
  if (status !== GRPC_INTERNAL || !decoded(message).startsWith(PARSE_BINARY)) return chunk;
  const recoded = Buffer.from(text.replace(/^(grpc-status:\s*)\d+/im, `$1${GRPC_INVALID_ARGUMENT}`), "latin1");
  const frame = Buffer.alloc(5 + recoded.length);
  frame[0] = TRAILER_FLAG;
  frame.writeUInt32BE(recoded.length, 1);
  recoded.copy(frame, 5);
  return frame;
}

async function* watched(
  body: AsyncIterable<Uint8Array>,
  trailer: Headers | undefined,
  grpcWeb: boolean,
): AsyncIterable<Uint8Array> {
  for await (const chunk of body) yield grpcWeb ? recodeTrailerFrame(chunk) : chunk;
  recodeTrailer(trailer);
}

/** Connect's unary protocol: a 500 with a JSON error body `{code: "internal", message}`. */
async function recodeConnectError(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const body = res.body;
  if (res.status !== 500 || body === undefined || !(Symbol.asyncIterator in body)) return res;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(bytes.toString("utf8"));
  } catch {
    error = undefined;
  }
  const replay = async function* (b: Uint8Array) {
    yield b;
  };
  if (error?.code !== "internal" || typeof error.message !== "string" || !error.message.startsWith(PARSE_BINARY))
    return { ...res, body: replay(bytes) };
  const recoded = Buffer.from(JSON.stringify({ ...error, code: "invalid_argument" }), "utf8");
  const header = new Headers(res.header);
  if (header.has("content-length")) header.set("content-length", String(recoded.length));
  return { ...res, status: 400, header, body: replay(recoded) };
}

function recoding(handler: UniversalHandler): UniversalHandler {
  const wrapped = async (req: Parameters<UniversalHandler>[0]) => {
    const res = await handler(req);
    const type = req.header.get("content-type") ?? "";
    if (type.startsWith("application/grpc")) {
      recodeTrailer(res.trailer);
      const body = res.body;
      if (body === undefined || !(Symbol.asyncIterator in body)) return res;
      return {
        ...res,
        body: watched(body as AsyncIterable<Uint8Array>, res.trailer, type.startsWith("application/grpc-web")),
      };
    }
    return type.startsWith("application/proto") ? recodeConnectError(res) : res;
  };
  return Object.assign(wrapped, {
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
    supportedContentType: handler.supportedContentType,
    requestPath: handler.requestPath,
    service: handler.service,
    method: handler.method,
  }) as UniversalHandler;
}

/** Registers the routes, then wraps every handler the router holds (see above). */
export function recodingParseErrors(routes: (router: ConnectRouter) => void): (router: ConnectRouter) => void {
  return (router) => {
    routes(router);
    const handlers = router.handlers as UniversalHandler[];
    for (let i = 0; i < handlers.length; i += 1) handlers[i] = recoding(handlers[i] as UniversalHandler);
  };
}
