/**
 * A message that is not valid protobuf is the caller's mistake: INVALID_ARGUMENT over gRPC,
 * gRPC-web and the Connect protocol, on every service (the lead methods the fast path serves and
 * the ones it does not), never INTERNAL. The suite runs with FAST_PATHS on and off.
 */
import { connect as http2Connect } from "node:http2";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

/** A field 1 (length-delimited) whose length runs past the end of the message. */
const JUNK = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);

function envelope(message: Buffer): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** The grpc-status of a gRPC call over HTTP/2 carrying `body`. */
function grpcStatus(port: number, path: string, authorization: string, body: Buffer): Promise<string> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  return new Promise<string>((resolve, reject) => {
    const stream = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      authorization,
    });
    let status = "";
    stream.on("response", (h) => {
      if (h["grpc-status"]) status = String(h["grpc-status"]);
    });
    stream.on("trailers", (h) => {
      status = String(h["grpc-status"]);
    });
    stream.on("data", () => undefined);
    stream.on("end", () => resolve(status));
    stream.on("error", reject);
    stream.end(body);
  }).finally(() => session.close());
}

/** The grpc-status in a gRPC-web answer's trailer frame (flag 0x80). */
function grpcWebStatus(bytes: Buffer): string | undefined {
  let at = 0;
  while (at + 5 <= bytes.length) {
    const flag = bytes[at] as number;
    const length = bytes.readUInt32BE(at + 1);
    const data = bytes.subarray(at + 5, at + 5 + length).toString("latin1");
    if (flag & 0x80) return /grpc-status:\s*(\d+)/i.exec(data)?.[1];
    at += 5 + length;
  }
  return undefined;
}

describe.each(BACKENDS)("a message that is not protobuf ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    ({ key } = await t.provider());
    admin = await t.token();
  });
  afterAll(async () => t?.stop());

  const calls = (): [string, string][] => [
    ["/leadprovider.v1.PublicLeadService/GetLead", `Bearer ${key}`],
    ["/leadprovider.v1.PublicLeadService/CreateLead", `Bearer ${key}`],
    ["/leadprovider.v1.PublicLeadService/ListEvents", `Bearer ${key}`],
    ["/leadprovider.v1.ProviderService/GetProvider", `Bearer ${admin}`],
  ];

  it("is INVALID_ARGUMENT over gRPC, for the fast path's methods and the others", async () => {
    for (const [path, authorization] of calls()) {
      expect(await grpcStatus(t.port, path, authorization, envelope(JUNK)), path).toBe(String(Code.InvalidArgument));
    }
  });

  it("is INVALID_ARGUMENT over gRPC-web", async () => {
    for (const [path, authorization] of calls()) {
      const r = await fetch(`${t.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1", authorization },
        body: envelope(JUNK),
      });
      const bytes = Buffer.from(await r.arrayBuffer());
      const status = r.headers.get("grpc-status") ?? grpcWebStatus(bytes);
      expect(status, path).toBe(String(Code.InvalidArgument));
    }
  });

  it("is 400 invalid_argument over the Connect protocol, and a valid message is still answered", async () => {
    for (const [path, authorization] of calls()) {
      const r = await fetch(`${t.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/proto", authorization },
        body: JUNK,
      });
      expect(r.status, path).toBe(400);
      expect(await r.json(), path).toMatchObject({ code: "invalid_argument" });
    }
    // An empty message is valid protobuf: the call goes through to the service.
    const ok = await fetch(`${t.url}/leadprovider.v1.PublicLeadService/ListEvents`, {
      method: "POST",
      headers: { "content-type": "application/proto", authorization: `Bearer ${key}` },
      body: Buffer.alloc(0),
    });
    expect(ok.status).toBe(200);
  });
});
