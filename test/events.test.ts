import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

const LEADS = "/api/v1/public/leads/";
const EVENTS = "/api/v1/public/events/";

describe.each(BACKENDS)("lead events in the outbox ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  let admin: string;
  const workflow = () => connectClient(LeadWorkflowService, t.port, "grpc");
  const events = async (query = "", auth = key) => {
    const res = await t.call("GET", `${EVENTS}${query}`, { auth });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const eventsOf = async (leadId: number) =>
    (await events("?page_size=100")).body.results.filter((e: Json) => e.data.lead.id === leadId).reverse();
  const read = async (externalId: string) =>
    (await (await t.call("GET", `${LEADS}${encodeURIComponent(externalId)}/`, { auth: key })).json()) as Json;

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000" });
    ({ key } = await t.provider());
    ({ key: otherKey } = await t.provider());
    admin = await t.token();
  });
  afterAll(() => t.stop());

  it("records lead.created with the lead exactly as GET shows it", async () => {
    const created = (await (await t.call("POST", LEADS, { body: leadBody(), auth: key })).json()) as Json;
    const [event, ...more] = await eventsOf(created.id);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ type: "lead.created" });
    expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(event.data.lead).toEqual(await read(created.external_id));
    expect(Date.parse(event.created_at)).toBe(Date.parse(created.created_at));
  });

  it("records one event per move, each with the lead after it; a repeat or a refused move records none", async () => {
    const created = (await (await t.call("POST", LEADS, { body: leadBody(), auth: key })).json()) as Json;
    const leadId = BigInt(created.id);
    await workflow().transitionLead({ leadId, toState: LeadState.QUOTE, leadStatus: "QUOTED" }, bearer(admin));
    await workflow().transitionLead({ leadId, toState: LeadState.QUOTE }, bearer(admin)); // a safe retry
    const refused = (await workflow()
      .transitionLead({ leadId, toState: LeadState.LEAD }, bearer(admin))
      .catch((e: unknown) => e)) as ConnectError;
    expect(refused.code).toBe(Code.FailedPrecondition); // rolled back: no event
    await workflow().transitionLead({ leadId, toState: LeadState.ORDER, leadStatus: "BOOKED" }, bearer(admin));
    const recorded = await eventsOf(created.id);
    expect(recorded.map((e: Json) => e.type)).toEqual(["lead.created", "lead.quoted", "lead.ordered"]);
    expect(recorded[1].data.lead).toMatchObject({ state: "QUOTE", lead_status: "QUOTED" });
    expect(recorded[2].data.lead).toEqual(await read(created.external_id));
    expect(new Set(recorded.map((e: Json) => e.id)).size).toBe(3);
  });

  it("records nothing for a duplicate external_id, and never shows one provider another's events", async () => {
    const body = leadBody();
    const first = (await (await t.call("POST", LEADS, { body, auth: key })).json()) as Json;
    expect((await t.call("POST", LEADS, { body, auth: key })).status).toBe(400);
    expect(await eventsOf(first.id)).toHaveLength(1);
    const theirs = await events("?page_size=100", otherKey);
    expect(theirs.body.results).toEqual([]);
  });

  it("filters by type and created_after and pages newest first", async () => {
    const before = new Date().toISOString();
    for (let i = 0; i < 3; i++) await t.call("POST", LEADS, { body: leadBody(), auth: key });
    const recent = await events(`?created_after=${encodeURIComponent(before)}&page_size=2`);
    expect(recent.body.results).toHaveLength(2);
    const rest = await events(recent.body.next.slice(EVENTS.length));
    expect(rest.body.results).toHaveLength(1);
    expect(rest.body.next_page_token).toBeNull();
    const ids = [...recent.body.results, ...rest.body.results].map((e: Json) => e.data.lead.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const orders = await events("?type=lead.ordered");
    expect(orders.body.results.map((e: Json) => e.type)).toEqual(["lead.ordered"]);
    expect((await events("?type=lead.deleted")).status).toBe(400);
  });

  it("lists the same events over gRPC", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const rest = await events("?page_size=5");
    const page = await client.listEvents({ pageSize: 5 }, bearer(key));
    expect(page.events.map((e) => e.id)).toEqual(rest.body.results.map((e: Json) => e.id));
    expect(page.events[0]?.lead?.externalId).toBe(rest.body.results[0].data.lead.external_id);
    const ordered = await client.listEvents({ type: "lead.ordered" }, bearer(key));
    expect(ordered.events).toHaveLength(1);
  });
});
