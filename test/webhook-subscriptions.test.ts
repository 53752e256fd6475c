/**
 * Webhook event subscriptions end to end (docs/webhooks.md, decision 0038): real receiving HTTP
 * servers, the service's real delivery workers, on PGlite and, when TEST_DATABASE_URL is set,
 * Postgres. An endpoint gets only the event types it chose; "every type" (null) gets all of them;
 * an unknown type is refused naming the field; a change reaches only later events.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { EVENT_TYPES } from "../src/events/event.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";

const LEADS = "/api/v1/public/leads/";
const PROVIDERS = "/api/v1/lead_providers/";
const PASSWORD = "violet tundra harbor 87 quay";

describe.each(BACKENDS)("webhook event subscriptions ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const receivers: Receiver[] = [];
  const workflow = () => connectClient(LeadWorkflowService, t.port, "grpc");

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000" });
    admin = await t.token();
  });
  afterAll(() => t.stop());
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };
  const json = async (res: Response) => (await res.json()) as Json;
  const createLead = async (key: string) => json(await t.call("POST", LEADS, { body: leadBody(), auth: key }));
  const quote = (leadId: number) =>
    workflow().transitionLead({ leadId: BigInt(leadId), toState: LeadState.QUOTE }, bearer(admin));
  const patch = (id: number, body: Json) => t.call("PATCH", `${PROVIDERS}${id}/`, { auth: admin, body });
  const deliveryTypes = async (id: number) =>
    ((await json(await t.call("GET", `${PROVIDERS}${id}/webhook_deliveries/`, { auth: admin }))).results as Json[])
      .map((d) => [d.type, d.lead_id])
      .reverse();
  const typesOf = (r: Receiver) => r.received.map((x) => [JSON.parse(x.body).type, JSON.parse(x.body).data.lead?.id]);

  it("delivers only the chosen type to one endpoint and every type to another set to all", async () => {
    const [onlyQuoted, all] = [await receiver(), await receiver()];
    const a = await t.provider(undefined, { webhook_url: onlyQuoted.url, webhook_event_types: ["lead.quoted"] });
    const b = await t.provider(undefined, { webhook_url: all.url });
    const shown = await json(await t.call("GET", `${PROVIDERS}${a.id}/`, { auth: admin }));
    expect(shown.webhook_event_types).toEqual(["lead.quoted"]);
    expect((await json(await t.call("GET", `${PROVIDERS}${b.id}/`, { auth: admin }))).webhook_event_types).toBeNull();
    const endpoint = await json(await t.call("GET", `${PROVIDERS}${a.id}/webhook/`, { auth: admin }));
    expect(endpoint.event_types).toEqual(["lead.quoted"]);

    const leadA = await createLead(a.key);
    const leadB = await createLead(b.key);
    await quote(leadA.id);
    await quote(leadB.id);

    await onlyQuoted.waitFor((r) => r.length >= 1, 10_000, "the quoted event");
    await all.waitFor((r) => r.length >= 2, 10_000, "both events");
    expect(typesOf(all)).toEqual([
      ["lead.created", leadB.id],
      ["lead.quoted", leadB.id],
    ]);
    // The unsubscribed event was never queued: the only delivery is the quoted one.
    expect(await deliveryTypes(a.id)).toEqual([["lead.quoted", leadA.id]]);
    expect(await deliveryTypes(b.id)).toEqual([
      ["lead.created", leadB.id],
      ["lead.quoted", leadB.id],
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(typesOf(onlyQuoted)).toEqual([["lead.quoted", leadA.id]]);

    // The event itself still exists: the provider's events feed lists both.
    const feed = await json(await t.call("GET", "/api/v1/public/events/", { auth: a.key }));
    expect((feed.results as Json[]).map((e) => e.type).sort()).toEqual(["lead.created", "lead.quoted"]);
  }, 120_000);

  it("refuses an unknown or empty list naming the field and the allowed types in words, storing nothing", async () => {
    const r = await receiver();
    const a = await t.provider(undefined, { webhook_url: r.url, webhook_event_types: ["lead.created"] });
    const refused = await patch(a.id, { webhook_event_types: ["lead.created", "lead.teleported"], notes: "changed" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = await json(refused);
    expect(problem.errors.map((e: Json) => e.field)).toEqual(["webhook_event_types"]);
    const message = problem.errors[0].message as string;
    for (const type of EVENT_TYPES) expect(message).toContain(type);
    expect(message).toContain("a lead was stored");
    for (const bad of [[], "lead.created", [7], ["LEAD.CREATED"]]) {
      const res = await patch(a.id, { webhook_event_types: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await json(res)).errors[0].field).toMatch(/^\/?webhook_event_types/);
    }
    const after = await json(await t.call("GET", `${PROVIDERS}${a.id}/`, { auth: admin }));
    expect(after.webhook_event_types).toEqual(["lead.created"]);
    expect(after.notes).toBeNull();

    const name = `Refused ${backend.name} ${Date.now()}`;
    const create = await t.call("POST", `${PROVIDERS}create/`, {
      auth: admin,
      body: { name, webhook_event_types: ["nope"] },
    });
    expect(create.status).toBe(400);
    const list = await json(await t.call("GET", `${PROVIDERS}?search=${encodeURIComponent(name)}`, { auth: admin }));
    expect(list.count).toBe(0);

    // gRPC: the same rule, the same field.
    const grpc = connectClient(ProviderService, t.port, "grpc");
    await expect(
      grpc.updateProvider({ id: BigInt(a.id), webhookEventTypes: { types: ["lead.nope"] } }, bearer(admin)),
    ).rejects.toThrow(/webhook_event_types/);
    const set = await grpc.updateProvider(
      { id: BigInt(a.id), webhookEventTypes: { types: ["lead.ordered", "lead.created"] } },
      bearer(admin),
    );
    expect(set.provider?.webhookEventTypes).toEqual(["lead.created", "lead.ordered"]);
    const everything = await grpc.updateProvider({ id: BigInt(a.id), webhookEventTypes: { types: [] } }, bearer(admin));
    expect(everything.provider?.webhookEventTypes).toEqual([]);
    expect((await json(await t.call("GET", `${PROVIDERS}${a.id}/`, { auth: admin }))).webhook_event_types).toBeNull();
  }, 120_000);

  it("applies a change to events written after it, and leaves another provider's endpoint as it was", async () => {
    const [mine, theirs] = [await receiver(), await receiver()];
    const a = await t.provider(undefined, { webhook_url: mine.url, webhook_event_types: ["lead.created"] });
    const b = await t.provider(undefined, { webhook_url: theirs.url, webhook_event_types: ["lead.created"] });
    const first = await createLead(a.key);
    await mine.waitFor((r) => r.length >= 1, 10_000, "the first lead.created");

    expect((await patch(a.id, { webhook_event_types: ["lead.quoted"] })).status).toBe(200);
    const second = await createLead(a.key); // no longer subscribed: not queued
    await quote(first.id); // now subscribed
    await mine.waitFor((r) => r.length >= 2, 10_000, "the quoted event");
    expect(await deliveryTypes(a.id)).toEqual([
      ["lead.created", first.id],
      ["lead.quoted", first.id],
    ]);
    expect(typesOf(mine)).not.toContainEqual(["lead.created", second.id]);

    // Provider b's subscription and deliveries are its own.
    const other = await createLead(b.key);
    await quote(other.id);
    await theirs.waitFor((r) => r.length >= 1, 10_000, "b's lead.created");
    expect((await json(await t.call("GET", `${PROVIDERS}${b.id}/`, { auth: admin }))).webhook_event_types).toEqual([
      "lead.created",
    ]);
    expect(await deliveryTypes(b.id)).toEqual([["lead.created", other.id]]);

    // Back to every type: later events of every type are sent again.
    expect((await patch(a.id, { webhook_event_types: null })).status).toBe(200);
    const third = await createLead(a.key);
    await mine.waitFor((r) => r.length >= 3, 10_000, "the third lead's lead.created");
    expect(typesOf(mine)).toContainEqual(["lead.created", third.id]);
  }, 120_000);

  it("lets a provider choose its event types in the portal, refusing an unknown one", async () => {
    const r = await receiver();
    const a = await t.provider(undefined, { webhook_url: r.url });
    const invite = await json(
      await t.call("POST", `${PROVIDERS}${a.id}/portal_users/`, {
        auth: admin,
        body: { email: `subs.${Date.now()}@${backend.name}.example`, name: "Dana Ruiz" },
      }),
    );
    const token = String(invite.invite_url).split("#invite=")[1] ?? "";
    const origin = t.url;
    const portal = (method: string, path: string, cookie?: string, body?: unknown) =>
      t.call(method, `/api/v1/portal/${path}`, {
        ...(body !== undefined && { body }),
        headers: { origin, ...(cookie && { cookie }) },
      });
    expect((await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD })).status).toBe(200);
    const signIn = await portal("POST", "sign_in/", undefined, { email: invite.user.email, password: PASSWORD });
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";

    const set = await portal("PUT", "webhook/", cookie, { webhook_url: r.url, webhook_event_types: ["lead.quoted"] });
    expect(set.status).toBe(200);
    expect((await json(set)).event_types).toEqual(["lead.quoted"]);
    const bad = await portal("PUT", "webhook/", cookie, { webhook_url: r.url, webhook_event_types: ["lead.gone"] });
    expect(bad.status).toBe(400);
    expect((await json(bad)).errors[0].field).toBe("webhook_event_types");
    // Sending the URL alone keeps the subscription.
    await portal("PUT", "webhook/", cookie, { webhook_url: r.url });
    expect((await json(await portal("GET", "webhook/", cookie))).event_types).toEqual(["lead.quoted"]);

    const lead = await createLead(a.key);
    await quote(lead.id);
    await r.waitFor((x) => x.length >= 1, 10_000, "the quoted event");
    expect(await deliveryTypes(a.id)).toEqual([["lead.quoted", lead.id]]);
  }, 120_000);
});
