/**
 * Webhooks end to end: a real receiving HTTP server, every signature checked with the
 * `standardwebhooks` package's own Webhook.verify and by an HMAC computed here with node:crypto
 * (so neither the service's code nor the package it signs with vouches for itself), and the service's
 * real delivery workers on PGlite and, when TEST_DATABASE_URL is set, Postgres.
 */
import { createHmac } from "node:crypto";
import { Writable } from "node:stream";
import { Code, type ConnectError } from "@connectrpc/connect";
import { sql } from "kysely";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { createLogger } from "../src/logger.ts";
import { NOT_PUBLIC } from "../src/providers/webhook-url.ts";
import { createWebhookTransport, signatures } from "../src/webhooks/webhook.http.ts";
import { IDLE_CHECK_MS } from "../src/webhooks/webhook.worker.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { type Received, type Receiver, startReceiver } from "./helpers/receiver.ts";

const LEADS = "/api/v1/public/leads/";
const PROVIDERS = "/api/v1/lead_providers/";
/** Retries after 50 ms, three times, so a test sees the whole schedule in a moment. */
const FAST_RETRIES = { WEBHOOK_RETRY_SCHEDULE: "0.05,0.05,0.05", RATE_LIMIT_PER_MINUTE: "100000" };

/**
 * Standard Webhooks' signature computed here with node:crypto alone (not the package the service
 * signs with): HMAC-SHA256, keyed by the base64 secret after `whsec_`, over `id.timestamp.body`.
 */
function independentSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * The event as the receiver got it, after checking its signature twice: with the reference
 * package, and independently (so a signing package that left the body out would be caught).
 */
function verified(r: Received, secret: string): Json {
  const expected = independentSignature(
    secret,
    r.headers["webhook-id"] ?? "",
    r.headers["webhook-timestamp"] ?? "",
    r.body,
  );
  expect((r.headers["webhook-signature"] ?? "").split(" ")).toContain(expected);
  return new Webhook(secret).verify(r.body, r.headers) as Json;
}

describe("Standard Webhooks signatures", () => {
  it("reproduce the specification's published test vector, and an independent HMAC of id.timestamp.body", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const body = '{"test": 2432232314}';
    const at = new Date(1614265330 * 1000);
    expect(signatures([secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", at, body)).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
    expect(independentSignature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body)).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
    // Every part is signed: another body, id or time is another signature.
    const other = "whsec_c2VjcmV0LW9mLWEtcm90YXRlZC1lbmRwb2ludA==";
    const both = signatures([secret, other], "msg_1", at, body).split(" ");
    expect(both).toEqual([
      independentSignature(secret, "msg_1", "1614265330", body),
      independentSignature(other, "msg_1", "1614265330", body),
    ]);
    expect(signatures([secret], "msg_1", at, "{}")).not.toBe(signatures([secret], "msg_1", at, body));
  });
});

describe.each(BACKENDS)("webhooks ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let receiver: Receiver;
  const workflow = () => connectClient(LeadWorkflowService, t.port, "grpc");
  const providers = () => connectClient(ProviderService, t.port, "grpc");

  /** A provider whose webhook_url is the receiver; its key and its signing secret. */
  async function subscribedProvider(url = receiver.url) {
    const p = await t.provider(undefined, { webhook_url: url });
    const endpoint = (await (await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: admin })).json()) as Json;
    return { ...p, secret: endpoint.secret as string };
  }
  const createLead = async (key: string, overrides: Record<string, unknown> = {}) =>
    (await (await t.call("POST", LEADS, { body: leadBody(overrides), auth: key })).json()) as Json;
  const move = (leadId: number, toState: LeadState) =>
    workflow().transitionLead({ leadId: BigInt(leadId), toState }, bearer(admin));
  const deliveries = async (providerId: number, query = "") =>
    (await (
      await t.call("GET", `${PROVIDERS}${providerId}/webhook_deliveries/${query}`, { auth: admin })
    ).json()) as Json;

  const logs: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logs.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    t = await startTestApp(backend, FAST_RETRIES, { logger: createLogger("info", sink) });
    admin = await t.token();
  });
  afterAll(() => t.stop());
  afterEach(async () => receiver?.close());

  it("sends each event type once per change, signed per Standard Webhooks, with the lead as GET shows it", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    expect(p.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const lead = await createLead(p.key);
    await move(lead.id, LeadState.QUOTE);
    await move(lead.id, LeadState.QUOTE); // a safe retry: no change, no event
    await workflow().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE, leadStatus: "NEGOTIATING" },
      bearer(admin),
    ); // only the status changes
    await move(lead.id, LeadState.ORDER);
    await receiver.waitFor((all) => all.length >= 4, 10_000, "four events");
    await new Promise((r) => setTimeout(r, 300)); // nothing more arrives
    expect(receiver.received).toHaveLength(4);

    const bodies = receiver.received.map((r) => verified(r, p.secret));
    expect(bodies.map((b) => b.type)).toEqual(["lead.created", "lead.quoted", "lead.status_changed", "lead.ordered"]);
    const current = (await (await t.call("GET", `${LEADS}${lead.external_id}/`, { auth: p.key })).json()) as Json;
    expect(bodies[3]?.data.lead).toEqual(current);
    expect(bodies[0]?.data.lead).toMatchObject({ id: lead.id, state: "LEAD" });
    expect(bodies[1]?.data.lead).toMatchObject({ state: "QUOTE", lead_status: "QUOTE" });
    expect(bodies[2]?.data.lead).toMatchObject({ state: "QUOTE", lead_status: "NEGOTIATING" });

    // webhook-id is the event's id, the one the provider's event list shows.
    const events = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.key })).json()) as Json;
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual(
      events.results.map((e: Json) => e.id).reverse(),
    );
    for (const r of receiver.received) {
      expect(r.headers["content-type"]).toBe("application/json");
      expect(Math.abs(Number(r.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    // A wrong secret does not verify: the signature is really over this body with this secret.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(
        receiver.received[0]?.body ?? "",
        receiver.received[0]?.headers ?? {},
      ),
    ).toThrow();

    const list = await deliveries(p.id);
    expect(list.results.map((d: Json) => [d.type, d.state, d.attempts])).toEqual([
      ["lead.ordered", "delivered", 1],
      ["lead.status_changed", "delivered", 1],
      ["lead.quoted", "delivered", 1],
      ["lead.created", "delivered", 1],
    ]);
    expect(list.results[0]).toMatchObject({ last_status_code: 204, last_error: null, next_attempt_at: null });
  });

  it("picks up a new event at once, not at the next fallback poll", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 300 * i)); // also after the worker has gone idle
      const lead = await createLead(p.key);
      const acknowledged = Date.now();
      await receiver.waitFor((all) => all.length > i, IDLE_CHECK_MS + 2000);
      // Woken by the commit it arrives in tens of ms; a missed wake-up waits for the idle poll
      // (IDLE_CHECK_MS, 5 s). Half of that tells the two apart with room for a loaded machine.
      expect((receiver.received[i] as Received).at - acknowledged).toBeLessThan(IDLE_CHECK_MS / 2);
      expect(verified(receiver.received[i] as Received, p.secret).data.lead.id).toBe(lead.id);
    }
  });

  it("logs each attempt with the event id and status, and counts it in metrics, never the payload or secret", async () => {
    receiver = await startReceiver();
    receiver.answer = (_r, i) => (i === 0 ? 500 : 204);
    const p = await subscribedProvider();
    const lead = await createLead(p.key, { email: "private.person@example.com" });
    await receiver.waitFor((all) => all.length >= 2);
    const eventId = receiver.received[0]?.headers["webhook-id"] as string;
    await expect.poll(() => logs.filter((l) => l.includes(eventId)).length).toBe(2);
    const lines = logs.filter((l) => l.includes(eventId)).map((l) => JSON.parse(l) as Json);
    expect(lines[0]).toMatchObject({
      event_id: eventId,
      status: 500,
      attempt: 1,
      msg: expect.stringContaining("retry"),
    });
    expect(lines[1]).toMatchObject({ event_id: eventId, status: 204, attempt: 2, msg: "webhook delivered" });
    const all = logs.join("\n");
    expect(all).not.toContain(p.secret.slice(6));
    expect(all).not.toContain("private.person@example.com");
    expect(lead.id).toBeGreaterThan(0);

    const metrics = await t.app.metrics.registry.metrics();
    expect(metrics).toMatch(/lead_provider_events_written_total\{type="lead.created"\} [1-9]/);
    expect(metrics).toMatch(/lead_provider_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(metrics).toMatch(/lead_provider_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(metrics).toMatch(/lead_provider_webhook_queue_depth \d+/);
    expect(metrics).toMatch(/lead_provider_webhook_oldest_pending_age_seconds [\d.]+/);
  });

  it("retries a failing receiver and delivers on the fourth attempt (attempts = 4)", async () => {
    receiver = await startReceiver();
    receiver.answer = (_r, i) => (i < 3 ? 500 : 200);
    const p = await subscribedProvider();
    const lead = await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 4, 10_000, "four attempts");
    const ids = new Set(receiver.received.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1); // the same event each time, so the receiver can drop repeats
    for (const r of receiver.received) expect(verified(r, p.secret).data.lead.id).toBe(lead.id);
    await expect
      .poll(async () => (await deliveries(p.id)).results[0], { timeout: 5000 })
      .toMatchObject({
        state: "delivered",
        attempts: 4,
        last_status_code: 200,
        livemode: true,
        lead_id: lead.id,
        order_number: lead.order_number,
      });
    // Its page shows each attempt: three refusals, then the delivery.
    const [delivery] = (await deliveries(p.id)).results;
    const detail = (await (
      await t.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/${delivery.id}/`, { auth: admin })
    ).json()) as Json;
    expect(detail.attempt_log.map((a: Json) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, "the endpoint answered 500"],
      [2, 500, "the endpoint answered 500"],
      [3, 500, "the endpoint answered 500"],
      [4, 200, null],
    ]);
    for (const a of detail.attempt_log) expect(a.latency_ms).toBeGreaterThanOrEqual(0);
    // Another provider's delivery is not found under this one.
    const other = await t.provider();
    const elsewhere = await t.call("GET", `${PROVIDERS}${other.id}/webhook_deliveries/${delivery.id}/`, {
      auth: admin,
    });
    expect(elsewhere.status).toBe(404);
  });

  it("retries a pending delivery now when asked, instead of at its next scheduled attempt", async () => {
    receiver = await startReceiver();
    receiver.answer = (_r, i) => (i < 1 ? 500 : 200);
    const slow = await startTestApp(
      { name: "pglite" },
      { WEBHOOK_RETRY_SCHEDULE: "3600", RATE_LIMIT_PER_MINUTE: "100000" },
    );
    try {
      const token = await slow.token();
      const p = await slow.provider(undefined, { webhook_url: receiver.url });
      await slow.call("POST", LEADS, { body: leadBody(), auth: p.key });
      const list = async () =>
        (await (await slow.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/`, { auth: token })).json()) as Json;
      await expect.poll(async () => (await list()).results[0], { timeout: 5000 }).toMatchObject({ attempts: 1 });
      const [waiting] = (await list()).results;
      expect(waiting.state).toBe("pending"); // next attempt in an hour
      const retry = await slow.call("POST", `${PROVIDERS}${p.id}/webhook_deliveries/${waiting.id}/replay/`, {
        auth: token,
      });
      expect(retry.status).toBe(202);
      await expect
        .poll(async () => (await list()).results[0], { timeout: 5000 })
        .toMatchObject({ state: "delivered", attempts: 2 });
      const log = (await (
        await slow.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: token })
      ).json()) as Json;
      expect(log.results.map((e: Json) => e.action)).toContain("webhook_delivery.retried");
    } finally {
      await slow.stop();
    }
  });

  it("marks a delivery failed when the schedule is spent, and a replay sends it again", async () => {
    receiver = await startReceiver();
    receiver.answer = () => 503;
    const p = await subscribedProvider();
    await createLead(p.key);
    // FAST_RETRIES: the first attempt and three retries.
    await expect
      .poll(async () => (await deliveries(p.id)).results[0], { timeout: 10_000 })
      .toMatchObject({
        state: "failed",
        attempts: 4,
        last_status_code: 503,
        last_error: "the endpoint answered 503",
      });
    expect(receiver.received).toHaveLength(4);

    receiver.answer = () => 200;
    const [failed] = (await deliveries(p.id)).results;
    const replay = await t.call("POST", `${PROVIDERS}${p.id}/webhook_deliveries/${failed.id}/replay/`, { auth: admin });
    expect(replay.status).toBe(202);
    expect(await replay.json()).toMatchObject({ id: failed.id, state: "pending", attempts: 0 });
    await expect
      .poll(async () => (await deliveries(p.id)).results[0], { timeout: 5000 })
      .toMatchObject({
        state: "delivered",
        attempts: 1,
      });
    expect(receiver.received.at(-1)?.headers["webhook-id"]).toBe(failed.event_id);
  });

  it("disables the endpoint on 410 Gone; later events wait as disabled; setting webhook_url enables it again", async () => {
    receiver = await startReceiver();
    receiver.answer = () => 410;
    const p = await subscribedProvider();
    await createLead(p.key);
    await expect
      .poll(async () => (await (await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: admin })).json()) as Json)
      .toMatchObject({ enabled: false, disabled_reason: expect.stringContaining("410 Gone") });
    await createLead(p.key);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(1); // nothing is sent to a disabled endpoint
    const list = await deliveries(p.id);
    expect(list.results.map((d: Json) => d.state)).toEqual(["disabled", "disabled"]);
    expect(list.results[1]).toMatchObject({ attempts: 1, last_status_code: 410 });

    const refused = await t.call("POST", `${PROVIDERS}${p.id}/webhook_deliveries/${list.results[0].id}/replay/`, {
      auth: admin,
    });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: "webhook_disabled" });

    receiver.answer = () => 204;
    const patched = await t.call("PATCH", `${PROVIDERS}${p.id}/`, { auth: admin, body: { webhook_url: receiver.url } });
    expect(patched.status).toBe(200);
    const endpoint = (await (await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: admin })).json()) as Json;
    expect(endpoint).toMatchObject({ enabled: true, disabled_reason: null, secret: p.secret }); // same secret
    await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 2, 5000, "the event after enabling");
    expect(verified(receiver.received[1] as Received, p.secret).type).toBe("lead.created");
  });

  it("sends nothing for a move that was rolled back, and nothing for a change inside a rolled-back transaction", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    const lead = await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 1);
    const refused = (await move(lead.id, LeadState.ORDER).catch((e: unknown) => e)) as ConnectError;
    expect(refused.code).toBe(Code.FailedPrecondition);
    // A move whose transaction fails after its event was written (the audit insert that follows
    // it fails, by a trigger set up for this lead): the service rolls the whole move back, so
    // the lead stays in LEAD and no delivery of the event exists or is sent.
    const db = t.app.database.db;
    const fn = `fail_audit_${lead.id}`;
    await sql
      .raw(`create function ${fn}() returns trigger language plpgsql as $$
        begin
          if new.action = 'lead.moved' and new.target_id = '${lead.id}' then
            raise exception 'the audit write failed';
          end if;
          return new;
        end $$`)
      .execute(db);
    await sql.raw(`create trigger ${fn} before insert on audit_log for each row execute function ${fn}()`).execute(db);
    try {
      const failed = (await move(lead.id, LeadState.QUOTE).catch((e: unknown) => e)) as ConnectError;
      expect(failed.code).toBe(Code.Internal);
    } finally {
      await sql.raw(`drop trigger ${fn} on audit_log`).execute(db);
      await sql.raw(`drop function ${fn}()`).execute(db);
    }
    const after = (await (await t.call("GET", `${LEADS}${lead.external_id}/`, { auth: p.key })).json()) as Json;
    expect(after).toMatchObject({ state: "LEAD", history: [{ to_state: "LEAD" }] });
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(p.id)).results).toHaveLength(1);
  });

  it("delivers a lead's events in order: a later event waits while an earlier one is retried", async () => {
    receiver = await startReceiver();
    let createdFailures = 0;
    receiver.answer = (r) => {
      if (JSON.parse(r.body).type === "lead.created" && createdFailures < 2) {
        createdFailures += 1;
        return 500;
      }
      return 204;
    };
    const p = await subscribedProvider();
    const lead = await createLead(p.key);
    await move(lead.id, LeadState.QUOTE);
    await move(lead.id, LeadState.ORDER);
    await receiver.waitFor((all) => all.length >= 5, 10_000, "three events after two failures");
    const firstArrival = ["lead.created", "lead.quoted", "lead.ordered"].map((type) =>
      receiver.received.findIndex((r) => JSON.parse(r.body).type === type),
    );
    expect(firstArrival).toEqual([0, 3, 4]);
    expect(receiver.received.slice(0, 3).every((r) => JSON.parse(r.body).type === "lead.created")).toBe(true);
  });

  it("signs with both secrets during a rotation's overlap, and only the new one after an immediate rotation", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    const rotated = await t.call("POST", `${PROVIDERS}${p.id}/webhook/rotate_secret/`, {
      auth: admin,
      body: { overlap_seconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    const overlap = (await rotated.json()) as Json;
    expect(overlap.secret).not.toBe(p.secret);
    expect(Date.parse(overlap.previous_secret_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 1);
    const first = receiver.received[0] as Received;
    expect(first.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verified(first, p.secret).type).toBe("lead.created"); // a receiver still on the old secret
    expect(verified(first, overlap.secret).type).toBe("lead.created"); // and one already on the new

    const immediate = (await (
      await t.call("POST", `${PROVIDERS}${p.id}/webhook/rotate_secret/`, { auth: admin })
    ).json()) as Json;
    expect(immediate.previous_secret_expires_at).toBeNull();
    await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 2);
    const second = receiver.received[1] as Received;
    expect(second.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verified(second, immediate.secret).type).toBe("lead.created");
    expect(() => verified(second, overlap.secret)).toThrow();
  });

  it("sends a test event on demand and reports the receiver's answer", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    receiver.answer = () => 202;
    const res = await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin });
    expect(res.status).toBe(200);
    const result = (await res.json()) as Json;
    expect(result).toMatchObject({ delivered: true, status_code: 202, error: null });
    expect(result.latency_ms).toBeGreaterThanOrEqual(0);
    const body = verified(receiver.received[0] as Received, p.secret);
    expect(body).toMatchObject({ type: "webhook.test", livemode: false, data: {} });
    expect(receiver.received[0]?.headers["webhook-id"]).toBe(result.event_id);

    receiver.answer = () => 500;
    expect(await (await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin })).json()).toMatchObject({
      delivered: false,
      status_code: 500,
      error: "the endpoint answered 500",
    });
    const listed = await deliveries(p.id);
    expect(listed.results).toEqual([]); // tests are not deliveries, but they are listed as tests
    expect(listed.test_events.map((e: Json) => [e.status_code, e.error])).toEqual([
      [500, "the endpoint answered 500"],
      [202, null],
    ]);
    expect(listed.test_events[1].event_id).toBe(result.event_id);

    const none = await t.provider();
    const noUrl = await t.call("POST", `${PROVIDERS}${none.id}/webhook/test/`, { auth: admin });
    expect(noUrl.status).toBe(409);
    expect(await noUrl.json()).toMatchObject({ code: "webhook_not_configured" });
    expect(await (await t.call("GET", `${PROVIDERS}${none.id}/webhook/`, { auth: admin })).json()).toMatchObject({
      url: null,
      secret: null,
      enabled: true,
    });
  });

  it("reports a receiver that does not answer in time, and follows no redirect", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    receiver.answer = () => 302;
    expect(await (await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin })).json()).toMatchObject({
      delivered: false,
      status_code: 302,
      error: "the endpoint answered 302; redirects are not followed",
    });
    expect(receiver.received).toHaveLength(1);
  });

  it("pages the delivery list by cursor, and checks every parameter", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    for (let i = 0; i < 3; i++) await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 3);
    const first = await deliveries(p.id, "?page_size=2");
    expect(first.results).toHaveLength(2);
    expect(first.next).toBe(`${PROVIDERS}${p.id}/webhook_deliveries/?page_size=2&page_token=${first.next_page_token}`);
    const second = (await (await t.call("GET", first.next, { auth: admin })).json()) as Json;
    expect(second.results).toHaveLength(1);
    expect(second.next_page_token).toBeNull();
    expect(new Set([...first.results, ...second.results].map((d: Json) => d.id)).size).toBe(3);

    const bad = await t.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/?page_token=nope!`, { auth: admin });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).errors[0]).toMatchObject({ field: "page_token" });
    const overlap = await t.call("POST", `${PROVIDERS}${p.id}/webhook/rotate_secret/`, {
      auth: admin,
      body: { overlap_seconds: 604801 },
    });
    expect(overlap.status).toBe(400);
    expect(((await overlap.json()) as Json).errors[0]).toMatchObject({ field: "overlap_seconds" });
    const missing = await t.call("POST", `${PROVIDERS}${p.id}/webhook_deliveries/999999999/replay/`, { auth: admin });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "delivery_not_found" });
    expect((await t.call("GET", `${PROVIDERS}999999999/webhook/`, { auth: admin })).status).toBe(404);
    // Administrators only.
    const notAdmin = await t.token({ position: "AGENT" });
    expect((await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: notAdmin })).status).toBe(403);
    expect((await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: p.key })).status).toBe(401);
  });

  it("offers the same operations on the gRPC ProviderService", async () => {
    receiver = await startReceiver();
    const p = await subscribedProvider();
    const auth = bearer(admin);
    const { endpoint } = await providers().getWebhook({ id: BigInt(p.id) }, auth);
    expect(endpoint).toMatchObject({ url: receiver.url, secret: p.secret, enabled: true });
    const test = await providers().sendWebhookTest({ id: BigInt(p.id) }, auth);
    expect(test).toMatchObject({ delivered: true, statusCode: 204 });
    await createLead(p.key);
    await receiver.waitFor((all) => all.length >= 2);
    await expect
      .poll(async () => (await providers().listWebhookDeliveries({ id: BigInt(p.id) }, auth)).deliveries[0]?.state)
      .toBe("delivered");
    const { deliveries: list } = await providers().listWebhookDeliveries({ id: BigInt(p.id), pageSize: 1 }, auth);
    const { delivery } = await providers().replayWebhookDelivery(
      { id: BigInt(p.id), deliveryId: list[0]?.id ?? 0n },
      auth,
    );
    expect(delivery).toMatchObject({ state: "pending", attempts: 0 });
    await receiver.waitFor((all) => all.length >= 3);
    const rotated = await providers().rotateWebhookSecret({ id: BigInt(p.id), overlapSeconds: 60 }, auth);
    expect(rotated.secret).toMatch(/^whsec_/);
    const bad = (await providers()
      .rotateWebhookSecret({ id: BigInt(p.id), overlapSeconds: -1 }, auth)
      .catch((e: unknown) => e)) as ConnectError;
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.message).toContain("overlap_seconds");
  });
});

describe("webhook targets inside the network", () => {
  it("refuses a private or loopback target in production, checked at send time", async () => {
    const receiver = await startReceiver();
    const t = await startTestApp(BACKENDS[0] ?? { name: "pglite" }, {
      NODE_ENV: "production",
      JWT_SECRET: `webhook-test-jwt-secret-${"x".repeat(16)}`,
      API_KEY_SECRET: `webhook-test-api-key-secret-${"y".repeat(16)}`,
      PUBLIC_BASE_URL: "https://api.example.com",
      ...FAST_RETRIES,
    });
    try {
      const admin = await t.token();
      // Saving such a URL is refused outright in production...
      const refused = await t.call("POST", `${PROVIDERS}create/`, {
        auth: admin,
        body: { name: "Inside Job", webhook_url: `https://127.0.0.1:${receiver.port}/hooks` },
      });
      expect(refused.status).toBe(400);
      // So is a name for this machine written with a trailing dot or in another case, naming the field.
      for (const url of ["https://localhost./hooks", "https://LOCALHOST./hooks", "https://foo.localhost./hooks"]) {
        const res = await t.call("POST", `${PROVIDERS}create/`, {
          auth: admin,
          body: { name: "Dotted", webhook_url: url },
        });
        expect(res.status, url).toBe(400);
        expect(((await res.json()) as Json).errors, url).toEqual([
          { field: "webhook_url", code: "invalid_url", message: NOT_PUBLIC },
        ]);
      }
      // ...and a public name that later points inside (DNS changed after it was saved) is refused
      // when sending: here the stored URL is changed underneath the service.
      const p = await t.provider(undefined, { webhook_url: "https://hooks.example.com/lead-provider" });
      await t.app.database.db
        .updateTable("providers")
        .set({ webhook_url: "https://127.0.0.1/hooks" })
        .where("id", "=", p.id)
        .execute();
      const test = (await (await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin })).json()) as Json;
      expect(test).toMatchObject({ delivered: false, status_code: null });
      // One message for every refused target, naming no address.
      expect(test.error).toBe(NOT_PUBLIC);
      expect(receiver.received).toEqual([]);
    } finally {
      await t.stop();
      await receiver.close();
    }
  });

  it("checks the address a host name resolves to, not only literal addresses", async () => {
    const receiver = await startReceiver();
    const transport = createWebhookTransport({ timeoutMs: 2000, allowPrivateTargets: false, production: false });
    try {
      const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
      const event = {
        id: "evt_00000000000000000000000000000001",
        type: "webhook.test",
        occurredAt: new Date(),
        livemode: false,
      };
      for (const host of ["localhost", "127.0.0.1", "[::1]", "0x7f000001"]) {
        const outcome = await transport.send(`http://${host}:${receiver.port}/hooks`, [secret], event);
        expect(outcome.statusCode, host).toBeNull();
        expect(outcome.error, host).toBe(NOT_PUBLIC);
      }
      expect(receiver.received).toEqual([]);
    } finally {
      transport.close();
      await receiver.close();
    }
  });
});

describe("a receiver that accepts and never answers", () => {
  it("is cut off at WEBHOOK_TIMEOUT_MS, recorded as a timeout and retried", async () => {
    const t = await startTestApp(BACKENDS[0] ?? { name: "pglite" }, {
      WEBHOOK_TIMEOUT_MS: "300",
      WEBHOOK_RETRY_SCHEDULE: "60",
    });
    const receiver = await startReceiver();
    receiver.answer = () => "hang";
    try {
      const admin = await t.token();
      const p = await t.provider(undefined, { webhook_url: receiver.url });
      const started = Date.now();
      const test = (await (await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin })).json()) as Json;
      expect(test).toMatchObject({ delivered: false, status_code: null, error: "no answer within 300 ms" });
      expect(test.latency_ms).toBeGreaterThanOrEqual(290);
      expect(Date.now() - started).toBeLessThan(3000);

      // A real delivery: the attempt is recorded as the timeout, and the delivery waits to retry.
      await t.call("POST", LEADS, { auth: p.key, body: leadBody() });
      let delivery: Json | undefined;
      await expect
        .poll(
          async () => {
            const list = (await (
              await t.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/`, { auth: admin })
            ).json()) as Json;
            delivery = (list.results as Json[]).find((d) => d.type === "lead.created");
            return delivery?.last_error;
          },
          { timeout: 5000 },
        )
        .toBe("no answer within 300 ms");
      expect(delivery).toMatchObject({ state: "pending", attempts: 1, last_status_code: null });
      expect(new Date(delivery?.next_attempt_at).getTime()).toBeGreaterThan(Date.now() + 30_000);
    } finally {
      await receiver.close();
      await t.stop();
    }
  });
});
