/**
 * Behaviours the README and docs/ promise that no other test holds them to, each as a user or an
 * operator would see it: a dead worker replaced, a hanging database, a Redis outage, CORS, the JWT
 * rules, the retry jitter, WEBHOOK_CONCURRENCY=0, the shutdown cut-off, gRPC's 64 KiB cap and the
 * RateLimit header's choice of window.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import net from "node:net";
import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { createLogger } from "../src/logger.ts";
import { nextAttemptDelayMs } from "../src/webhooks/webhook.ts";
import { type Json, leadBody, minuteClock, startTestApp } from "./helpers/app.ts";
import { bearer, connectClient, PROTOCOLS } from "./helpers/grpc.ts";
import { createProviderKey, SECRETS, startService, waitFor } from "./helpers/processes.ts";
import { startProxy } from "./helpers/proxy.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { startServiceProcess } from "./helpers/service-process.ts";
import { START_MS, tail } from "./helpers/timing.ts";

const PG = { name: "pglite" } as const;
const LEADS = "/api/v1/public/leads/";
const HAVE_PG = process.env.TEST_DATABASE_URL !== undefined;
const HAVE_REDIS = process.env.REDIS_URL !== undefined;

const logSink = (lines: Json[]) =>
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Json);
      done();
    },
  });

describe.runIf(HAVE_PG && HAVE_REDIS)("WEB_CONCURRENCY: a dead worker", () => {
  it("is replaced, and both workers serve again", async () => {
    const s = await startServiceProcess({
      WEB_CONCURRENCY: "2",
      REDIS_URL: process.env.REDIS_URL as string,
      REDIS_NAMESPACE: `replace-${process.pid}`,
    });
    try {
      const pids = () =>
        new Set(
          s
            .output()
            .split("\n")
            .filter((l) => l.includes('"msg":"lead provider api listening"'))
            .map((l) => (JSON.parse(l) as { pid: number }).pid),
        );
      const pending = () =>
        `workers listening: ${[...pids()].join(", ") || "none"}; the output ends:\n${tail(s.output())}`;
      await waitFor(async () => pids().size === 2, START_MS, "both workers to listen", pending);
      const first = [...pids()];
      process.kill(first[0] as number, "SIGKILL");
      await waitFor(async () => pids().size === 3, START_MS, "a replacement worker to listen", pending);
      expect(s.output()).toContain('"msg":"worker died"');
      // Fresh connections reach both live workers: the survivor and the replacement.
      const served = new Set<number>();
      for (let i = 0; i < 20; i++) {
        const r = await fetch(`${s.url}/healthz`, { headers: { connection: "close" }, keepalive: false });
        expect(r.status).toBe(200);
      }
      for (const line of s.output().split("\n")) {
        if (line.includes('"msg":"request"') && line.includes('"route":"/healthz"')) {
          served.add((JSON.parse(line) as { pid: number }).pid);
        }
      }
      expect(served.has(first[0] as number)).toBe(false);
      expect(served.size).toBe(2);
    } finally {
      await s.stop();
    }
  }, 270_000);
});

describe.runIf(HAVE_PG)("a database that hangs rather than refuses", () => {
  it("answers 503 with Retry-After within DATABASE_TIMEOUT_MS + 1 s, and recovers", async () => {
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    const proxy = await startProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const t = await startTestApp({ name: "postgres" }, {}, {});
    // A second app on the same database, reached through the proxy.
    const through = new URL(t.app.config.databaseUrl as string);
    through.hostname = "127.0.0.1";
    through.port = String(proxy.port);
    const hanging = await startTestApp(PG, { DATABASE_URL: through.toString(), DATABASE_TIMEOUT_MS: "1000" });
    try {
      const { key } = await hanging.provider();
      expect((await hanging.call("POST", LEADS, { auth: key, body: leadBody() })).status).toBe(201);
      proxy.hang();
      proxy.cutAll(); // the pool's connections are gone; new ones connect and hear nothing
      const started = Date.now();
      const res = await hanging.call("POST", LEADS, { auth: key, body: leadBody() });
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("5");
      expect(await res.json()).toMatchObject({ code: "service_unavailable" });
      expect(took).toBeLessThan(1000 + 1000 + 500);
      proxy.pass();
      await waitFor(
        async () => (await hanging.call("POST", LEADS, { auth: key, body: leadBody() })).status === 201,
        START_MS,
        "the service to use the database again",
      );
    } finally {
      await hanging.stop();
      await t.stop();
      await proxy.close();
    }
  }, 270_000);
});

describe.runIf(HAVE_REDIS)("a Redis outage", () => {
  it("admits requests, logs once a minute, counts rate_limit_fail_open_total and shows redis_up 0", async () => {
    const redis = new URL(process.env.REDIS_URL as string);
    const proxy = await startProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const lines: Json[] = [];
    const t = await startTestApp(
      PG,
      {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        REDIS_NAMESPACE: `outage-${process.pid}`,
        METRICS_TOKEN: "metrics-token-0123456789",
      },
      { logger: createLogger("warn", logSink(lines)), now: minuteClock() },
    );
    try {
      const { key } = await t.provider(undefined, { rate_limit_per_minute: 2 });
      const metric = async (name: string) => {
        const text = await (
          await t.call("GET", "/metrics", { headers: { authorization: "Bearer metrics-token-0123456789" } })
        ).text();
        return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
      };
      expect(await metric("lead_provider_redis_up")).toBe(1);
      await proxy.close(); // Redis is gone
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await t.call("GET", `${LEADS}none/`, { auth: key })).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404]); // over the limit of 2, admitted: fail open
      expect(await metric("lead_provider_redis_up")).toBe(0);
      expect(await metric("lead_provider_rate_limit_fail_open_total")).toBeGreaterThanOrEqual(3);
      const warnings = lines.filter(
        (l) => l.msg === "rate limiter store unreachable; admitting requests without limits",
      );
      expect(warnings).toHaveLength(1); // once a minute, not once a request
      const ready = (await (await t.call("GET", "/readyz")).json()) as Json;
      expect(ready.checks.redis.ok).toBe(false);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("CORS", () => {
  it("sends no Access-Control-* header, and answers a preflight plainly at no cost", async () => {
    const t = await startTestApp(PG, { AUTH_FAILURES_PER_MINUTE: "2" });
    try {
      const { key } = await t.provider();
      const origin = { origin: "https://evil.example" };
      const answers = [
        await t.call("GET", `${LEADS}none/`, { auth: key, headers: origin }),
        await t.call("POST", LEADS, { auth: key, body: leadBody(), headers: origin }),
        await t.call("GET", "/api/v1/lead_providers/", { auth: await t.token(), headers: origin }),
      ];
      for (let i = 0; i < 5; i++) {
        answers.push(
          await t.call("OPTIONS", LEADS, {
            headers: {
              ...origin,
              "access-control-request-method": "POST",
              "access-control-request-headers": "authorization",
            },
          }),
        );
      }
      for (const res of answers) {
        expect([...res.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
        expect(res.status).toBeLessThan(500);
      }
      // Five preflights later the address is not limited: they cost nothing.
      expect((await t.call("GET", `${LEADS}none/`, { auth: key })).status).toBe(404);
    } finally {
      await t.stop();
    }
  }, 150_000);
});

describe("JWT rules", () => {
  const secret = () => new TextEncoder().encode(SECRETS.JWT_SECRET);
  const sign = (claims: Record<string, unknown>, edit: (j: SignJWT) => SignJWT = (j) => j) =>
    edit(new SignJWT(claims).setProtectedHeader({ alg: "HS256" })).sign(secret());
  const now = () => Math.floor(Date.now() / 1000);

  it("requires sub, allows 30 s of clock skew, and reads the admin claim configured", async () => {
    const t = await startTestApp(PG, {
      JWT_SECRET: SECRETS.JWT_SECRET,
      JWT_ADMIN_CLAIM: "role",
      JWT_ADMIN_VALUE: "ops",
    });
    try {
      const list = (token: string) => t.call("GET", "/api/v1/lead_providers/", { auth: token });
      const base = (j: SignJWT) => j.setSubject("ops-1").setIssuedAt().setExpirationTime("5m");
      expect((await list(await sign({ role: "ops" }, base))).status).toBe(200);
      // sub is required.
      const noSub = await sign({ role: "ops" }, (j) => j.setIssuedAt().setExpirationTime("5m"));
      const refused = await list(noSub);
      expect(refused.status).toBe(401);
      // The configured claim decides; the default `position` no longer does.
      expect((await list(await sign({ position: "ADMIN" }, base))).status).toBe(403);
      expect((await list(await sign({ role: "viewer" }, base))).status).toBe(403);
      // 30 s of tolerance on exp and nbf, not more.
      const expired = (ago: number) =>
        sign({ role: "ops" }, (j) =>
          j
            .setSubject("ops-1")
            .setIssuedAt(now() - 120)
            .setExpirationTime(now() - ago),
        );
      expect((await list(await expired(20))).status).toBe(200);
      expect((await list(await expired(45))).status).toBe(401);
      const early = (ahead: number) =>
        sign({ role: "ops" }, (j) =>
          j
            .setSubject("ops-1")
            .setIssuedAt()
            .setNotBefore(now() + ahead)
            .setExpirationTime("5m"),
        );
      expect((await list(await early(20))).status).toBe(200);
      expect((await list(await early(45))).status).toBe(401);
    } finally {
      await t.stop();
    }
  }, 150_000);

  it("accepts an ES256 token from a JWKS URL", async () => {
    const pair = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "ec1", alg: "ES256", use: "sig" };
    const server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/jwks.json`;
    const t = await startTestApp(PG, { JWT_JWKS_URL: url });
    try {
      const es = await new SignJWT({ position: "ADMIN" })
        .setProtectedHeader({ alg: "ES256", kid: "ec1" })
        .setSubject("svc")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(pair.privateKey);
      expect((await t.call("GET", "/api/v1/lead_providers/", { auth: es })).status).toBe(200);
      const other = await generateKeyPair("ES256");
      const forged = await new SignJWT({ position: "ADMIN" })
        .setProtectedHeader({ alg: "ES256", kid: "ec1" })
        .setSubject("svc")
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(other.privateKey);
      expect((await t.call("GET", "/api/v1/lead_providers/", { auth: forged })).status).toBe(401);
    } finally {
      await t.stop();
      server.close();
    }
  }, 150_000);
});

describe("the retry schedule", () => {
  it("jitters each wait by ±20 %, so receivers back from an outage are not hit in lockstep", () => {
    const schedule = [5000, 300_000];
    expect(nextAttemptDelayMs(1, schedule, () => 0)).toBe(4000);
    expect(nextAttemptDelayMs(1, schedule, () => 0.5)).toBe(5000);
    expect(nextAttemptDelayMs(1, schedule, () => 0.999999)).toBe(6000);
    expect(nextAttemptDelayMs(2, schedule, () => 0)).toBe(240_000);
    expect(nextAttemptDelayMs(3, schedule)).toBeNull(); // the schedule is spent
    const waits = Array.from({ length: 200 }, () => nextAttemptDelayMs(1, schedule) as number);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(4000);
    expect(Math.max(...waits)).toBeLessThanOrEqual(6000);
    expect(new Set(waits).size).toBeGreaterThan(50);
  });
});

describe("WEBHOOK_CONCURRENCY=0", () => {
  it("sends nothing from that instance; the deliveries wait for one that sends", async () => {
    const receiver = await startReceiver();
    const t = await startTestApp(HAVE_PG ? { name: "postgres" } : PG, { WEBHOOK_CONCURRENCY: "0" });
    try {
      const p = await t.provider(undefined, { webhook_url: receiver.url });
      expect((await t.call("POST", LEADS, { auth: p.key, body: leadBody() })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.received).toEqual([]);
      const list = (await (
        await t.call("GET", `/api/v1/lead_providers/${p.id}/webhook_deliveries/`, { auth: await t.token() })
      ).json()) as Json;
      expect(list.results).toHaveLength(1);
      expect(list.results[0]).toMatchObject({ state: "pending", attempts: 0 });
      if (HAVE_PG) {
        // Another instance on the same database, with workers, sends it.
        const sender = await startTestApp(PG, { DATABASE_URL: t.app.config.databaseUrl as string });
        try {
          await receiver.waitFor((all) => all.length === 1, START_MS, "the other instance to send it");
        } finally {
          await sender.stop();
        }
      }
    } finally {
      await t.stop();
      await receiver.close();
    }
  }, 270_000);
});

describe("SHUTDOWN_TIMEOUT_MS", () => {
  it("cuts off a request that does not finish, and the process still exits in time", async () => {
    const service = await startService({ DATA_DIR: "memory://", SHUTDOWN_TIMEOUT_MS: "1000" });
    const { key } = await createProviderKey(service.url);
    // A request whose body never finishes arriving.
    const socket = net.connect(service.port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      `POST ${LEADS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"ext`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const closed = once(socket, "close");
    const signalled = Date.now();
    (service.child as ChildProcess).kill("SIGTERM");
    const code = await service.exited;
    const took = Date.now() - signalled;
    expect(code).toBe(0);
    expect(took).toBeGreaterThanOrEqual(900); // it waited for the request…
    expect(took).toBeLessThan(1000 + 3000); // …and no longer than the cut-off allows
    await closed; // the unfinished request's connection was closed, not left open
  }, 150_000);
});

describe("gRPC messages over 64 KiB", () => {
  it.each(PROTOCOLS)(
    "are refused with RESOURCE_EXHAUSTED over %s, never INTERNAL",
    async (protocol) => {
      const t = await startTestApp(PG);
      try {
        const { key } = await t.provider();
        const body = leadBody() as Json;
        const big = {
          externalId: body.external_id,
          firstName: "Jane",
          lastName: "Doe",
          email: "jane@example.com",
          phoneNumber: "+1 310 555 0100",
          originZip: "90210",
          noteFromShipper: "x".repeat(70 * 1024),
        };
        const err = await connectClient(PublicLeadService, t.port, protocol)
          .createLead(big as never, bearer(key))
          .then(
            () => undefined,
            (e: unknown) => ConnectError.from(e),
          );
        expect(err?.code).toBe(Code.ResourceExhausted);
        // Nothing was stored.
        expect((await t.call("GET", `${LEADS}${body.external_id}/`, { auth: key })).status).toBe(404);
      } finally {
        await t.stop();
      }
    },
    150_000,
  );
});

describe("the RateLimit header", () => {
  it("reports the day window when it is the closer to running out", async () => {
    const t = await startTestApp(PG, {}, { now: minuteClock() });
    try {
      const { key } = await t.provider(undefined, { rate_limit_per_minute: 100, rate_limit_per_day: 3 });
      const first = await t.call("GET", `${LEADS}none/`, { auth: key });
      expect(first.headers.get("ratelimit-policy")).toBe('"minute";q=100;w=60, "day";q=3;w=86400');
      expect(first.headers.get("ratelimit")).toMatch(/^"day";r=2;t=\d+$/);
      const roomy = await startTestApp(PG, {}, { now: minuteClock() });
      try {
        const p = await roomy.provider(undefined, { rate_limit_per_minute: 5, rate_limit_per_day: 1000 });
        const res = await roomy.call("GET", `${LEADS}none/`, { auth: p.key });
        expect(res.headers.get("ratelimit")).toMatch(/^"minute";r=4;t=\d+$/);
      } finally {
        await roomy.stop();
      }
    } finally {
      await t.stop();
    }
  }, 270_000);
});
