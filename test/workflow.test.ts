import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, grpcCall, grpcJsClient } from "./helpers/grpc.ts";

describe.each(BACKENDS)("lead workflow LEAD → QUOTE → ORDER ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  let providerId: number;
  let internal: string;
  const client = () => connectClient(LeadWorkflowService, t.port, "grpc");
  const newLead = async () => {
    const body = leadBody();
    const res = await t.call("POST", "/api/v1/public/leads/", { body, auth: key });
    return (await res.json()) as Json;
  };
  const read = async (externalId: string) =>
    (await (await t.call("GET", `/api/v1/public/leads/${externalId}/`, { auth: key })).json()) as Json;
  const rejection = async (p: Promise<unknown>) =>
    (await p.then(
      () => undefined,
      (e: unknown) => e,
    )) as ConnectError;

  beforeAll(async () => {
    t = await startTestApp(backend, {
      RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_PER_DAY: "1000000",
      // the quote engine is an internal system holding the configured lead-processing claim
      JWT_WORKFLOW_VALUE: "DISPATCHER",
    });
    ({ key, id: providerId } = await t.provider());
    internal = await t.token({ position: "DISPATCHER" }, { sub: "quote-engine" });
  });
  afterAll(() => t.stop());

  it("takes a lead from LEAD to ORDER; the provider sees each step and the history", async () => {
    const lead = await newLead();
    const quoted = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE },
      bearer(internal),
    );
    expect(quoted.changed).toBe(true);
    expect(quoted.record?.providerId).toBe(BigInt(providerId));
    const afterQuote = await read(lead.external_id);
    expect(afterQuote).toMatchObject({ state: "QUOTE", lead_status: "QUOTE" });
    expect(Date.parse(afterQuote.state_changed_at)).toBeGreaterThanOrEqual(Date.parse(lead.state_changed_at));

    // the second step through an independent grpc-js client
    const js = grpcJsClient(t.port, "LeadWorkflowService");
    try {
      const ordered = await grpcCall<Json>(
        js,
        "TransitionLead",
        { lead_id: String(lead.id), to_state: "LEAD_STATE_ORDER", lead_status: "BOOKED" },
        internal,
      );
      expect(ordered.error).toBeUndefined();
      expect(ordered.response?.record.lead.state).toBe("LEAD_STATE_ORDER");
    } finally {
      js.close();
    }
    const final = await read(lead.external_id);
    expect(final).toMatchObject({ state: "ORDER", lead_status: "BOOKED" });
    expect(final.history.map((h: Json) => [h.from_state, h.to_state, h.lead_status, h.actor])).toEqual([
      // The provider sees roles; the quote engine's JWT sub is for the broker's eyes only.
      [null, "LEAD", "LEAD", "provider"],
      ["LEAD", "QUOTE", "QUOTE", "staff"],
      ["QUOTE", "ORDER", "BOOKED", "staff"],
    ]);
  });

  it("refuses skips and backward moves with FAILED_PRECONDITION naming the current state", async () => {
    const lead = await newLead();
    const skip = await rejection(
      client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.ORDER }, bearer(internal)),
    );
    expect(skip.code).toBe(Code.FailedPrecondition);
    expect(skip.rawMessage).toBe(`lead ${lead.id} is in state LEAD; it can move only to QUOTE`);
    await client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.QUOTE }, bearer(internal));
    const back = await rejection(
      client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.LEAD }, bearer(internal)),
    );
    expect(back.code).toBe(Code.FailedPrecondition);
    expect(back.rawMessage).toContain("is in state QUOTE");
    const unknown = await rejection(
      client().transitionLead({ leadId: 99999999n, toState: LeadState.QUOTE }, bearer(internal)),
    );
    expect(unknown.code).toBe(Code.NotFound);
    const unset = await rejection(client().transitionLead({ leadId: BigInt(lead.id) }, bearer(internal)));
    expect(unset.code).toBe(Code.InvalidArgument);
  });

  it("treats a repeated move as a no-op, and serialises 20 concurrent moves into one", async () => {
    const lead = await newLead();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.QUOTE }, bearer(internal)),
      ),
    );
    expect(results.filter((r) => r.changed)).toHaveLength(1);
    const again = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE },
      bearer(internal),
    );
    expect(again.changed).toBe(false);
    const history = (await read(lead.external_id)).history as Json[];
    expect(history.map((h) => h.to_state)).toEqual(["LEAD", "QUOTE"]);
  });

  it("changes only the lead_status when the state stays and the status differs; the same call again changes nothing", async () => {
    const lead = await newLead();
    const quoted = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE, leadStatus: "QUOTED" },
      bearer(internal),
    );
    const movedAt = (await read(lead.external_id)).state_changed_at;
    const status = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE, leadStatus: "NEGOTIATING" },
      bearer(internal),
    );
    expect(quoted.changed).toBe(true);
    expect(status.changed).toBe(true);
    expect(status.record?.lead?.leadStatus).toBe("NEGOTIATING");
    const again = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE, leadStatus: "NEGOTIATING" },
      bearer(internal),
    );
    expect(again.changed).toBe(false);
    const plain = await client().transitionLead(
      { leadId: BigInt(lead.id), toState: LeadState.QUOTE },
      bearer(internal),
    );
    expect(plain.changed).toBe(false);
    const stored = await read(lead.external_id);
    expect(stored).toMatchObject({ state: "QUOTE", lead_status: "NEGOTIATING", state_changed_at: movedAt });
    expect((stored.history as Json[]).map((h) => [h.from_state, h.to_state, h.lead_status])).toEqual([
      [null, "LEAD", "LEAD"],
      ["LEAD", "QUOTE", "QUOTED"],
      ["QUOTE", "QUOTE", "NEGOTIATING"],
    ]);
  });

  it("finds a lead by id, by order number and by provider and external_id", async () => {
    const lead = await newLead();
    const c = client();
    for (const key of [
      { case: "id" as const, value: BigInt(lead.id) },
      { case: "orderNumber" as const, value: lead.order_number as string },
      {
        case: "providerExternalId" as const,
        value: { providerId: BigInt(providerId), externalId: lead.external_id as string },
      },
    ]) {
      const { record } = await c.findLead({ key }, bearer(internal));
      expect(record?.lead?.orderNumber).toBe(lead.order_number);
    }
    expect(
      (await rejection(c.findLead({ key: { case: "orderNumber", value: "LP-none" } }, bearer(internal)))).code,
    ).toBe(Code.NotFound);
  });

  it("lists leads in a state with a cursor, each lead once", async () => {
    const ids = new Set<number>();
    for (let i = 0; i < 5; i++) ids.add((await newLead()).id);
    const seen: number[] = [];
    let pageToken = "";
    do {
      const page = await client().listLeads({ state: LeadState.LEAD, pageSize: 2, pageToken }, bearer(internal));
      expect(page.records.length).toBeLessThanOrEqual(2);
      seen.push(...page.records.map((r) => Number(r.lead?.id)));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of ids) expect(seen).toContain(id);
  });

  it("streams both moves to a watcher as they happen", async () => {
    const lead = await newLead();
    const abort = new AbortController();
    const stream = connectClient(LeadWorkflowService, t.port, "grpc").watchLeadChanges(
      { providerId: BigInt(providerId) },
      { ...bearer(internal), signal: abort.signal },
    );
    const received: Json[] = [];
    const reading = (async () => {
      try {
        for await (const change of stream) {
          if (Number(change.leadId) !== lead.id) continue;
          received.push({ from: change.change?.fromState, to: change.change?.toState, actor: change.change?.actor });
          if (received.length === 2) abort.abort();
        }
      } catch (err) {
        if (!abort.signal.aborted) throw err;
      }
    })();
    await new Promise((r) => setTimeout(r, 500)); // let the subscription reach the server
    await client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.QUOTE }, bearer(internal));
    await client().transitionLead({ leadId: BigInt(lead.id), toState: LeadState.ORDER }, bearer(internal));
    await Promise.race([
      reading,
      new Promise((_, reject) => setTimeout(() => reject(new Error("no changes in 10 s")), 10_000)),
    ]);
    expect(received).toEqual([
      { from: LeadState.LEAD, to: LeadState.QUOTE, actor: "quote-engine" },
      { from: LeadState.QUOTE, to: LeadState.ORDER, actor: "quote-engine" },
    ]);
  });

  it("answers UNAUTHENTICATED without a JWT, with a bad one, or with a provider API key", async () => {
    const lead = await newLead();
    const req = { leadId: BigInt(lead.id), toState: LeadState.QUOTE };
    for (const options of [{}, bearer("not.a.jwt"), bearer(key)]) {
      const err = await rejection(client().transitionLead(req, options));
      expect(err.code).toBe(Code.Unauthenticated);
    }
    expect((await read(lead.external_id)).state).toBe("LEAD");
  });
});
