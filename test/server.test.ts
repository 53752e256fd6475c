/** The one-port listener itself: slow clients are cut off, Node-level rejections are problem+json. */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { createOnePortServer, type OnePortServer } from "../src/server.ts";
import { startTestApp, type TestApp } from "./helpers/app.ts";

/** Opens a raw TCP connection, writes `chunks` (with pauses), returns what the server sent and when it closed. */
function rawExchange(port: number, chunks: Array<string | number>): Promise<{ data: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (d) => (data += d));
    socket.on("error", () => {});
    socket.on("close", () => resolve({ data, closedAfterMs: Date.now() - started }));
    socket.on("connect", async () => {
      for (const c of chunks) {
        if (typeof c === "number") await new Promise((r) => setTimeout(r, c));
        else if (!socket.destroyed) socket.write(c);
      }
    });
  });
}

describe("slow and malformed clients", () => {
  let server: OnePortServer;
  let port: number;
  beforeAll(async () => {
    server = createOnePortServer(
      (_req, res) => {
        res.setHeader("content-type", "text/plain");
        res.end("ok");
      },
      createLogger("silent"),
      { headersMs: 400, requestMs: 800, keepAliveMs: 300 },
    );
    port = await server.listen(0, "127.0.0.1");
  });
  afterAll(() => server.close(1000));

  it("closes a connection that never sends anything", async () => {
    const { data, closedAfterMs } = await rawExchange(port, [5000]);
    expect(data).toBe("");
    expect(closedAfterMs).toBeLessThan(2000);
  });

  it("answers headers that trickle in too slowly with a problem+json 408", async () => {
    const { data, closedAfterMs } = await rawExchange(port, [
      "GET /x HTTP/1.1\r\n",
      300,
      "Host: a\r\n",
      300,
      "X-A: b\r\n",
      3000,
    ]);
    expect(closedAfterMs).toBeLessThan(3000);
    expect(data).toMatch(/^HTTP\/1.1 408/);
    expect(data).toContain("application/problem+json");
  });

  it("closes an idle keep-alive connection", async () => {
    const { data, closedAfterMs } = await rawExchange(port, ["GET /x HTTP/1.1\r\nHost: a\r\n\r\n", 5000]);
    expect(data).toMatch(/^HTTP\/1.1 200/);
    expect(closedAfterMs).toBeLessThan(2500);
  });

  it("answers malformed HTTP and oversized headers with problem+json", async () => {
    const bad = await rawExchange(port, ["NOT HTTP AT ALL\r\n\r\n", 500]);
    expect(bad.data).toMatch(/^HTTP\/1.1 400/);
    expect(bad.data).toContain('"code":"bad_request"');
    const big = await rawExchange(port, [`GET /x HTTP/1.1\r\nHost: a\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 500]);
    expect(big.data).toMatch(/^HTTP\/1.1 431/);
    expect(big.data).toContain('"code":"headers_too_large"');
  });
});

describe("REST security headers", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" });
  });
  afterAll(() => t.stop());

  it.each(["/healthz", "/api/v1/public/leads/x/", "/nope"])("are sent on %s", async (path) => {
    const res = await t.call("GET", path);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-powered-by")).toBeNull();
  });
});
