/**
 * The one-port listener itself: slow clients are cut off and their descriptors freed, Node-level
 * rejections are problem+json, and every answer, REST or Connect, carries the security headers.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
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

describe("security headers", () => {
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

  it("are sent on Connect replies over HTTP/1.1 too: no-store, nosniff and HSTS", async () => {
    const res = await fetch(`${t.url}/leadprovider.v1.CommonService/ListStates`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${await t.token()}` },
      body: "{}",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("strict-transport-security")).toContain("max-age=");
  });
});

describe("connections the server gives up on free their descriptors", () => {
  /**
   * This process's descriptors that are the server's ends of connections to `port` (sockets
   * whose /proc/net/tcp entry has that local port and is not the listener), so descriptors that
   * other code in the process opens or closes meanwhile are not counted.
   */
  const serverEnds = (port: number): number => {
    const inodes = new Set<string>();
    for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols.length < 10) continue;
        const localPort = Number.parseInt(cols[1]?.split(":")[1] ?? "", 16);
        if (localPort === port && cols[3] !== "0A") inodes.add(cols[9] as string);
      }
    }
    let n = 0;
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
        if (inode !== undefined && inodes.has(inode)) n += 1;
      } catch {
        // closed between the listing and the read
      }
    }
    return n;
  };
  const settle = () => new Promise((r) => setTimeout(r, 100));

  it("destroys idle HTTP/2 sessions and dribbling HTTP/1.1 clients within a bounded time", async () => {
    const server = createOnePortServer(
      (_req, res) => {
        res.end("ok");
      },
      createLogger("silent"),
      { headersMs: 600, requestMs: 1200, keepAliveMs: 150 },
    );
    const port = await server.listen(0, "127.0.0.1");
    const clients: net.Socket[] = [];
    try {
      await settle();
      expect(serverEnds(port)).toBe(0);
      const N = 40;
      const connect = () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect(port, "127.0.0.1", () => resolve(s));
          s.on("error", () => {});
          clients.push(s);
        });
      // Half the clients open an HTTP/2 session and go idle; half dribble an HTTP/1.1 request.
      for (let i = 0; i < N / 2; i++) {
        const s = await connect();
        // Preface, then an empty SETTINGS frame; the client never reads, answers or closes.
        s.write(
          Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]),
        );
      }
      for (let i = 0; i < N / 2; i++) {
        const s = await connect();
        s.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
        const timer = setInterval(() => s.writable && s.write("a"), 200);
        s.once("close", () => clearInterval(timer));
      }
      await settle();
      expect(serverEnds(port)).toBe(N); // the server holds every connection
      // Idle HTTP/2 sessions get GOAWAY at 12 × keep-alive (1.8 s) and are destroyed one keep-alive
      // later; dribblers are answered 408 at the 1.2 s request timeout (checked every 150 ms).
      const deadline = Date.now() + 5000;
      while (serverEnds(port) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(serverEnds(port)).toBe(0); // the server has let go of every one
    } finally {
      for (const s of clients) s.destroy();
      await server.close(100);
    }
  });
});
