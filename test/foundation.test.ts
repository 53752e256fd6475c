import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommonService } from "../generated/proto/leadprovider/v1/common_service_pb.ts";
import { startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, grpcCall, grpcJsClient, PROTOCOLS } from "./helpers/grpc.ts";

describe.each(BACKENDS)("one port for every protocol ($name)", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.stop());

  it("answers /healthz and /readyz over HTTP/1.1", async () => {
    const health = await t.call("GET", "/healthz");
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await t.call("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "ready", checks: { database: { ok: true } } });
  });

  it("echoes a well-formed X-Request-Id and replaces a malformed one", async () => {
    const kept = await t.call("GET", "/healthz", { headers: { "x-request-id": "abc-123" } });
    expect(kept.headers.get("x-request-id")).toBe("abc-123");
    const replaced = await t.call("GET", "/healthz", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("makes request ids that grow with time (UUID version 7, so the request log's index of them is appended to)", async () => {
    const before = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await t.call("GET", "/healthz")).headers.get("x-request-id") ?? "");
      await new Promise((r) => setTimeout(r, 2));
    }
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(Date.now());
    }
    expect([...ids].sort()).toEqual(ids);
  });

  it("answers an unknown route with a problem+json 404", async () => {
    const res = await t.call("GET", "/api/v1/nothing-here/");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(await res.json()).toMatchObject({ status: 404, code: "not_found" });
  });

  it("serves gRPC to a grpc-js client built from the .proto files, on the same port", async () => {
    const client = grpcJsClient(t.port, "CommonService");
    try {
      const { response, error } = await grpcCall<{ states: { id: number; code: string; name: string }[] }>(
        client,
        "ListStates",
        {},
        await t.token({ position: "AGENT" }),
      );
      expect(error).toBeUndefined();
      expect(response?.states).toContainEqual({ id: 5, code: "CA", name: "California" });
      expect(response?.states).toContainEqual({ id: 52, code: "PR", name: "Puerto Rico" });
    } finally {
      client.close();
    }
  });

  it.each(PROTOCOLS)("serves the %s protocol on the same port", async (protocol) => {
    const client = connectClient(CommonService, t.port, protocol);
    const { states } = await client.listStates({}, bearer(await t.token()));
    expect(states.length).toBe(55);
    const unauthenticated = await client.listStates({}).catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(ConnectError);
    expect((unauthenticated as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it("answers REST over HTTP/2 with 505 instead of crashing", async () => {
    const http2 = await import("node:http2");
    const session = http2.connect(t.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = session.request({ ":path": "/healthz" });
      req.on("response", (h) => resolve(Number(h[":status"])));
      req.on("error", reject);
      req.end();
    });
    session.close();
    expect(status).toBe(505);
  });
});
