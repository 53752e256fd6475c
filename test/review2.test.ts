/**
 * The second black-box review, each finding reproduced as it was made: every test here
 * failed on the code the review probed. Numbers are the items.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ApiKeyMode, ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { ConfigError, DEV_JWT_SECRET, loadConfig } from "../src/config.ts";
import { DEV_API_KEY_SECRET } from "../src/dev-secrets.ts";
import { NOT_PUBLIC } from "../src/providers/webhook-url.ts";
import { CONSOLE_DIR } from "../src/rest/console.ts";
import { createWebhookTransport } from "../src/webhooks/webhook.http.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { freePort, SECRETS, startService, waitFor } from "./helpers/processes.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { START_MS } from "./helpers/timing.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";
const PRODUCTION = {
  NODE_ENV: "production",
  JWT_SECRET: SECRETS.JWT_SECRET,
  API_KEY_SECRET: SECRETS.API_KEY_SECRET,
  PUBLIC_BASE_URL: "https://api.example.com",
};

const rejection = async (p: Promise<unknown>) =>
  (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ConnectError;

/** A CreateLead request over gRPC with the required fields; override any. */
const grpcLead = (fields: Record<string, unknown>) =>
  ({
    firstName: "Jane",
    lastName: "Doe",
    email: "jane@example.com",
    phoneNumber: "+1 310 555 0100",
    originZip: "90210",
    ...fields,
  }) as never;

/** Runs `node src/main.ts` with `env` to its exit (killed after `timeoutMs`); its code and everything it printed. */
function runToExit(
  env: Record<string, string>,
  timeoutMs = START_MS,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("1. one process per DATA_DIR", () => {
  it("refuses a second process on the directory (78, naming it and the holder's pid), and a kill -9 frees it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lp-lock-"));
    try {
      const first = await startService({ DATA_DIR: dir });
      const second = await runToExit({ DATA_DIR: dir, PORT: String(await freePort()) });
      expect(second.code).toBe(78);
      // One line besides the development-secret warnings (on stdout; the refusal is on stderr, and
      // which pipe's bytes arrive first is not fixed).
      const lines = second.output
        .trim()
        .split("\n")
        .filter((l) => !l.includes("development secret"));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(dir);
      expect(lines[0]).toContain(`pid ${first.child.pid}`);
      expect(second.output).not.toContain("    at "); // one line, no stack trace

      // What the first acknowledged survives; the second never touched the directory.
      const admin = await fetch(`${first.url}/api/v1/lead_providers/create/`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(admin.status).toBe(401);

      first.child.kill("SIGKILL");
      await first.exited;
      const third = await startService({ DATA_DIR: dir });
      expect((await fetch(`${third.url}/readyz`)).status).toBe(200);
      third.child.kill("SIGTERM");
      expect(await third.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Three starts of the service on the directory (the second refused).
  }, 390_000);
});

describe.each(BACKENDS)("2. one slow endpoint cannot delay other providers' webhooks ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    // The default 16 slots and a 10 s timeout, as the review ran it.
    t = await startTestApp(backend, { WEBHOOK_TIMEOUT_MS: "10000" });
    admin = await t.token();
  });
  afterAll(() => t.stop());

  const testKey = async (id: number) =>
    (
      (await (
        await t.call("POST", `${P}${id}/generate_api_key/`, { auth: admin, body: { mode: "test" } })
      ).json()) as Json
    ).api_key as string;

  it("delivers another provider's event within 2 s while one endpoint hangs with 20 deliveries queued", async () => {
    const hanging = await startReceiver();
    hanging.answer = () => "hang";
    const fine = await startReceiver();
    try {
      const s = await t.provider(undefined, { webhook_url: hanging.url });
      const f = await t.provider(undefined, { webhook_url: fine.url });
      for (let i = 0; i < 20; i++) {
        expect((await t.call("POST", LEADS, { auth: s.key, body: leadBody() })).status).toBe(201);
      }
      await hanging.waitFor((all) => all.length >= 4, 5000, "S's first deliveries");
      const created = await t.call("POST", LEADS, { auth: f.key, body: leadBody() });
      expect(created.status).toBe(201);
      const committed = Date.now();
      await fine.waitFor((all) => all.length >= 1, 2000, "F's lead.created within 2 s");
      expect(fine.received[0]?.at ?? Number.POSITIVE_INFINITY).toBeLessThan(committed + 2000);
      // The cap: the hanging endpoint never had more than 4 deliveries in flight.
      expect(hanging.received.length).toBe(4);
    } finally {
      await hanging.close();
      await fine.close();
    }
  }, 30_000);

  it("gives test-mode deliveries a bounded share: five hanging sandbox endpoints leave live ones room", async () => {
    const receivers = await Promise.all(Array.from({ length: 5 }, () => startReceiver()));
    for (const r of receivers) r.answer = () => "hang";
    const fine = await startReceiver();
    try {
      for (const r of receivers) {
        const p = await t.provider(undefined, { webhook_url: r.url });
        const key = await testKey(p.id);
        for (let i = 0; i < 4; i++) {
          expect((await t.call("POST", LEADS, { auth: key, body: leadBody() })).status).toBe(201);
        }
      }
      // 5 × 4 hanging test deliveries would fill all 16 slots; the test share (4) holds them.
      await waitFor(async () => receivers.reduce((n, r) => n + r.received.length, 0) >= 4, 5000, "test deliveries");
      await new Promise((r) => setTimeout(r, 300));
      expect(receivers.reduce((n, r) => n + r.received.length, 0)).toBe(4);
      const f = await t.provider(undefined, { webhook_url: fine.url });
      expect((await t.call("POST", LEADS, { auth: f.key, body: leadBody() })).status).toBe(201);
      const committed = Date.now();
      await fine.waitFor((all) => all.length >= 1, 2000, "the live event within 2 s");
      expect(fine.received[0]?.at ?? Number.POSITIVE_INFINITY).toBeLessThan(committed + 2000);
    } finally {
      await Promise.all([...receivers, fine].map((r) => r.close()));
    }
  }, 30_000);
});

/** The IPv4-compatible and IPv4-embedding IPv6 forms the review saved and had attempted. */
const EMBEDDED_V6 = [
  "::169.254.169.254",
  "::a9fe:a9fe",
  "::10.0.0.1",
  "::127.0.0.1",
  "::7f00:1",
  "2002:7f00:1::1", // 6to4 of 127.0.0.1
  "2002:a9fe:a9fe::1", // 6to4 of 169.254.169.254
  "64:ff9b::7f00:1", // NAT64 of 127.0.0.1
  "64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
  "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo (client 127.0.0.1, obfuscated)
  "100::1", // discard-only
  "fc00::1",
];

describe("3 and 7. webhook targets: IPv6 outside global unicast, one generic refusal, allowed ports", () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(PG, PRODUCTION);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("refuses every IPv4-compatible or -embedding IPv6 target on save (create and update), without naming it", async () => {
    const p = await t.provider();
    for (const address of EMBEDDED_V6) {
      const url = `https://[${address}]/hook`;
      const created = await t.call("POST", `${P}create/`, {
        auth: admin,
        body: { name: `v6 ${address}`, webhook_url: url },
      });
      expect(created.status, url).toBe(400);
      const problem = (await created.json()) as Json;
      expect(problem.errors[0], url).toEqual({ field: "webhook_url", code: "invalid_url", message: NOT_PUBLIC });
      const updated = await t.call("PATCH", `${P}${p.id}/`, { auth: admin, body: { webhook_url: url } });
      expect(updated.status, url).toBe(400);
    }
    // A global unicast address is fine.
    const ok = await t.call("PATCH", `${P}${p.id}/`, {
      auth: admin,
      body: { webhook_url: "https://[2606:4700::1111]/hook" },
    });
    expect(ok.status).toBe(200);
  });

  it("refuses them at send time too, and a loopback listener sees no connection", async () => {
    let connections = 0;
    const listener = net.createServer((s) => {
      connections += 1;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, "::", () => r()));
    const { port } = listener.address() as net.AddressInfo;
    // production=false leaves the scheme and port alone, so this reaches the connection-time check.
    const transport = createWebhookTransport({ timeoutMs: 2000, allowPrivateTargets: false, production: false });
    try {
      for (const address of [...EMBEDDED_V6, "::1", "::ffff:127.0.0.1"]) {
        const outcome = await transport.send(`http://[${address}]:${port}/hook`, ["whsec_dGVzdA=="], {
          id: "evt_0",
          type: "webhook.test",
          occurredAt: new Date(),
          livemode: false,
        });
        expect(outcome.statusCode, address).toBeNull();
        expect(outcome.error, address).toBe(NOT_PUBLIC);
      }
      // A name that resolves inside and a name that does not resolve read the same.
      for (const url of [`http://localhost:${port}/hook`, "http://no-such-host.invalid/hook"]) {
        const outcome = await transport.send(url, ["whsec_dGVzdA=="], {
          id: "evt_0",
          type: "webhook.test",
          occurredAt: new Date(),
          livemode: false,
        });
        expect(outcome.error, url).toBe(NOT_PUBLIC);
      }
      expect(connections).toBe(0);
    } finally {
      transport.close();
      listener.close();
    }
  });

  it("answers a refused target with one message that names no address, on save and on the test endpoint", async () => {
    // Saved while public, so the endpoint has its signing secret.
    const p = await t.provider(undefined, { webhook_url: "https://hooks.example.com/leads" });
    for (const url of ["https://127.0.0.1/", "https://localhost/", "https://10.1.2.3/", "https://[::1]/"]) {
      const res = await t.call("PATCH", `${P}${p.id}/`, { auth: admin, body: { webhook_url: url } });
      const text = await res.text();
      expect(res.status).toBe(400);
      expect(text).toContain(NOT_PUBLIC);
      expect(text).not.toMatch(/127\.0\.0\.1|10\.1\.2\.3|::1|loopback|private/);
    }
    // A URL saved before this rule (or a name whose DNS changed since): the test send refuses it alike.
    for (const url of ["https://internal.invalid/hook", "https://localhost/hook"]) {
      await t.app.database.db.updateTable("providers").set({ webhook_url: url }).where("id", "=", p.id).execute();
      const sent = await t.call("POST", `${P}${p.id}/webhook/test/`, { auth: admin });
      const text = await sent.text();
      expect(text, url).toContain(NOT_PUBLIC);
      expect(text, url).not.toMatch(/127\.0\.0\.1|ENOTFOUND|getaddrinfo/);
    }
  });

  it("allows ports 443 and 80 only, unless WEBHOOK_ALLOWED_PORTS widens them", async () => {
    const p = await t.provider();
    const bad = await t.call("PATCH", `${P}${p.id}/`, {
      auth: admin,
      body: { webhook_url: "https://hooks.example.com:8443/x" },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).errors[0].message).toBe("webhook_url must use port 443 or 80");
    const wide = await startTestApp(PG, { ...PRODUCTION, WEBHOOK_ALLOWED_PORTS: "443,8443" });
    try {
      const q = await wide.provider();
      const ok = await wide.call("PATCH", `${P}${q.id}/`, {
        auth: await wide.token(),
        body: { webhook_url: "https://hooks.example.com:8443/x" },
      });
      expect(ok.status).toBe(200);
    } finally {
      await wide.stop();
    }
    expect(() => loadConfig({ WEBHOOK_ALLOWED_PORTS: "443,http" })).toThrow(/WEBHOOK_ALLOWED_PORTS/);
  }, 150_000);
});

describe("4. development secrets only in development", () => {
  it("refuses every NODE_ENV but development and test without real secrets, compared case-insensitively", async () => {
    for (const nodeEnv of ["staging", "Production", "PRODUCTION", "prod", "qa"]) {
      let problems: readonly string[] = [];
      try {
        loadConfig({ NODE_ENV: nodeEnv });
      } catch (err) {
        problems = err instanceof ConfigError ? err.problems : [];
      }
      expect(problems.join("\n"), nodeEnv).toMatch(/JWT_SECRET or JWT_JWKS_URL is required/);
      expect(problems.join("\n"), nodeEnv).toMatch(/API_KEY_SECRET is required/);
    }
    for (const nodeEnv of [undefined, "development", "Development", "test", "TEST"]) {
      expect(loadConfig(nodeEnv === undefined ? {} : { NODE_ENV: nodeEnv }).jwt.usingDevSecret, nodeEnv).toBe(true);
    }
    // Production's rules follow too: "Production" is https-only with public targets.
    expect(loadConfig({ ...PRODUCTION, NODE_ENV: "Production" }).production).toBe(true);
    expect(loadConfig({ ...PRODUCTION, NODE_ENV: "staging" }).webhooks.allowPrivateTargets).toBe(false);
  });

  it("exits 78 with NODE_ENV=staging and no secrets", async () => {
    const { code, output } = await runToExit({ NODE_ENV: "staging", DATA_DIR: "memory://", PORT: "0" });
    expect(code).toBe(78);
    expect(output).toContain("NODE_ENV=staging");
  }, 150_000);

  it("ships no development secret in the console bundle", () => {
    const files = readdirSync(join(CONSOLE_DIR, "assets")).map((f) => join(CONSOLE_DIR, "assets", f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of [join(CONSOLE_DIR, "index.html"), ...files]) {
      const text = readFileSync(file, "utf8");
      expect(text.includes(DEV_JWT_SECRET), file).toBe(false);
      expect(text.includes(DEV_API_KEY_SECRET), file).toBe(false);
    }
  });

  it("hands out a development token only in development, and it signs the console in", async () => {
    const dev = await startTestApp(PG);
    const prod = await startTestApp(PG, { ...PRODUCTION, JWT_SECRET: DEV_JWT_SECRET });
    try {
      const res = await dev.call("GET", "/admin/dev-token");
      expect(res.status).toBe(200);
      const { token } = (await res.json()) as { token: string };
      expect((await dev.call("GET", P, { auth: token })).status).toBe(200);
      // Even a production service that (wrongly) runs on the development JWT secret gives none.
      expect((await prod.call("GET", "/admin/dev-token")).status).toBe(404);
    } finally {
      await dev.stop();
      await prod.stop();
    }
  }, 270_000);
});

describe.each(BACKENDS)("5. lone UTF-16 surrogates ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let live: string;
  let test: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
    const p = await t.provider();
    live = p.key;
    const issued = await t.call("POST", `${P}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    test = ((await issued.json()) as Json).api_key as string;
  });
  afterAll(() => t.stop());

  const LONE = "x\ud800";
  const leadCases: [string, (b: Json) => void][] = [
    ["external_id", (b) => (b.external_id = `${b.external_id}\udc00`)],
    ["first_name", (b) => (b.first_name = LONE)],
    ["last_name", (b) => (b.last_name = LONE)],
    ["company_name", (b) => (b.company_name = LONE)],
    ["note_from_shipper", (b) => (b.note_from_shipper = LONE)],
    ["email", (b) => (b.email = "x\ud800@example.com")],
    ["phone_number", (b) => (b.phone_number = "+1 310 555 0100\ud800")],
    ["origin_city", (b) => (b.origin_city = LONE)],
    ["vehicles[0].make", (b) => (b.vehicles[0].make = LONE)],
    ["vehicles[0].model", (b) => (b.vehicles[0].model = "\udfff")],
  ];

  it("answers 400 validation_error naming the field, for live and test keys (REST)", async () => {
    for (const key of [live, test]) {
      for (const [field, spoil] of leadCases) {
        const body = leadBody() as Json;
        spoil(body);
        const res = await t.call("POST", LEADS, { auth: key, body: JSON.stringify(body) });
        expect(res.status, field).toBe(400);
        const problem = (await res.json()) as Json;
        expect(problem.code, field).toBe("validation_error");
        expect(
          (problem.errors as Json[]).map((e) => e.field),
          field,
        ).toContain(field);
      }
    }
  });

  it("answers INVALID_ARGUMENT over Connect JSON, never INTERNAL", async () => {
    const client = connectClient(PublicLeadService, t.port, "connect");
    const body = leadBody() as Json;
    const err = await rejection(
      client.createLead(grpcLead({ externalId: body.external_id, firstName: LONE }), bearer(live)),
    );
    expect(err.code).toBe(Code.InvalidArgument);
  });

  it("answers 400 on the Management API's text fields too", async () => {
    const fields: Record<string, unknown>[] = [
      { name: LONE },
      { name: "Surrogate Notes", notes: LONE },
      { name: "Surrogate Mail", contact_email: "a\ud800@example.com" },
      { name: "Surrogate Hook", webhook_url: "https://hooks.example.com/\ud800" },
    ];
    for (const body of fields) {
      const res = await t.call("POST", `${P}create/`, { auth: admin, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(Object.keys(body))).toBe(400);
      expect(((await res.json()) as Json).code).toBe("validation_error");
    }
    const p = await t.provider();
    const res = await t.call("PATCH", `${P}${p.id}/`, { auth: admin, body: JSON.stringify({ notes: LONE }) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).errors[0].field).toBe("notes");
  });
});

describe.each(BACKENDS)("2. a replay never goes out beside the attempt it repeats ($name)", (backend) => {
  it("waits for the lease of an attempt still running when its delivery was disabled mid-send", async () => {
    // The first attempt hangs until its 10 s time-out: long enough that it still runs when the
    // replay comes, however slowly the machine gets there.
    const t = await startTestApp(backend, { WEBHOOK_TIMEOUT_MS: "10000" });
    const receiver = await startReceiver();
    receiver.answer = () => "hang";
    try {
      const admin = await t.token();
      const p = await t.provider(undefined, { webhook_url: receiver.url });
      await t.call("POST", LEADS, { auth: p.key, body: leadBody() });
      await receiver.waitFor((all) => all.length === 1, START_MS, "the first attempt");
      // The endpoint is disabled while that attempt hangs (what a 410 from it would do).
      const db = t.app.database.db;
      await db.updateTable("webhook_deliveries").set({ state: "disabled" }).where("provider_id", "=", p.id).execute();
      const [delivery] = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("provider_id", "=", p.id)
        .execute();
      const replayed = await t.call("POST", `${P}${p.id}/webhook_deliveries/${delivery?.id}/replay/`, {
        auth: admin,
      });
      expect(replayed.status).toBeLessThan(300);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.received).toHaveLength(1); // not sent again while the first attempt runs
      const after = await db
        .selectFrom("webhook_deliveries")
        .selectAll()
        .where("id", "=", delivery?.id as number)
        .executeTakeFirstOrThrow();
      expect(after.state).toBe("pending");
      expect(new Date(after.next_attempt_at as unknown as string).getTime()).toBeGreaterThanOrEqual(
        new Date(delivery?.lease_expires_at as Date).getTime() - 5,
      );
    } finally {
      await receiver.close();
      await t.stop();
    }
  }, 150_000);
});

describe.each(BACKENDS)("6. identifiers reveal no other provider's volume ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("gives ids and order numbers that do not count other providers' leads, live or test", async () => {
    const a = await t.provider();
    const issued = await t.call("POST", `${P}${a.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    const testKey = ((await issued.json()) as Json).api_key as string;
    const b = await t.provider();

    const first = (await (await t.call("POST", LEADS, { auth: testKey, body: leadBody() })).json()) as Json;
    for (let i = 0; i < 7; i++) await t.call("POST", LEADS, { auth: b.key, body: leadBody() });
    const second = (await (await t.call("POST", LEADS, { auth: testKey, body: leadBody() })).json()) as Json;

    for (const lead of [first, second]) {
      expect(lead.order_number).toMatch(/^LP-[0-9A-HJKMNP-TV-Z]{10}$/);
      expect(Number.isSafeInteger(lead.id)).toBe(true);
    }
    // Sequential ids would differ by 8 (7 leads of B in between): these differ by at least a
    // millisecond's worth (4096) and tell only the time between the two.
    expect(second.id - first.id).toBeGreaterThan(4096);
    expect(second.id).toBeGreaterThan(first.id); // still newest-first by id

    // A provider's own consecutive leads are not consecutive numbers either.
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(((await (await t.call("POST", LEADS, { auth: b.key, body: leadBody() })).json()) as Json).id as number);
    }
    expect(ids.slice(1).filter((id, i) => id - (ids[i] as number) === 1).length).toBeLessThan(3);
  });

  it("pages the events feed by a token that holds no outbox position", async () => {
    const p = await t.provider();
    for (let i = 0; i < 3; i++) await t.call("POST", LEADS, { auth: p.key, body: leadBody() });
    const page = (await (await t.call("GET", "/api/v1/public/events/?page_size=1", { auth: p.key })).json()) as Json;
    const token = page.next_page_token as string;
    expect(token).toBeTruthy();
    const decoded = Buffer.from(token, "base64url").toString("utf8");
    expect(decoded).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(decoded).toBe(page.results[0].id);
    const next = (await (
      await t.call("GET", `/api/v1/public/events/?page_size=1&page_token=${token}`, { auth: p.key })
    ).json()) as Json;
    expect(next.results[0].id).not.toBe(page.results[0].id);
    // Another provider's event id is no cursor into this provider's feed.
    const other = await t.provider();
    const res = await t.call("GET", `/api/v1/public/events/?page_token=${token}`, { auth: other.key });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).results).toEqual([]);
    const bad = await t.call("GET", `/api/v1/public/events/?page_token=${Buffer.from("12").toString("base64url")}`, {
      auth: p.key,
    });
    expect(bad.status).toBe(400);
  });
});

describe.each(BACKENDS)("8. staff identities never reach providers ($name)", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t.stop());

  it("shows providers a role (GET, gRPC, events, webhook) and admins the identity", async () => {
    const receiver = await startReceiver();
    try {
      const p = await t.provider(undefined, { webhook_url: receiver.url });
      const lead = (await (await t.call("POST", LEADS, { auth: p.key, body: leadBody() })).json()) as Json;
      expect(lead.history[0].actor).toBe("provider");
      const alice = await t.token({}, { sub: "alice.smith@corp.example" });
      await connectClient(LeadWorkflowService, t.port, "grpc").transitionLead(
        { leadId: BigInt(lead.id), toState: LeadState.QUOTE },
        bearer(alice),
      );
      const seen = (await (await t.call("GET", `${LEADS}${lead.external_id}/`, { auth: p.key })).json()) as Json;
      expect(seen.history.map((h: Json) => h.actor)).toEqual(["provider", "staff"]);
      const rpc = await connectClient(PublicLeadService, t.port, "grpc").getLead(
        { externalId: lead.external_id },
        bearer(p.key),
      );
      expect(rpc.lead?.history.map((h) => h.actor)).toEqual(["provider", "staff"]);
      const events = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.key })).json()) as Json;
      expect(JSON.stringify(events)).not.toContain("alice");
      await receiver.waitFor((all) => all.some((r) => r.body.includes("lead.quoted")), 5000, "lead.quoted");
      for (const r of receiver.received) expect(r.body).not.toContain("alice");
      expect(receiver.received.map((r) => r.body).join()).toContain('"actor":"staff"');

      // Admins see who it was.
      const admin = await t.token();
      const list = (await (
        await t.call("GET", `/api/v1/admin/leads/?q=${encodeURIComponent(lead.external_id)}`, { auth: admin })
      ).json()) as Json;
      expect(list.results[0].history.map((h: Json) => h.actor)).toEqual([
        `provider:${p.id}`,
        "alice.smith@corp.example",
      ]);
    } finally {
      await receiver.close();
    }
  });
});

describe.each(BACKENDS)("9, 10, 11. smaller findings ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("9. caps the warnings at 20 and counts the rest (fast path and Express alike)", async () => {
    const p = await t.provider();
    for (const contentType of ["application/json", "application/json;charset=utf-8"]) {
      const body: Json = leadBody();
      for (let i = 0; i < 5000; i++) body[`u${i}`] = 1;
      const res = await t.call("POST", LEADS, {
        auth: p.key,
        body: JSON.stringify(body),
        headers: { "content-type": contentType },
      });
      expect(res.status, contentType).toBe(201);
      const text = await res.text();
      const created = JSON.parse(text) as Json;
      expect(created.warnings).toHaveLength(20);
      expect(created.warnings_truncated).toBe(4980);
      expect(text.length).toBeLessThan(8000);
    }
    const plain = (await (
      await t.call("POST", LEADS, { auth: p.key, body: { ...leadBody(), extra: 1 } })
    ).json()) as Json;
    expect(plain.warnings).toHaveLength(1);
    expect(plain).not.toHaveProperty("warnings_truncated");
  });

  it("10. reveals exactly the mode asked for, audited per mode (REST and gRPC)", async () => {
    const p = await t.provider();
    const issued = await t.call("POST", `${P}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    const testKey = ((await issued.json()) as Json).api_key as string;

    const res = await t.call("GET", `${P}${p.id}/api_key/?mode=live`, { auth: admin });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ mode: "live", api_key: p.key });
    expect(text).not.toContain(testKey);

    const rpc = await connectClient(ProviderService, t.port, "grpc").revealApiKey(
      { id: BigInt(p.id), mode: ApiKeyMode.TEST },
      bearer(admin),
    );
    expect(rpc).toMatchObject({ mode: ApiKeyMode.TEST, apiKey: testKey });

    const audit = (await (
      await t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: admin })
    ).json()) as Json;
    const modes = (audit.results as Json[]).filter((e) => e.action === "api_key.viewed").map((e) => e.details.modes);
    expect(modes).toEqual(expect.arrayContaining([["live"], ["test"]]));

    expect((await t.call("GET", `${P}${p.id}/api_key/`, { auth: admin })).status).toBe(400);
    expect((await t.call("GET", `${P}${p.id}/api_key/?mode=both`, { auth: admin })).status).toBe(400);
    expect((await t.call("GET", `${P}999999999/api_key/?mode=live`, { auth: admin })).status).toBe(404);
    expect((await t.call("GET", `${P}${p.id}/api_key/?mode=live`, { auth: p.key })).status).toBe(401);
    // GET provider keeps its published contract: both keys.
    const full = (await (await t.call("GET", `${P}${p.id}/`, { auth: admin })).json()) as Json;
    expect([full.api_key_value, full.test_api_key_value]).toEqual([p.key, testKey]);
  });

  it("11. refuses . and .. as external_id (REST and gRPC)", async () => {
    const p = await t.provider();
    for (const externalId of [".", ".."]) {
      const res = await t.call("POST", LEADS, { auth: p.key, body: leadBody({ external_id: externalId }) });
      expect(res.status, externalId).toBe(400);
      expect(((await res.json()) as Json).errors[0]).toMatchObject({ field: "external_id", code: "invalid_format" });
      const err = await rejection(
        connectClient(PublicLeadService, t.port, "grpc").createLead(grpcLead({ externalId }), bearer(p.key)),
      );
      expect(err.code, externalId).toBe(Code.InvalidArgument);
    }
    const ok = await t.call("POST", LEADS, { auth: p.key, body: leadBody({ external_id: "a/b?c" }) });
    expect(ok.headers.get("location")).toBe(`${LEADS}a%2Fb%3Fc/`);
  });

  it("11. answers malformed protobuf on the gRPC fast path with INVALID_ARGUMENT", async () => {
    const p = await t.provider();
    const session = http2Connect(`http://127.0.0.1:${t.port}`);
    try {
      for (const method of ["GetLead", "CreateLead"]) {
        const junk = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]); // a length past the end
        const frame = Buffer.alloc(5 + junk.length);
        frame.writeUInt32BE(junk.length, 1);
        junk.copy(frame, 5);
        const status = await new Promise<string>((resolve, reject) => {
          const stream = session.request({
            ":method": "POST",
            ":path": `/leadprovider.v1.PublicLeadService/${method}`,
            "content-type": "application/grpc",
            te: "trailers",
            authorization: `Bearer ${p.key}`,
          });
          let grpcStatus = "";
          stream.on("response", (h) => {
            if (h["grpc-status"]) grpcStatus = String(h["grpc-status"]);
          });
          stream.on("trailers", (h) => {
            grpcStatus = String(h["grpc-status"]);
          });
          stream.on("data", () => undefined);
          stream.on("end", () => resolve(grpcStatus));
          stream.on("error", reject);
          stream.end(frame);
        });
        expect(status, method).toBe(String(Code.InvalidArgument));
      }
    } finally {
      session.close();
    }
  });

  it("11. caches the console's hashed assets for a year, never its HTML", async () => {
    const html = await t.call("GET", "/admin/");
    expect(html.headers.get("cache-control")).toBe("no-store");
    const asset = /\/admin\/assets\/[^"]+\.js/.exec(await html.text())?.[0];
    expect(asset).toBeDefined();
    const res = await t.call("GET", asset as string);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const missing = await t.call("GET", "/admin/assets/missing-0000.js");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("cache-control")).toBe("no-store");
  });
});

describe("11. a port already in use", () => {
  it("prints one line naming the port and exits 78", async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", () => r()));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const { code, output } = await runToExit({ ...SECRETS, DATA_DIR: "memory://", PORT: String(port) });
      expect(code).toBe(78);
      expect(output.trim().split("\n").at(-1)).toBe(
        `port ${port} is already in use (another process listens on 127.0.0.1:${port}); stop it or set PORT`,
      );
      expect(output).not.toContain("    at ");
    } finally {
      blocker.close();
    }
  }, 150_000);
});
