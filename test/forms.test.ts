/**
 * The drop-in form's API against a real server on PGlite and (with TEST_DATABASE_URL) Postgres:
 * a form lead stored with its consent record (the hash matching the text the form was given),
 * CORS only for the key's allowed origins, and every refusal — no, forged, expired or replayed
 * challenge, wrong or no origin, a secret key on the form, a publishable key on the Public API,
 * the honeypot, a body over 32 KiB, no consent, the per-address hourly limit (exact across two
 * instances with Postgres and Redis) — answered with its code, storing nothing and counting
 * against no cap. Turnstile is verified against a local siteverify server.
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { freshLead, movableClock, portalPerson } from "./helpers/money.ts";

const FORM = "/api/v1/forms";
const PAGE = "https://quotes.example";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

/** A person's form body: a lead without external_id, consent, the page, and no honeypot. */
function formBody(consentSha: string, over: Json = {}): Json {
  const { external_id: _, ...lead } = freshLead();
  return {
    ...lead,
    consent: { accepted: true, text_sha256: consentSha, accepted_at: new Date().toISOString() },
    page_url: `${PAGE}/auto-transport?utm_source=fb`,
    company_website: "",
    ...over,
  };
}

interface FormSite {
  id: number;
  secret: string;
  live: string;
  test: string;
}

function formClient(t: TestApp) {
  const call = (method: string, path: string, key: string | undefined, origin: string | undefined, body?: unknown) =>
    fetch(`${t.url}${path}`, {
      method,
      headers: {
        ...(key !== undefined && { "x-publishable-key": key }),
        ...(origin !== undefined && { origin }),
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });

  /** Fetches a challenge as the widget does and solves it as a browser would. */
  async function solved(key: string, origin = PAGE): Promise<string> {
    const res = await call("GET", `${FORM}/challenge/`, key, origin);
    expect(res.status, await res.clone().text()).toBe(200);
    const challenge = (await res.json()) as Json;
    const solution = await solveChallenge({ challenge: challenge as never, deriveKey });
    if (!solution) throw new Error("could not solve the challenge");
    return Buffer.from(JSON.stringify({ challenge, solution })).toString("base64");
  }

  async function config(key: string, origin = PAGE): Promise<Json> {
    const res = await call("GET", `${FORM}/config/`, key, origin);
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Json;
  }

  const submit = (key: string | undefined, body: unknown, origin: string | undefined = PAGE) =>
    call("POST", `${FORM}/leads/`, key, origin, body);

  return { call, solved, config, submit };
}

describe.each(BACKENDS)("drop-in form ($name)", { timeout: 120_000 }, (backend) => {
  let t: TestApp;
  let admin: string;
  let f: ReturnType<typeof formClient>;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      { BROKER_NAME: "Acme Auto Transport", FORM_LIMIT_PER_IP_PER_HOUR: "1000" },
      { now: clock.now },
    );
    admin = await t.token();
    f = formClient(t);
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function site(origins: string[] = [PAGE, "http://127.0.0.2:8123"]): Promise<FormSite> {
    const p = await t.provider();
    const issue = async (mode: string) => {
      const res = await t.call("POST", `/api/v1/lead_providers/${p.id}/publishable_key/`, {
        auth: admin,
        body: { mode },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Json;
    };
    const live = await issue("live");
    const test = await issue("test");
    expect(live.publishable_key).toMatch(/^lp_pub_live_[0-9A-Za-z]{32}$/);
    expect(test.publishable_key).toMatch(/^lp_pub_test_[0-9A-Za-z]{32}$/);
    const res = await t.call("PUT", `/api/v1/lead_providers/${p.id}/form_settings/`, {
      auth: admin,
      body: { allowed_origins: origins, consent_text: null, enabled: true },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return { id: p.id, secret: p.key, live: live.publishable_key, test: test.publishable_key };
  }

  const leadCount = async (providerId: number) =>
    Number(
      (
        await sql<{ n: number }>`select count(*)::int as n from leads where provider_id = ${providerId}`.execute(
          t.app.database.db,
        )
      ).rows[0]?.n,
    );

  it("stores a form lead with its consent record; the hash matches the text the form was given", async () => {
    const s = await site();
    const cfg = await f.config(s.live);
    expect(cfg.livemode).toBe(true);
    expect(cfg.challenge).toBe("altcha");
    expect(cfg.consent_text).toContain("Acme Auto Transport");
    expect(cfg.consent_text_sha256).toBe(sha256(cfg.consent_text));

    const body = formBody(cfg.consent_text_sha256, {
      note_from_shipper: '<script>alert("x")</script> & <b>bold</b>',
      altcha: await f.solved(s.live),
    });
    const res = await f.submit(s.live, body);
    expect(res.status, await res.clone().text()).toBe(201);
    expect(res.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(res.headers.get("vary")).toMatch(/origin/i);
    const created = (await res.json()) as Json;
    expect(created.external_id).toMatch(/^form_[0-9A-Za-z]{22}$/);
    expect(created.consent_id).toBe(created.external_id.replace("form_", "cns_"));
    expect(created.livemode).toBe(true);

    // The provider reads it through the Public API: source form, consent id and hash, markup as text.
    const lead = await j(t.call("GET", `/api/v1/public/leads/${created.external_id}/`, { auth: s.secret }));
    expect(lead.source).toBe("form");
    expect(lead.order_number).toBe(created.order_number);
    expect(lead.note_from_shipper).toBe('<script>alert("x")</script> & <b>bold</b>');
    expect(lead.source_url).toBe(body.page_url);
    expect(lead.consent.id).toBe(created.consent_id);
    expect(lead.consent.text_sha256).toBe(cfg.consent_text_sha256);
    expect(lead.consent.consent_text).toBe(cfg.consent_text);

    const record = await j(t.call("GET", `/api/v1/admin/consents/${created.consent_id}/`, { auth: admin }));
    expect(record).toMatchObject({
      id: created.consent_id,
      order_number: created.order_number,
      external_id: created.external_id,
      livemode: true,
      text: cfg.consent_text,
      text_sha256: sha256(record.text),
      accepted: true,
      browser_time: body.consent.accepted_at,
      page_url: body.page_url,
      origin: PAGE,
      ip_address: "127.0.0.1",
      form_version: "v1",
    });
    expect(record.fields.email).toBe(body.email);
    expect(record.fields.altcha).toBeUndefined();
    expect(Date.parse(record.accepted_at)).toBeGreaterThan(Date.now() - 60_000);

    // gRPC tells the same.
    const rpc = connectClient(PublicLeadService, t.port, "grpc");
    const viaRpc = await rpc.getLead({ externalId: created.external_id }, bearer(s.secret));
    expect(viaRpc.lead?.source).toBe("form");
    expect(viaRpc.lead?.consent?.id).toBe(created.consent_id);
    expect(viaRpc.lead?.consent?.textSha256).toBe(cfg.consent_text_sha256);

    // An API lead has a source too, and no consent record.
    const api = await j(t.call("POST", "/api/v1/public/leads/", { auth: s.secret, body: freshLead() }));
    expect(api.source).toBe("api");

    // The provider's portal sees its own record, not another provider's.
    const person = await portalPerson(t, admin, s.id, "correct horse battery staple 42");
    expect((await person.portal("GET", `consents/${created.consent_id}/`)).status).toBe(200);
    const other = await site();
    const stranger = await portalPerson(t, admin, other.id, "correct horse battery staple 43");
    const hidden = await stranger.portal("GET", `consents/${created.consent_id}/`);
    expect(hidden.status).toBe(404);
    expect(((await hidden.json()) as Json).code).toBe("consent_not_found");
  });

  it("answers CORS only for the key's allowed origins, on every request", async () => {
    const s = await site();
    const other = await site(["https://other.example"]);
    const preflight = (origin: string, key?: string) =>
      fetch(`${t.url}${FORM}/leads/${key ? `?publishable_key=${key}` : ""}`, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-publishable-key",
        },
      });
    const ok = await preflight(PAGE, s.live);
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(ok.headers.get("access-control-allow-headers")).toMatch(/x-publishable-key/i);
    // Another provider's origin with this key, a lookalike, and an origin nobody allows.
    for (const origin of ["https://other.example", "https://quotes.example.evil", "http://quotes.example"]) {
      const no = await preflight(origin, s.live);
      expect(no.status, origin).toBe(403);
      expect(no.headers.get("access-control-allow-origin"), origin).toBeNull();
    }
    expect((await preflight("https://nobody.example")).status).toBe(403);
    expect((await preflight("https://other.example")).status).toBe(204);

    // The real request is checked too: another provider's origin with this key, no origin.
    const body = formBody("0".repeat(64));
    const wrong = await f.submit(s.live, body, "https://other.example");
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await wrong.json()) as Json).code).toBe("origin_not_allowed");
    const none = await f.call("POST", `${FORM}/leads/`, s.live, undefined, body);
    expect(((await none.json()) as Json).code).toBe("origin_required");
    // A loopback origin is for test keys only, even when listed.
    const local = "http://127.0.0.2:8123";
    expect(((await j(f.call("GET", `${FORM}/config/`, s.live, local))) as Json).code).toBe("origin_not_allowed");
    expect((await f.config(s.test, local)).livemode).toBe(false);
    expect(((await j(f.call("GET", `${FORM}/config/`, other.live, PAGE))) as Json).code).toBe("origin_not_allowed");
  });

  it("refuses every abuse with its code, stores nothing and counts against no cap", async () => {
    const s = await site();
    // A day cap of one: if any refusal counted, the last (good) submission would be refused.
    const rules = await t.call("PUT", `/api/v1/lead_providers/${s.id}/intake_rules/`, {
      auth: admin,
      body: { caps: { day: 1 } },
    });
    expect(rules.status, await rules.clone().text()).toBe(200);
    const cfg = await f.config(s.live);
    const good = () => formBody(cfg.consent_text_sha256);
    const refusal = async (res: Response, status: number, code: string) => {
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect((JSON.parse(text) as Json).code, text).toBe(code);
      expect(res.headers.get("content-type")).toMatch(/application\/problem\+json/);
    };

    await refusal(await f.submit(s.live, good()), 400, "challenge_invalid");
    await refusal(await f.submit(s.live, { ...good(), altcha: "not base64 json" }), 400, "challenge_invalid");
    // Forged: a solved challenge whose signed parameters were changed.
    const solved = JSON.parse(Buffer.from(await f.solved(s.live), "base64").toString()) as Json;
    solved.challenge.parameters.cost = 1;
    const forged = Buffer.from(JSON.stringify(solved)).toString("base64");
    await refusal(await f.submit(s.live, { ...good(), altcha: forged }), 400, "challenge_invalid");
    // Expired: issued six minutes ago.
    clock.advance(-6 * 60_000);
    const old = await f.solved(s.live);
    clock.reset();
    const expired = await f.submit(s.live, { ...good(), altcha: old });
    await refusal(expired.clone(), 400, "challenge_invalid");
    expect(((await expired.json()) as Json).detail).toMatch(/expired/);
    // The honeypot, no consent, a changed consent text, an external_id.
    await refusal(
      await f.submit(s.live, { ...good(), company_website: "https://spam.example", altcha: await f.solved(s.live) }),
      400,
      "honeypot_filled",
    );
    const noConsent = await f.submit(s.live, {
      ...good(),
      consent: { accepted: false, text_sha256: cfg.consent_text_sha256 },
      altcha: await f.solved(s.live),
    });
    const nc = (await noConsent.json()) as Json;
    expect(noConsent.status).toBe(400);
    expect(nc.errors).toContainEqual(expect.objectContaining({ field: "consent.accepted", code: "consent_required" }));
    const changed = (await j(
      f.submit(s.live, {
        ...good(),
        consent: { accepted: true, text_sha256: sha256("other") },
        altcha: await f.solved(s.live),
      }),
    )) as Json;
    expect(changed.errors).toContainEqual(expect.objectContaining({ field: "consent.text_sha256" }));
    const withId = (await j(
      f.submit(s.live, { ...good(), external_id: "mine", altcha: await f.solved(s.live) }),
    )) as Json;
    expect(withId.errors).toContainEqual(expect.objectContaining({ field: "external_id" }));
    // A field the service refuses is named as the Public API names it.
    const badPhone = (await j(
      f.submit(s.live, { ...good(), phone_number: "12", altcha: await f.solved(s.live) }),
    )) as Json;
    expect(badPhone.errors).toContainEqual(expect.objectContaining({ field: "phone_number" }));
    // Keys: a secret key on the form, none, an unknown one, a publishable key on the Public API.
    await refusal(await f.submit(s.secret, good()), 401, "secret_key_refused");
    await refusal(await f.submit(undefined, good()), 401, "publishable_key_required");
    await refusal(await f.submit(`lp_pub_live_${"x".repeat(32)}`, good()), 401, "publishable_key_invalid");
    const onApi = await t.call("POST", "/api/v1/public/leads/", { auth: s.live, body: freshLead() });
    expect(onApi.status).toBe(401);
    expect((await t.call("GET", "/api/v1/public/leads/", { auth: s.test })).status).toBe(401);
    // The key in the body works as in the header; a body over 32 KiB does not get in.
    const big = await fetch(`${t.url}${FORM}/leads/`, {
      method: "POST",
      headers: { origin: PAGE, "content-type": "application/json", "x-publishable-key": s.live },
      body: JSON.stringify({ ...good(), note_from_shipper: "x".repeat(33 * 1024) }),
    });
    await refusal(big, 413, "payload_too_large");

    expect(await leadCount(s.id)).toBe(0);
    // A replayed solution: accepted once, then refused.
    const once = await f.solved(s.live);
    const first = await fetch(`${t.url}${FORM}/leads/`, {
      method: "POST",
      headers: { origin: PAGE, "content-type": "application/json" },
      body: JSON.stringify({ ...good(), altcha: once, publishable_key: s.live }),
    });
    expect(first.status, await first.clone().text()).toBe(201);
    await refusal(await f.submit(s.live, { ...good(), altcha: once }), 400, "challenge_invalid");
    expect(await leadCount(s.id)).toBe(1);
  });

  it("rotating a publishable key stops the old one at once; the portal sees its keys and snippet", async () => {
    const s = await site();
    const person = await portalPerson(t, admin, s.id, "correct horse battery staple 44");
    const settings = (await (await person.portal("GET", "form_settings/")).json()) as Json;
    expect(settings.publishable_keys.live.publishable_key).toBe(s.live);
    expect(settings.snippets.live).toBe(
      `<script src="${t.url}/forms/v1/quote-form.js" defer></script>\n<lead-quote-form publishable-key="${s.live}"></lead-quote-form>`,
    );
    // The README's and docs/forms.md's snippet is the portal's, with the address and key filled in.
    for (const file of ["README.md", "docs/forms.md"]) {
      const block = /```html\n([\s\S]*?)\n```/.exec(readFileSync(new URL(`../${file}`, import.meta.url), "utf8"))?.[1];
      expect(block, file).toBeDefined();
      const written = (block as string)
        .replaceAll("https://api.example.com", t.url)
        .replace(/lp_pub_live_[0-9A-Za-z]{32}/, s.live);
      expect(written, file).toBe(settings.snippets.live);
    }
    const rotated = await person.portal("POST", "form_settings/publishable_key/", { mode: "live" });
    expect(rotated.status).toBe(201);
    const fresh = ((await rotated.json()) as Json).publishable_key as string;
    expect(fresh).not.toBe(s.live);
    expect(((await j(f.call("GET", `${FORM}/config/`, s.live, PAGE))) as Json).code).toBe("publishable_key_invalid");
    expect((await f.config(fresh)).livemode).toBe(true);

    const bad = await person.portal("PUT", "form_settings/", {
      allowed_origins: ["http://quotes.example", "https://ok.example/path"],
      consent_text: null,
      enabled: true,
    });
    expect(bad.status).toBe(400);
    const fields = (((await bad.json()) as Json).errors as Json[]).map((e) => e.field);
    expect(fields).toEqual(["allowed_origins[0]", "allowed_origins[1]"]);
    const off = await person.portal("PUT", "form_settings/", {
      allowed_origins: [PAGE],
      consent_text: "I agree that Acme Auto Transport may call and text me about my shipment.",
      enabled: false,
    });
    expect(off.status).toBe(200);
    expect(((await j(f.call("GET", `${FORM}/config/`, fresh, PAGE))) as Json).code).toBe("form_disabled");
  });

  it("records a form request in the provider's request log with personal data masked", async () => {
    const s = await site();
    const cfg = await f.config(s.live);
    const body = formBody(cfg.consent_text_sha256, { altcha: await f.solved(s.live) });
    expect((await f.submit(s.live, body)).status).toBe(201);
    expect((await f.submit(s.live, { ...body, altcha: undefined })).status).toBe(400);
    await t.app.requestLog?.flush();
    const page = await j(t.call("GET", "/api/v1/public/requests/", { auth: s.secret }));
    const entries = (page.results as Json[]).filter((e) =>
      String(e.operation ?? e.path ?? "").includes("/forms/leads/"),
    );
    expect(entries.length, JSON.stringify(page.results)).toBe(2);
    const logged = JSON.stringify(entries);
    expect(logged).not.toContain(body.email);
    expect(logged).not.toContain(body.phone_number);
    expect(entries.map((e) => e.status).sort()).toEqual([201, 400]);
  });
});

describe.each(BACKENDS)("drop-in form per-address limit ($name)", { timeout: 120_000 }, (backend) => {
  it("refuses the eleventh submission from one address in an hour", async () => {
    const t = await startTestApp(backend);
    try {
      const admin = await t.token();
      const p = await t.provider();
      const key = (
        await j(
          t.call("POST", `/api/v1/lead_providers/${p.id}/publishable_key/`, { auth: admin, body: { mode: "test" } }),
        )
      ).publishable_key;
      await t.call("PUT", `/api/v1/lead_providers/${p.id}/form_settings/`, {
        auth: admin,
        body: { allowed_origins: [PAGE], consent_text: null, enabled: true },
      });
      const f = formClient(t);
      const codes: string[] = [];
      for (let i = 0; i < 11; i++) codes.push(((await j(f.submit(key, formBody("0".repeat(64))))) as Json).code);
      expect(codes.slice(0, 10)).toEqual(Array(10).fill("challenge_invalid"));
      expect(codes[10]).toBe("rate_limited");
    } finally {
      await t.stop();
    }
  });
});

const POSTGRES = BACKENDS.find((b) => b.name === "postgres");

describe.runIf(POSTGRES && process.env.REDIS_URL)("drop-in form across two instances (postgres, redis)", () => {
  it("admits exactly FORM_LIMIT_PER_IP_PER_HOUR submissions from one address across both", async () => {
    const backend = POSTGRES as NonNullable<typeof POSTGRES>;
    const shared = { FORM_LIMIT_PER_IP_PER_HOUR: "7", REDIS_URL: process.env.REDIS_URL as string };
    const one = await startTestApp(backend, shared);
    const two = await startTestApp(backend, { ...shared, DATABASE_URL: one.databaseUrl as string });
    try {
      const admin = await one.token();
      const p = await one.provider();
      const key = (
        await j(
          one.call("POST", `/api/v1/lead_providers/${p.id}/publishable_key/`, { auth: admin, body: { mode: "live" } }),
        )
      ).publishable_key;
      await one.call("PUT", `/api/v1/lead_providers/${p.id}/form_settings/`, {
        auth: admin,
        body: { allowed_origins: [PAGE], consent_text: null, enabled: true },
      });
      const clients = [formClient(one), formClient(two)];
      const code = async (i: number) =>
        ((await j(clients[i % 2]?.submit(key, formBody("0".repeat(64))) as Promise<Response>)) as Json).code as string;
      // One from each first (each instance has loaded its Redis script), then the rest at once.
      const answers = [await code(0), await code(1)];
      answers.push(...(await Promise.all(Array.from({ length: 14 }, (_, i) => code(i)))));
      expect(
        answers.filter((c) => c === "rate_limited"),
        answers.join(),
      ).toHaveLength(9);
      expect(answers.filter((c) => c === "challenge_invalid")).toHaveLength(7);
    } finally {
      await two.stop();
      await one.stop();
    }
  });
});

describe("drop-in form with Turnstile", () => {
  it("verifies the token server-side against the configured siteverify URL", async () => {
    const seen: Json[] = [];
    const verifier = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => {
        raw += c;
      });
      req.on("end", () => {
        const form = Object.fromEntries(new URLSearchParams(raw));
        seen.push(form);
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify(
            form.response === "good-token"
              ? { success: true }
              : { success: false, "error-codes": ["invalid-input-response"] },
          ),
        );
      });
    });
    verifier.listen(0, "127.0.0.1");
    await once(verifier, "listening");
    const port = (verifier.address() as AddressInfo).port;
    const t = await startTestApp(BACKENDS[0] as (typeof BACKENDS)[number], {
      TURNSTILE_SECRET: "turnstile-test-secret",
      TURNSTILE_SITE_KEY: "1x00000000000000000000AA",
      TURNSTILE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify`,
    });
    try {
      const admin = await t.token();
      const p = await t.provider();
      const key = (
        await j(
          t.call("POST", `/api/v1/lead_providers/${p.id}/publishable_key/`, { auth: admin, body: { mode: "live" } }),
        )
      ).publishable_key;
      await t.call("PUT", `/api/v1/lead_providers/${p.id}/form_settings/`, {
        auth: admin,
        body: { allowed_origins: [PAGE], consent_text: null, enabled: true },
      });
      const f = formClient(t);
      const cfg = await f.config(key);
      expect(cfg.challenge).toBe("turnstile");
      expect(cfg.turnstile_site_key).toBe("1x00000000000000000000AA");
      const bad = (await j(f.submit(key, formBody(cfg.consent_text_sha256, { turnstile: "bad-token" })))) as Json;
      expect(bad.code).toBe("challenge_invalid");
      const ok = await f.submit(key, formBody(cfg.consent_text_sha256, { turnstile: "good-token" }));
      expect(ok.status, await ok.clone().text()).toBe(201);
      expect(seen.at(-1)).toMatchObject({
        secret: "turnstile-test-secret",
        response: "good-token",
        remoteip: "127.0.0.1",
      });
    } finally {
      await t.stop();
      verifier.close();
    }
  });
});
