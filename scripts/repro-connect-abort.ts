/**
 * Minimal reproduction for docs/upstream/connect-es-per-call-abort.md: a connect-node server
 * over HTTP/2 answering 1,000 unary calls counts the AbortController aborts made without a
 * reason (each builds a DOMException). `node scripts/repro-connect-abort.ts`
 */
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { CommonService } from "../generated/proto/leadprovider/v1/common_service_pb.ts";

let withoutReason = 0;
const abort = AbortController.prototype.abort;
AbortController.prototype.abort = function (this: AbortController, reason?: unknown) {
  if (reason === undefined) withoutReason++;
  return abort.call(this, reason);
};

const server = http2.createServer(
  connectNodeAdapter({ routes: (r) => r.service(CommonService, { listStates: () => ({ states: [] }) }) }),
);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;
const client = createClient(CommonService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
const calls = 1000;
for (let i = 0; i < calls; i++) await client.listStates({});
await new Promise((r) => setTimeout(r, 200));
process.stdout.write(
  `${calls} completed calls (client and server in this process): ${withoutReason} aborts without a reason, each a new DOMException\n`,
);
server.close();
process.exit(0);
