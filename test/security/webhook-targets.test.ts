/**
 * Where a provider's webhook may point in production: a public https URL, on port 443 or 80 unless
 * WEBHOOK_ALLOWED_PORTS widens them; never an internal address, user info, or an IPv6 address
 * outside global unicast, in any of the forms that embed an IPv4 address. Checked when the URL is
 * saved and again when a delivery connects, and refused with one message that never says what
 * the name resolved to.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { NOT_PUBLIC } from "../../src/providers/webhook-url.ts";
import { createWebhookTransport } from "../../src/webhooks/webhook.http.ts";
import { type Json, startTestApp, type TestApp } from "../helpers/app.ts";
import { PRODUCTION } from "../helpers/processes.ts";

const PG = { name: "pglite" } as const;
const P = "/api/v1/lead_providers/";

/** The IPv4-compatible and IPv4-embedding IPv6 forms, and ranges outside global unicast. */
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

describe("webhook targets in production", () => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(PG, PRODUCTION);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("refuses internal targets and credentials up front, accepts a public https URL", async () => {
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
  });

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

  it("refuses the same IPv6 targets at send time, and a loopback listener sees no connection", async () => {
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
