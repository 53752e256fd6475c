/**
 * The outgoing webhook edge on its own (src/webhooks/webhook.http.ts): the body, the Standard
 * Webhooks signature checked with node:crypto, and what each answer or failure of a real local
 * receiver is recorded as. `make mutation` runs it.
 */
import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Lead } from "../../src/leads/lead.ts";
import { NOT_PUBLIC } from "../../src/providers/webhook-url.ts";
import {
  createWebhookTransport,
  eventBody,
  MAX_RESPONSE_BYTES,
  signatures,
  USER_AGENT,
} from "../../src/webhooks/webhook.http.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OLD = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";
const hmac = (secret: string, id: string, ts: string, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
    .update(`${id}.${ts}.${body}`)
    .digest("base64")}`;

const at = new Date("2026-11-25T10:00:00.000Z");

/**
 * A self-signed certificate for a local TLS receiver (a test fixture made with openssl for this
 * test, not a secret): a webhook endpoint whose certificate nobody vouches for is refused.
 */
const SELF_SIGNED = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQglwQSLElniZLOva/J
oZ2Bru6GrBteWHH3KjDoYxuFyq6hRANCAAQ3KPOmUlE1MULA5SlSc/EjcslQU8G5
qbX79Ma5tdGgxkv/HWcXyJWOEq1lc7SxjMDk3xQZfSHVTciGgZaQolkN
-----END PRIVATE KEY-----`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBfTCCASOgAwIBAgIUYATanWmFncywrpFsC768wQf+Mx4wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MB4XDTI2MTEyNTIwNDQyOFoXDTM2MTEyMjIw
NDQyOFowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAENyjzplJRNTFCwOUpUnPxI3LJUFPBuam1+/TGubXRoMZL/x1nF8iVjhKt
ZXO0sYzA5N8UGX0h1U3IhoGWkKJZDaNTMFEwHQYDVR0OBBYEFFCCB/PpsduZYn4C
9RdWky5cIaEbMB8GA1UdIwQYMBaAFFCCB/PpsduZYn4C9RdWky5cIaEbMA8GA1Ud
EwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIga63HAEtZeqcIvZmurNz2/5K9
LQo5ob7y5GFWRTYqnuYCIQDIYwwvbGlJXF6vOsDc6Wb4c/Jh+YutXdnW4xHqUDRF
wA==
-----END CERTIFICATE-----`,
};
const lead = {
  id: 42,
  providerId: 7,
  livemode: false,
  orderNumber: "LP-7K3M9Q2X4D",
  externalId: "crm-1",
  state: "LEAD",
  leadStatus: "LEAD",
  firstName: "Jane",
  lastName: "Doe",
  email: "jane@example.com",
  phoneNumber: "+1 310 555 0100",
  companyName: null,
  noteFromShipper: null,
  estimatedShipDate: "2026-12-15",
  overseasType: "DOMESTIC",
  shipVia: "OPEN",
  origin: { zip: "90210", city: "Beverly Hills", stateCode: "CA", stateId: 5 },
  destination: null,
  vehicles: [],
  createdAt: at,
  updatedAt: at,
  stateChangedAt: at,
  history: [],
} as unknown as Lead;

describe("the body and the signature", () => {
  it("is Standard Webhooks' {type, timestamp, data}, with livemode at the top of every event", () => {
    expect(JSON.parse(eventBody({ id: "evt_1", type: "webhook.test", occurredAt: at, livemode: false }))).toEqual({
      type: "webhook.test",
      timestamp: "2026-11-25T10:00:00.000Z",
      livemode: false,
      data: {},
    });
    const body = JSON.parse(eventBody({ id: "evt_2", type: "lead.created", occurredAt: at, lead, livemode: false }));
    expect(Object.keys(body)).toEqual(["type", "timestamp", "livemode", "data"]);
    expect(body).toMatchObject({
      type: "lead.created",
      livemode: false,
      data: { lead: { id: 42, order_number: "LP-7K3M9Q2X4D" } },
    });
  });

  it("signs id.timestamp.body with each secret, space-separated", () => {
    const ts = String(Math.floor(at.getTime() / 1000));
    expect(signatures([SECRET], "msg_p5jXN8AQM9LWM0D4loKWxJek", new Date(1614265330_000), '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
    expect(signatures([SECRET, OLD], "evt_x", at, "{}")).toBe(
      `${hmac(SECRET, "evt_x", ts, "{}")} ${hmac(OLD, "evt_x", ts, "{}")}`,
    );
    expect(signatures([], "evt_x", at, "{}")).toBe("");
  });
});

describe("sending to a real receiver", () => {
  let server: Server;
  let base: string;
  let handle: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  const seen: { headers: IncomingMessage["headers"]; body: string; method?: string }[] = [];
  let transport: ReturnType<typeof createWebhookTransport>;
  beforeEach(() => {
    transport = createWebhookTransport({ timeoutMs: 400, allowPrivateTargets: true, production: false });
  });
  afterEach(() => transport.close());
  const event = { id: "evt_0123", type: "lead.created", occurredAt: at, lead, livemode: false };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        seen.push({ headers: req.headers, body, method: req.method });
        handle(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
  });

  it("POSTs the signed body with its headers and reports a 2xx as delivered", async () => {
    handle = (_q, _b, res) => res.writeHead(204).end();
    seen.length = 0;
    const outcome = await transport.send(`${base}/hook`, [SECRET, OLD], event);
    expect(outcome).toMatchObject({ statusCode: 204, error: null });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(0);
    expect(outcome.latencyMs).toBeLessThan(5000);
    const r = seen[0] as (typeof seen)[number];
    expect(r.method).toBe("POST");
    expect(r.body).toBe(eventBody(event));
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["user-agent"]).toBe(USER_AGENT);
    expect(r.headers["content-length"]).toBe(String(Buffer.byteLength(r.body)));
    expect(r.headers["webhook-id"]).toBe("evt_0123");
    const ts = r.headers["webhook-timestamp"] as string;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5); // the send time, not the event's
    expect(r.headers["webhook-signature"]).toBe(
      `${hmac(SECRET, "evt_0123", ts, r.body)} ${hmac(OLD, "evt_0123", ts, r.body)}`,
    );
  });

  it("records other answers with their status, and follows no redirect", async () => {
    for (const [status, error] of [
      [200, null],
      [300, "the endpoint answered 300; redirects are not followed"],
      [299, null],
      [301, "the endpoint answered 301; redirects are not followed"],
      [302, "the endpoint answered 302; redirects are not followed"],
      [399, "the endpoint answered 399; redirects are not followed"],
      [400, "the endpoint answered 400"],
      [410, "the endpoint answered 410"],
      [500, "the endpoint answered 500"],
      [199, "the endpoint answered 199"],
    ] as const) {
      handle = (_q, _b, res) =>
        status === 199 ? res.writeHead(500).end() : res.writeHead(status, { location: `${base}/elsewhere` }).end();
      seen.length = 0;
      const outcome = await transport.send(`${base}/hook`, [SECRET], event);
      if (status === 199) continue; // 1xx cannot be sent as a final answer; covered by 500
      expect(outcome, String(status)).toMatchObject({ statusCode: status, error });
      expect(seen.map((s) => s.headers.host)).toHaveLength(1); // the redirect was not followed
    }
  });

  it("cuts off a receiver that does not answer in time, and one that sends too much", async () => {
    handle = () => undefined; // never answers
    const started = Date.now();
    const slow = await transport.send(`${base}/hook`, [SECRET], event);
    expect(slow).toMatchObject({ statusCode: null, error: "no answer within 400 ms" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(2000);
    handle = (_q, _b, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(MAX_RESPONSE_BYTES + 1024));
      // …and keeps the answer open: only the cap ends it.
    };
    const big = await transport.send(`${base}/hook`, [SECRET], event);
    expect(big.statusCode).toBe(200);
    expect(MAX_RESPONSE_BYTES).toBe(64 * 1024);
  });

  it("refuses to send without a secret or to a URL the policy refuses, and reports a connection failure", async () => {
    handle = (_q, _b, res) => res.writeHead(204).end();
    seen.length = 0;
    expect(await transport.send(`${base}/hook`, [], event)).toMatchObject({
      statusCode: null,
      error: "the endpoint has no signing secret",
    });
    expect(await transport.send("ftp://example.com/", [SECRET], event)).toMatchObject({
      error: "webhook_url must be an http or https URL",
    });
    expect(seen).toEqual([]);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await transport.send(`http://127.0.0.1:${port}/hook`, [SECRET], event)).toMatchObject({
      statusCode: null,
      error: "could not connect to the endpoint (ECONNREFUSED)",
    });
    expect(await transport.send("http://no-such-host.invalid/hook", [SECRET], event)).toMatchObject({
      error: NOT_PUBLIC,
    });
    // https goes through the https client (nothing listens: refused, not a crash).
    expect(await transport.send(`https://127.0.0.1:${port}/hook`, [SECRET], event)).toMatchObject({
      statusCode: null,
      error: "could not connect to the endpoint (ECONNREFUSED)",
    });
  });

  it("refuses a receiver whose TLS certificate nobody vouches for, with the TLS reason", async () => {
    const tls = createHttpsServer(SELF_SIGNED, (_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => tls.listen(0, "127.0.0.1", () => r()));
    try {
      const outcome = await transport.send(
        `https://127.0.0.1:${(tls.address() as AddressInfo).port}/hook`,
        [SECRET],
        event,
      );
      expect(outcome.statusCode).toBeNull();
      expect(outcome.error).toMatch(/^self-signed certificate/); // the TLS reason itself, not "could not connect"
    } finally {
      tls.close();
    }
  });

  it("closes the connection of an attempt that timed out", async () => {
    let closedAt = 0;
    handle = (req) => {
      req.socket.once("close", () => {
        closedAt = Date.now();
      });
    };
    const outcome = await transport.send(`${base}/hook`, [SECRET], event);
    const answeredAt = Date.now();
    expect(outcome.error).toBe("no answer within 400 ms");
    await expect.poll(() => closedAt, { timeout: 1000 }).toBeGreaterThan(0);
    expect(closedAt - answeredAt).toBeLessThan(500);
  });

  it("under production's rules refuses private targets before connecting, and http", async () => {
    const strict = createWebhookTransport({ timeoutMs: 400, allowPrivateTargets: false, production: true });
    try {
      seen.length = 0;
      expect(await strict.send(`${base}/hook`, [SECRET], event)).toMatchObject({ error: "webhook_url must use https" });
      expect(await strict.send("https://127.0.0.1/hook", [SECRET], event)).toMatchObject({ error: NOT_PUBLIC });
      const portless = createWebhookTransport({ timeoutMs: 400, allowPrivateTargets: false, production: false });
      expect(await portless.send(`${base}/hook`, [SECRET], event)).toMatchObject({ error: NOT_PUBLIC });
      // Host names go through the DNS lookup the filter calls: inside, or not resolving, read the same.
      for (const host of [`localhost:${new URL(base).port}`, "no-such-host.invalid"]) {
        expect(await portless.send(`http://${host}/hook`, [SECRET], event), host).toMatchObject({
          statusCode: null,
          error: NOT_PUBLIC,
        });
      }
      // IPv4-compatible IPv6, which the connection filter alone would let through.
      const port = new URL(base).port;
      for (const host of ["[::7f00:1]", "[::a9fe:a9fe]", "[64:ff9b::7f00:1]"]) {
        expect(await portless.send(`http://${host}:${port}/hook`, [SECRET], event), host).toMatchObject({
          statusCode: null,
          error: NOT_PUBLIC,
        });
      }
      portless.close();
      expect(seen).toEqual([]);
    } finally {
      strict.close();
    }
  });
});
