/**
 * The findings of the black-box security review, each reproduced as the attack was made. Every
 * test here failed on the code the review probed.
 */
import { createSecretKey } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import net from "node:net";
import { Writable } from "node:stream";
import { Code, type ConnectError } from "@connectrpc/connect";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { DEV_JWT_SECRET } from "../src/config.ts";
import { createLogger } from "../src/logger.ts";
import { createOnePortServer } from "../src/server.ts";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";
const MAX_INT64 = 2n ** 63n - 1n;

const rejection = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ConnectError;

/** Sends raw bytes and resolves with everything the server answered until it closed. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let answer = "";
    socket.on("data", (d) => {
      answer += String(d);
    });
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

/** GET of the provider list, page size 1, with a hostile Host header, closing the connection after. */
const hostileListRequest = (token: string) =>
  `GET ${P}?page_size=1 HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;

describe("1. the failed-authentication limit cannot lock out valid callers", () => {
  let t: TestApp;
  let key: string;
  const clock = minuteClock();
  beforeAll(async () => {
    t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "5" }, { now: clock });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  it("charges nothing for CORS preflights and requests without a credential", async () => {
    clock.nextMinute();
    for (let i = 0; i < 12; i++) {
      await t.call("OPTIONS", LEADS, {
        headers: { origin: "https://app.example", "access-control-request-method": "POST" },
      });
      expect((await t.call("GET", `${LEADS}x/`)).status).toBe(401);
    }
    expect((await t.call("GET", `${LEADS}x/`, { auth: key })).status).toBe(404);
    const bad = await t.call("GET", `${LEADS}x/`, { auth: `${key.slice(0, -2)}zz` });
    expect(bad.status).toBe(401); // the first failed guess of this address still gets its 401
  });

  it("refuses an address that guesses keys, but never a valid key or JWT from it", async () => {
    clock.nextMinute();
    const guess = () => t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess" });
    for (let i = 0; i < 6; i++) await guess();
    const [before, blocked, after] = [clock.secondsLeft(), await guess(), clock.secondsLeft()];
    expect(blocked.status).toBe(429);
    // The seconds to the end of the minute, as the injected clock read them while it answered.
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(after);
    expect(Number(blocked.headers.get("retry-after"))).toBeLessThanOrEqual(before);
    expect((await t.call("GET", `${LEADS}x/`, { auth: key })).status).toBe(404);
    expect((await t.call("GET", P, { auth: await t.token() })).status).toBe(200);
  });
});

describe("1. the client address behind a trusted proxy", () => {
  it("with TRUST_PROXY=1 limits the forwarded client, not the proxy everyone shares", async () => {
    const clock = minuteClock();
    const t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "3", TRUST_PROXY: "1" }, { now: clock });
    try {
      clock.nextMinute();
      const from = (ip: string) =>
        t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess", headers: { "x-forwarded-for": ip } });
      for (let i = 0; i < 4; i++) await from("203.0.113.5");
      expect((await from("203.0.113.5")).status).toBe(429);
      expect((await from("203.0.113.6")).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);

  it("without TRUST_PROXY ignores X-Forwarded-For, so a guesser cannot escape by spoofing it", async () => {
    const clock = minuteClock();
    const t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "3" }, { now: clock });
    try {
      clock.nextMinute();
      const from = (ip: string) =>
        t.call("GET", `${LEADS}x/`, { auth: "lp_live_guess", headers: { "x-forwarded-for": ip } });
      for (let i = 0; i < 4; i++) await from(`203.0.113.${i}`);
      expect((await from("198.51.100.1")).status).toBe(429);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("2–8. hostile input and protocol abuse", () => {
  let t: TestApp;
  let admin: string;
  let key: string;
  let providerId: number;
  const logs: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    t = await startTestApp(PG, {}, { logger: createLogger("info", sink), now: minuteClock() });
    admin = await t.token();
    ({ key, id: providerId } = await t.provider());
  });
  afterAll(() => t.stop());

  it("2. answers 400 invalid_content_encoding for a body that is not what Content-Encoding says", async () => {
    for (const encoding of ["gzip", "deflate", "br", "zstd"]) {
      for (const [path, auth] of [
        [LEADS, key],
        [`${P}create/`, admin],
        ["/nowhere", undefined],
      ] as const) {
        const res = await t.call("POST", path, {
          body: JSON.stringify(leadBody()),
          auth,
          headers: { "content-encoding": encoding },
        });
        const label = `${encoding} ${path}`;
        expect(res.status, label).toBe(400);
        expect(((await res.json()) as Json).code, label).toBe("invalid_content_encoding");
      }
    }
    const errors = logs.filter((l) => /"level":"(error|fatal|warn)"/.test(l));
    expect(errors).toEqual([]);
  });

  it("3. refuses hostile numbers and NUL in Management API paths and queries with 400 naming the parameter", async () => {
    const cases: [string, string][] = [
      [`${P}?page=99999999999999999999`, "page"],
      [`${P}?search=a%00b`, "search"],
      [`${P}9223372036854775808/`, "id"],
      [`${P}9007199254740993/`, "id"],
      [`${P}0x1/`, "id"],
      [`${P}1e0/`, "id"],
      [`${P}%201/`, "id"],
      [`${P}1.0/`, "id"],
      [`${P}-1/`, "id"],
    ];
    for (const [path, field] of cases) {
      const res = await t.call("GET", path, { auth: admin });
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as Json;
      expect(
        body.errors.map((e: Json) => e.field),
        path,
      ).toContain(field);
    }
    expect((await t.call("GET", `${P}${providerId}/`, { auth: admin })).status).toBe(200);
  });

  it("3. refuses the same over gRPC with INVALID_ARGUMENT, never INTERNAL", async () => {
    const providers = connectClient(ProviderService, t.port, "grpc");
    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const calls: [string, () => Promise<unknown>][] = [
      ["ListProviders search NUL", () => providers.listProviders({ search: "a\u0000b" }, bearer(admin))],
      ["ListProviders page", () => providers.listProviders({ page: 2 ** 31 - 1 }, bearer(admin))],
      ["GetProvider max int64", () => providers.getProvider({ id: MAX_INT64 }, bearer(admin))],
      ["GetProvider negative", () => providers.getProvider({ id: -1n }, bearer(admin))],
      ["FindLead max int64", () => workflow.findLead({ key: { case: "id", value: MAX_INT64 } }, bearer(admin))],
      [
        "FindLead order number NUL",
        () => workflow.findLead({ key: { case: "orderNumber", value: "LP\u0000" } }, bearer(admin)),
      ],
      ["TransitionLead max int64", () => workflow.transitionLead({ leadId: MAX_INT64, toState: 2 }, bearer(admin))],
    ];
    for (const [label, call] of calls) expect((await rejection(call())).code, label).toBe(Code.InvalidArgument);
  });

  it("4. refuses JWTs without exp, living too long, issued in the future, or with padded base64url", async () => {
    const secret = createSecretKey(Buffer.from(DEV_JWT_SECRET, "utf8"));
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: Json) =>
      new SignJWT({ position: "ADMIN", sub: "attacker", ...claims }).setProtectedHeader({ alg: "HS256" }).sign(secret);
    const good = await sign({ iat: now, exp: now + 3600 });
    expect((await t.call("GET", P, { auth: good })).status).toBe(200);
    for (const [label, token] of [
      ["no exp", await sign({ iat: now })],
      ["100 years", await sign({ iat: now, exp: now + 100 * 365 * 86400 })],
      ["iat a year ahead", await sign({ iat: now + 365 * 86400, exp: now + 365 * 86400 + 60 })],
      ["no iat, exp in 2 days", await sign({ exp: now + 2 * 86400 })],
      ["padded signature", `${good}=`],
    ] as const) {
      const res = await t.call("GET", P, { auth: token });
      expect(res.status, label).toBe(401);
    }
  });

  it("6. never builds pagination links from the Host header", async () => {
    for (let i = 0; i < 3; i++) await t.provider();
    // Over a raw socket: fetch would replace the Host header, so evil.example would never arrive.
    const answer = await raw(t.port, hostileListRequest(admin));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Json;
    expect(body.next).toMatch(/^\/api\/v1\/lead_providers\/\?/);
    expect(answer).not.toContain("evil.example");
  });

  it("6. builds absolute links under PUBLIC_BASE_URL, never from the Host header", async () => {
    const based = await startTestApp(PG, { PUBLIC_BASE_URL: "https://api.example.com" });
    try {
      for (let i = 0; i < 2; i++) await based.provider();
      const answer = await raw(based.port, hostileListRequest(await based.token()));
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Json;
      expect(body.next).toMatch(/^https:\/\/api\.example\.com\/api\/v1\/lead_providers\/\?/);
      expect(answer).not.toContain("evil.example");
    } finally {
      await based.stop();
    }
  }, 150_000);

  it("7. refuses the workflow service to a valid JWT without the lead-processing claim", async () => {
    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const agent = await t.token({ position: "AGENT" });
    const refused = await rejection(workflow.listLeads({ state: 1 }, bearer(agent)));
    expect(refused.code).toBe(Code.PermissionDenied);
    const moved = await rejection(workflow.transitionLead({ leadId: 1n, toState: 2 }, bearer(agent)));
    expect(moved.code).toBe(Code.PermissionDenied);
    await expect(workflow.listLeads({ state: 1 }, bearer(admin))).resolves.toBeDefined();
  });

  it("8. sends no-store, nosniff and HSTS on Connect replies over HTTP/1.1 too", async () => {
    const res = await fetch(`${t.url}/leadprovider.v1.CommonService/ListStates`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
      body: "{}",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("strict-transport-security")).toContain("max-age=");
  });

  it("8. gives the HTTP parser's own refusals an X-Request-Id", async () => {
    const answer = await raw(t.port, "GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
  });

  it("8. refuses a request with two Authorization headers or two Host headers", async () => {
    for (const [label, headers] of [
      ["authorization", `Authorization: Bearer ${key}\r\nAuthorization: Bearer lp_live_other\r\nHost: x\r\n`],
      ["host", `Authorization: Bearer ${key}\r\nHost: a.example\r\nHost: b.example\r\n`],
    ] as const) {
      const answer = await raw(t.port, `GET ${LEADS}x/ HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`);
      expect(answer, label).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer, label).toContain("duplicate_header");
    }
  });
});

describe("4. JWT lifetime is configurable", () => {
  it("accepts a 2-day token with JWT_MAX_LIFETIME_SECONDS=172800", async () => {
    const t = await startTestApp(PG, { JWT_MAX_LIFETIME_SECONDS: "172800" });
    try {
      const token = await t.token({}, { expiresIn: "47h" });
      expect((await t.call("GET", P, { auth: token })).status).toBe(200);
      expect((await t.call("GET", P, { auth: await t.token({}, { expiresIn: "49h" }) })).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("7. the lead-processing claim is configurable", () => {
  it("lets a token whose scope names the configured value use the workflow service", async () => {
    const t = await startTestApp(PG, { JWT_WORKFLOW_CLAIM: "scope", JWT_WORKFLOW_VALUE: "leads:process" });
    try {
      const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
      const processor = await t.token({ position: "SYSTEM", scope: "leads:read leads:process" });
      await expect(workflow.listLeads({ state: 1 }, bearer(processor))).resolves.toBeDefined();
      const admin = await t.token();
      expect((await rejection(workflow.listLeads({ state: 1 }, bearer(admin)))).code).toBe(Code.PermissionDenied);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("9. webhook_url in production", () => {
  it("refuses internal targets and credentials up front, accepts a public https URL", async () => {
    const t = await startTestApp(PG, {
      NODE_ENV: "production",
      JWT_SECRET: DEV_JWT_SECRET,
      API_KEY_SECRET: "production-like-api-key-secret-0123456789abcdef",
      PUBLIC_BASE_URL: "https://api.example.com",
    });
    try {
      const admin = await t.token();
      for (const url of [
        "https://169.254.169.254/latest/meta-data/",
        "https://[fd00:ec2::254]/",
        "https://127.0.0.1:5432/",
        "https://0x7f000001/",
        "https://10.0.0.8/hook",
        "https://[::ffff:127.0.0.1]/",
        "https://localhost/hook",
        "https://user:pass@hooks.example.com/",
        "http://hooks.example.com/plain-http",
      ]) {
        const res = await t.call("POST", `${P}create/`, {
          auth: admin,
          body: { name: `Hook ${url}`, webhook_url: url },
        });
        expect(res.status, url).toBe(400);
        expect(((await res.json()) as Json).errors[0], url).toMatchObject({
          field: "webhook_url",
          code: "invalid_url",
        });
      }
      const ok = await t.call("POST", `${P}create/`, {
        auth: admin,
        body: { name: "Public hook", webhook_url: "https://hooks.example.com/leads" },
      });
      expect(ok.status).toBe(201);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("5. connections the server gives up on free their descriptors", () => {
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
