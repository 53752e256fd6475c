/**
 * The fast paths (src/leads/fast/rest.ts, src/leads/fast/grpc.ts) answer exactly as the full
 * stacks do. The same request is sent in its canonical shape (fast path) and in a shape the fast
 * path leaves alone (Express, connect-node), and the two answers are compared; with FAST_PATHS=off
 * the same comparisons run with both shapes served by the full stacks.
 */
import { connect as http2Connect, type IncomingHttpHeaders } from "node:http2";
import { Writable } from "node:stream";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GetLeadRequestSchema,
  GetLeadResponseSchema,
} from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { createLogger } from "../src/logger.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

/** Headers that differ between any two answers. */
const VARYING = new Set(["date", "x-request-id", "etag", "location", "content-length", "ratelimit", ":status"]);
const stable = (headers: Headers | IncomingHttpHeaders) => {
  const entries: [string, string][] =
    headers instanceof Headers ? [...headers.entries()] : Object.entries(headers).map(([k, v]) => [k, String(v)]);
  return Object.fromEntries(entries.filter(([k]) => !VARYING.has(k)).sort(([a], [b]) => a.localeCompare(b)));
};

const RUNS = BACKENDS.flatMap((backend) =>
  (["on", "off"] as const).map((fastPaths) => ({ ...backend, backend, fastPaths })),
);

describe.each(RUNS)("fast paths answer as the full stacks ($name, FAST_PATHS=$fastPaths)", ({ backend, fastPaths }) => {
  /** Who serves a request in its canonical shape: the fast path when it is on. */
  const canonical = fastPaths === "on" ? "fast" : "full";
  let t: TestApp;
  let key: string;
  const logs: Json[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) logs.push(JSON.parse(line) as Json);
        done();
      },
    });
    t = await startTestApp(backend, { FAST_PATHS: fastPaths }, { logger: createLogger("info", sink) });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  /**
   * Which path served the request with this X-Request-Id: its access-log line says
   * `fast_path: true` only when a fast path wrote the answer (observe.ts markFastPath).
   */
  async function servedBy(requestId: string | null | undefined): Promise<"fast" | "full"> {
    expect(requestId).toBeTruthy();
    let line: Json | undefined;
    await expect
      .poll(() => (line = logs.find((l) => l.msg === "request" && l.request_id === requestId)), { timeout: 2000 })
      .toBeDefined();
    return line?.fast_path === true ? "fast" : "full";
  }

  const get = (id: string, headers: Record<string, string> = {}) =>
    t.call("GET", `/api/v1/public/leads/${id}/`, { auth: key, headers });
  // A conditional request that matches nothing goes through Express and is answered in full.
  const viaExpress = { "if-none-match": '"no-such-tag"' };

  it("GET: the same status, headers and body", async () => {
    const created = await t.call("POST", "/api/v1/public/leads/", { auth: key, body: leadBody() });
    const { external_id } = (await created.json()) as { external_id: string };
    const fast = await get(external_id);
    const full = await get(external_id, viaExpress);
    expect(fast.status).toBe(200);
    expect(full.status).toBe(200);
    expect(await servedBy(fast.headers.get("x-request-id"))).toBe(canonical);
    expect(await servedBy(full.headers.get("x-request-id"))).toBe("full");
    expect(stable(fast.headers)).toEqual(stable(full.headers));
    expect(fast.headers.get("etag")).toBe(full.headers.get("etag"));
    expect(await fast.text()).toBe(await full.text());
  });

  it("GET of an unknown lead: the same problem", async () => {
    const fast = await get("nope");
    const full = await get("nope", viaExpress);
    expect(fast.status).toBe(404);
    expect(stable(fast.headers)).toEqual(stable(full.headers));
    const [a, b] = [(await fast.json()) as object, (await full.json()) as object];
    expect({ ...a, request_id: undefined }).toEqual({ ...b, request_id: undefined });
  });

  it("POST: the same answer for the same lead, whichever path creates it", async () => {
    const body = leadBody();
    // Content-Type without the space is not a shape the fast path takes: Express serves it.
    const full = await t.call("POST", "/api/v1/public/leads/", {
      auth: key,
      body: { ...body, external_id: `${body.external_id}-x` },
      headers: { "content-type": "application/json;charset=utf-8" },
    });
    const fast = await t.call("POST", "/api/v1/public/leads/", { auth: key, body });
    expect(fast.status).toBe(201);
    expect(full.status).toBe(201);
    expect(await servedBy(fast.headers.get("x-request-id"))).toBe(canonical);
    expect(await servedBy(full.headers.get("x-request-id"))).toBe("full");
    expect(stable(fast.headers)).toEqual(stable(full.headers));
    expect(fast.headers.get("location")).toBe(`/api/v1/public/leads/${body.external_id}/`);
    const strip = (j: Record<string, unknown>) => ({
      ...j,
      id: 0,
      order_number: "",
      external_id: "",
      created_at: "",
      updated_at: "",
      state_changed_at: "",
      // The history is compared too, with each entry's time left out.
      history: (j.history as Json[]).map((h) => ({ ...h, changed_at: "" })),
    });
    expect(strip((await fast.json()) as Record<string, unknown>)).toEqual(
      strip((await full.json()) as Record<string, unknown>),
    );
  });

  it("POST refusals: malformed JSON, a schema rejection, a duplicate, a bad key are the same problems", async () => {
    const body = leadBody();
    await t.call("POST", "/api/v1/public/leads/", { auth: key, body });
    const cases: { body: unknown; auth: string; status: number }[] = [
      { body: "{not json", auth: key, status: 400 },
      { body: { ...leadBody(), vehicles: "many" }, auth: key, status: 400 },
      { body: { ...leadBody(), email: "nobody" }, auth: key, status: 400 },
      { body, auth: key, status: 400 },
      { body: leadBody(), auth: "lp_live_0000000000000000000000000000000000000000000000000", status: 401 },
    ];
    for (const c of cases) {
      const fast = await t.call("POST", "/api/v1/public/leads/", { auth: c.auth, body: c.body });
      const full = await t.call("POST", "/api/v1/public/leads/", {
        auth: c.auth,
        body: c.body,
        headers: { "content-type": "application/json;charset=utf-8" },
      });
      expect(fast.status).toBe(c.status);
      expect(full.status).toBe(c.status);
      expect(stable(fast.headers)).toEqual(stable(full.headers));
      const [a, b] = [(await fast.json()) as object, (await full.json()) as object];
      expect({ ...a, request_id: undefined }).toEqual({ ...b, request_id: undefined });
    }
  });

  /** One raw gRPC call over h2c: response headers, trailers and the message bytes. */
  async function rawGrpc(path: string, message: Uint8Array, extra: Record<string, string> = {}) {
    const session = http2Connect(t.url);
    try {
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      const stream = session.request({
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        authorization: `Bearer ${key}`,
        ...extra,
      });
      const chunks: Buffer[] = [];
      let headers: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders = {};
      stream.on("response", (h) => {
        headers = h;
      });
      stream.on("trailers", (h) => {
        trailers = h;
      });
      stream.on("data", (d: Buffer) => chunks.push(d));
      stream.end(frame);
      await new Promise((resolve) => stream.on("close", resolve));
      return { headers, trailers, body: Buffer.concat(chunks) };
    } finally {
      session.close();
    }
  }

  it("gRPC GetLead: the same headers, trailers and message as connect-node", async () => {
    const created = await t.call("POST", "/api/v1/public/leads/", { auth: key, body: leadBody() });
    const { external_id } = (await created.json()) as { external_id: string };
    const request = toBinary(GetLeadRequestSchema, create(GetLeadRequestSchema, { externalId: external_id }));
    const path = "/leadprovider.v1.PublicLeadService/GetLead";
    const fast = await rawGrpc(path, request);
    // A deadline is a shape the fast path leaves to connect-node.
    const full = await rawGrpc(path, request, { "grpc-timeout": "10S" });
    expect(fast.headers[":status"]).toBe(200);
    expect(await servedBy(fast.headers["x-request-id"] as string)).toBe(canonical);
    expect(await servedBy(full.headers["x-request-id"] as string)).toBe("full");
    expect(stable(fast.headers)).toEqual(stable(full.headers));
    expect(fast.trailers).toEqual(full.trailers);
    expect(fast.trailers["grpc-status"]).toBe("0");
    const message = fromBinary(GetLeadResponseSchema, fast.body.subarray(5));
    expect(message.lead?.externalId).toBe(external_id);
    expect(fast.body.equals(full.body)).toBe(true);
  });

  it("gRPC errors: the same status, message and details as connect-node", async () => {
    const path = "/leadprovider.v1.PublicLeadService/GetLead";
    const missing = toBinary(GetLeadRequestSchema, create(GetLeadRequestSchema, { externalId: "nope" }));
    for (const [request, status] of [[missing, "5"]] as const) {
      const fast = await rawGrpc(path, request);
      const full = await rawGrpc(path, request, { "grpc-timeout": "10S" });
      expect(fast.trailers["grpc-status"] ?? fast.headers["grpc-status"]).toBe(status);
      const pick = (r: typeof fast) => {
        const all = { ...r.headers, ...r.trailers };
        return {
          status: all["grpc-status"],
          message: all["grpc-message"],
          details: all["grpc-status-details-bin"],
          policy: all["ratelimit-policy"],
        };
      };
      expect(pick(fast)).toEqual(pick(full));
    }
  });

  it("gRPC: bytes that are not the request message are INVALID_ARGUMENT, the same on both paths", async () => {
    const path = "/leadprovider.v1.PublicLeadService/GetLead";
    const junk = Buffer.from([0x0a, 0xff]);
    const fast = await rawGrpc(path, junk);
    expect(fast.trailers["grpc-status"] ?? fast.headers["grpc-status"]).toBe("3");
    // connect-node says INTERNAL for the same bytes, and rpc/parse-errors.ts re-codes it
    // (docs/upstream/connect-es-binary-parse-internal.md): both paths answer alike.
    const full = await rawGrpc(path, junk, { "grpc-timeout": "10S" });
    expect(full.trailers["grpc-status"] ?? full.headers["grpc-status"]).toBe("3");
    const message = (r: typeof fast) => decodeURIComponent(String({ ...r.headers, ...r.trailers }["grpc-message"]));
    expect(message(fast)).toBe(message(full));
  });
});
