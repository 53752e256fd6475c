/**
 * The request's Host (HTTP/2: :authority) against a real server, over raw sockets and a raw
 * HTTP/2 session (fetch and the Connect clients write their own): anything but a plain
 * `host[:port]` is refused at the edge with 400 invalid_host, so a portal invite link (built from
 * the Host when PUBLIC_BASE_URL is unset, in development) can never open another site. Pagination
 * links are never built from the Host: relative, or absolute under PUBLIC_BASE_URL.
 */
import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { rawHttp } from "./helpers/raw-http.ts";

/** Sends one HTTP/1.1 request as raw bytes; resolves with the status, headers and body. */
function rawRequest(
  port: number,
  lines: { method: string; path: string; host: string | null; headers?: string[]; body?: string },
): Promise<{ status: number; headers: string; body: string }> {
  const body = lines.body ?? "";
  const head = [
    `${lines.method} ${lines.path} HTTP/1.1`,
    ...(lines.host === null ? [] : [`Host: ${lines.host}`]),
    ...(lines.headers ?? []),
    ...(body === "" ? [] : ["Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`]),
    "Connection: close",
  ];
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(`${head.join("\r\n")}\r\n\r\n${body}`));
    let answer = "";
    socket.on("data", (d) => {
      answer += String(d);
    });
    socket.on("end", () => {
      const [top = "", rest = ""] = answer.split(/\r\n\r\n(.*)/s);
      resolve({ status: Number(top.split(" ")[1]), headers: top, body: rest });
    });
    socket.on("error", reject);
  });
}

/** One HTTP/2 request with the given :authority; resolves with the status and body. */
function h2Request(
  port: number,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ...headers });
    let status = 0;
    let contentType = "";
    let text = "";
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      contentType = String(h["content-type"] ?? "");
    });
    stream.on("data", (d) => {
      text += String(d);
    });
    stream.on("end", () => {
      session.close();
      resolve({ status, contentType, body: text });
    });
    // Node's HTTP/2 (nghttp2) itself resets a stream whose :authority carries user info or a path.
    stream.on("error", (err: NodeJS.ErrnoException) => {
      session.close();
      resolve({ status: 0, contentType: "", body: err.message });
    });
    stream.end(body);
  });
}

/** GET of the provider list, page size 1, with a hostile Host header, closing the connection after. */
const hostileListRequest = (token: string) =>
  `GET /api/v1/lead_providers/?page_size=1 HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;

const HOSTILE = ["real:8080@evil.example", "evil.example/x", "a b", "", "evil.example:99999", "[::1", "-evil.example"];

describe.each(BACKENDS)("the Host header ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let provider: { id: number; key: string };
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
    provider = await t.provider();
  });
  afterAll(() => t?.stop());

  const listPath = "/api/v1/lead_providers/?page_size=1";

  it.each(HOSTILE)("refuses Host %j with 400 invalid_host naming Host, before anything reads it", async (host) => {
    const res = await rawRequest(t.port, {
      method: "GET",
      path: listPath,
      host,
      headers: [`Authorization: Bearer ${admin}`],
    });
    expect(res.status, res.body).toBe(400);
    expect(res.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(res.headers).toMatch(/x-request-id: \S+/i);
    const problem = JSON.parse(res.body) as Json;
    expect(problem).toMatchObject({
      status: 400,
      code: "invalid_host",
      type: "urn:lead-provider:problem:invalid_host",
    });
    expect(problem.errors).toEqual([{ field: "Host", code: "invalid_host", message: problem.detail }]);
  });

  it.each([
    "localhost",
    "localhost:8080",
    "127.0.0.1",
    "api.example.com.",
    "lead_provider:8080",
    "[::1]:443",
    "[2001:db8::1]",
  ])("answers Host %j", async (host) => {
    const res = await rawRequest(t.port, {
      method: "GET",
      path: listPath,
      host,
      headers: [`Authorization: Bearer ${admin}`],
    });
    expect(res.status, res.body).toBe(200);
  });

  it("never builds an invite link from a Host with user info; a plain Host is the link's origin", async () => {
    const users = `/api/v1/lead_providers/${provider.id}/portal_users/`;
    const invite = (host: string, email: string) =>
      rawRequest(t.port, {
        method: "POST",
        path: users,
        host,
        headers: [`Authorization: Bearer ${admin}`],
        body: JSON.stringify({ email, name: "Dana Ruiz" }),
      });
    // `real:port@evil.example` would make http://real:port@evil.example/portal/#invite=…, which
    // opens evil.example with the invite token in its fragment.
    const hostile = await invite(`127.0.0.1:${t.port}@evil.example`, `hostile.${backend.name}@acme.example`);
    expect(hostile.status, hostile.body).toBe(400);
    expect((JSON.parse(hostile.body) as Json).code).toBe("invalid_host");
    expect(hostile.body).not.toContain("evil.example/portal");
    const listed = (await (await t.call("GET", users, { auth: admin })).json()) as Json;
    expect(listed.results.map((u: Json) => u.email)).not.toContain(`hostile.${backend.name}@acme.example`);

    const plain = await invite(`localhost:${t.port}`, `plain.${backend.name}@acme.example`);
    expect(plain.status, plain.body).toBe(201);
    expect((JSON.parse(plain.body) as Json).invite_url).toMatch(
      new RegExp(`^http://localhost:${t.port}/portal/#invite=[A-Za-z0-9_-]{43}$`),
    );
  });

  it("refuses the same over HTTP/2 (:authority) before Connect builds its URL from it", async () => {
    const users = `/api/v1/lead_providers/${provider.id}/portal_users/`;
    const headers = (authority: string) => ({
      ":path": "/leadprovider.v1.ProviderService/InvitePortalUser",
      ":authority": authority,
      "content-type": "application/json",
      authorization: `Bearer ${admin}`,
    });
    const body = (email: string) => JSON.stringify({ id: String(provider.id), email, name: "Dana Ruiz" });
    // What HTTP/2 itself lets through but is no plain host[:port]: refused by the service.
    for (const [i, authority] of ["evil.example:99999", "[::1", "-evil.example", "evil..example"].entries()) {
      const res = await h2Request(t.port, headers(authority), body(`h2.${i}.${backend.name}@acme.example`));
      expect(res.status, `${authority}: ${res.body}`).toBe(400);
      expect(res.contentType).toBe("application/problem+json");
      expect((JSON.parse(res.body) as Json).code).toBe("invalid_host");
    }
    // User info never makes an invite, whichever layer refuses it.
    const userInfo = await h2Request(t.port, headers("real:1@evil.example"), body(`h2.u.${backend.name}@acme.example`));
    expect([0, 400]).toContain(userInfo.status);
    const listed = (await (await t.call("GET", users, { auth: admin })).json()) as Json;
    expect(listed.results.map((u: Json) => u.email).filter((e: string) => e.startsWith("h2."))).toEqual([]);

    const plain = await h2Request(t.port, headers(`localhost:${t.port}`), body(`h2ok.${backend.name}@acme.example`));
    expect(plain.status, plain.body).toBe(200);
    expect((JSON.parse(plain.body) as Json).inviteUrl).toMatch(
      new RegExp(`^http://localhost:${t.port}/portal/#invite=`),
    );
  });

  it("never builds pagination links from the Host header", async () => {
    for (let i = 0; i < 3; i++) await t.provider();
    // Over a raw socket: fetch would replace the Host header, so evil.example would never arrive.
    const answer = await rawHttp(t.port, hostileListRequest(admin));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Json;
    expect(body.next).toMatch(/^\/api\/v1\/lead_providers\/\?/);
    expect(answer).not.toContain("evil.example");
  });
});

describe("pagination links under PUBLIC_BASE_URL", () => {
  it("builds absolute links under PUBLIC_BASE_URL, never from the Host header", async () => {
    const based = await startTestApp({ name: "pglite" }, { PUBLIC_BASE_URL: "https://api.example.com" });
    try {
      for (let i = 0; i < 2; i++) await based.provider();
      const answer = await rawHttp(based.port, hostileListRequest(await based.token()));
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Json;
      expect(body.next).toMatch(/^https:\/\/api\.example\.com\/api\/v1\/lead_providers\/\?/);
      expect(answer).not.toContain("evil.example");
    } finally {
      await based.stop();
    }
  }, 150_000);
});
