/**
 * A provider can never read or change another provider's data, on any path; a provider key
 * never reaches management, states or workflow. Every endpoint, REST and RPC, is listed.
 */
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CommonService } from "../generated/proto/leadprovider/v1/common_service_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, PROTOCOLS } from "./helpers/grpc.ts";

describe.each(BACKENDS)("access between providers and surfaces ($name)", (backend) => {
  let t: TestApp;
  let alice: { id: number; key: string };
  let bob: { id: number; key: string };
  let aliceLead: Json;
  beforeAll(async () => {
    t = await startTestApp(backend);
    alice = await t.provider("Alice Leads");
    bob = await t.provider("Bob Leads");
    const res = await t.call("POST", "/api/v1/public/leads/", {
      body: leadBody({ external_id: "shared-123" }),
      auth: alice.key,
    });
    expect(res.status).toBe(201);
    aliceLead = (await res.json()) as Json;
  });
  afterAll(() => t.stop());

  it("REST: another provider's lead is not found, and reusing its external_id creates a separate lead", async () => {
    const peek = await t.call("GET", "/api/v1/public/leads/shared-123/", { auth: bob.key });
    expect(peek.status).toBe(404);
    const own = await t.call("POST", "/api/v1/public/leads/", {
      body: leadBody({ external_id: "shared-123" }),
      auth: bob.key,
    });
    expect(own.status).toBe(201);
    const bobLead = (await own.json()) as Json;
    expect(bobLead.id).not.toBe(aliceLead.id);
    const mine = (await (await t.call("GET", "/api/v1/public/leads/shared-123/", { auth: alice.key })).json()) as Json;
    expect(mine.id).toBe(aliceLead.id);
    expect(mine.email).toBe(aliceLead.email);
  });

  it.each(PROTOCOLS)("%s: another provider's lead is NOT_FOUND", async (protocol) => {
    const client = connectClient(PublicLeadService, t.port, protocol);
    const created = await t.call("POST", "/api/v1/public/leads/", {
      body: leadBody({ external_id: `only-${protocol}` }),
      auth: alice.key,
    });
    expect(created.status).toBe(201);
    // Its owner reads it over this protocol; the other provider gets NOT_FOUND.
    const own = await client.getLead({ externalId: `only-${protocol}` }, bearer(alice.key));
    expect(own.lead?.externalId).toBe(`only-${protocol}`);
    const hidden = await client.getLead({ externalId: `only-${protocol}` }, bearer(bob.key)).catch((e: unknown) => e);
    expect((hidden as ConnectError).code).toBe(Code.NotFound);
  });

  it.each([
    ["GET", "/api/v1/lead_providers/"],
    ["POST", "/api/v1/lead_providers/create/"],
    ["GET", "/api/v1/lead_providers/1/"],
    ["PATCH", "/api/v1/lead_providers/1/"],
    ["POST", "/api/v1/lead_providers/1/generate_api_key/"],
    ["GET", "/api/v1/common/states/"],
  ])("REST %s %s refuses a provider key with 401", async (method, path) => {
    const res = await t.call(method, path, { auth: alice.key, ...(method !== "GET" && { body: { name: "x" } }) });
    expect(res.status).toBe(401);
  });

  it("a provider key cannot read or change a provider record, and issues nothing", async () => {
    const admin = await t.token();
    const before = (await (await t.call("GET", `/api/v1/lead_providers/${bob.id}/`, { auth: admin })).json()) as Json;
    const patch = await t.call("PATCH", `/api/v1/lead_providers/${bob.id}/`, {
      auth: alice.key,
      body: { is_active: false },
    });
    expect(patch.status).toBe(401);
    const issue = await t.call("POST", `/api/v1/lead_providers/${bob.id}/generate_api_key/`, { auth: alice.key });
    expect(issue.status).toBe(401);
    expect(JSON.stringify(await issue.json())).not.toMatch(/lp_live_/);
    const after = (await (await t.call("GET", `/api/v1/lead_providers/${bob.id}/`, { auth: admin })).json()) as Json;
    expect(after).toEqual(before); // still active, the same key
    expect((await t.call("GET", "/api/v1/public/leads/", { auth: bob.key })).status).toBe(200);
  });

  const ADMIN_RPCS: ReadonlyArray<
    [string, (c: ReturnType<typeof connectClient<typeof ProviderService>>, o: object) => Promise<unknown>]
  > = [
    ["ListProviders", (c, o) => c.listProviders({}, o)],
    ["CreateProvider", (c, o) => c.createProvider({ name: "Mallory" }, o)],
    ["GetProvider", (c, o) => c.getProvider({ id: 1n }, o)],
    ["UpdateProvider", (c, o) => c.updateProvider({ id: 1n, isActive: false }, o)],
    ["GenerateApiKey", (c, o) => c.generateApiKey({ id: 1n }, o)],
  ];
  it.each(ADMIN_RPCS)("ProviderService.%s refuses a provider key with UNAUTHENTICATED", async (_name, call) => {
    const err = await call(connectClient(ProviderService, t.port, "grpc"), bearer(alice.key)).catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });

  const WORKFLOW_RPCS: ReadonlyArray<
    [string, (c: ReturnType<typeof connectClient<typeof LeadWorkflowService>>, o: object) => Promise<unknown>]
  > = [
    ["TransitionLead", (c, o) => c.transitionLead({ leadId: 1n, toState: 2 }, o)],
    ["FindLead", (c, o) => c.findLead({ key: { case: "id", value: 1n } }, o)],
    ["ListLeads", (c, o) => c.listLeads({ state: 1 }, o)],
    [
      "WatchLeadChanges",
      async (c, o) => {
        for await (const _ of c.watchLeadChanges({}, o)) return;
      },
    ],
  ];
  it.each(WORKFLOW_RPCS)("LeadWorkflowService.%s refuses a provider key with UNAUTHENTICATED", async (_name, call) => {
    const err = await call(connectClient(LeadWorkflowService, t.port, "grpc"), bearer(alice.key)).catch(
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it("CommonService.ListStates refuses a provider key with UNAUTHENTICATED", async () => {
    const err = await connectClient(CommonService, t.port, "grpc")
      .listStates({}, bearer(alice.key))
      .catch((e: unknown) => e);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });

  it("the lead is unchanged after every refused attempt", async () => {
    const lead = (await (await t.call("GET", "/api/v1/public/leads/shared-123/", { auth: alice.key })).json()) as Json;
    expect(lead).toMatchObject({ state: "LEAD", history: [{ to_state: "LEAD" }] });
  });
});
