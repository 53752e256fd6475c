import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

const LEADS = "/api/v1/public/leads/";

describe.each(BACKENDS)("a provider lists its own leads ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  let otherKey: string;
  const created: Json[] = [];
  const list = async (query: string, auth = key) => {
    const res = await t.call("GET", `${LEADS}${query}`, { auth });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000" });
    ({ key } = await t.provider());
    ({ key: otherKey } = await t.provider());
    for (let i = 0; i < 5; i++) {
      const res = await t.call("POST", LEADS, { body: leadBody(), auth: key });
      created.push((await res.json()) as Json);
    }
    await t.call("POST", LEADS, { body: leadBody(), auth: otherKey });
  });
  afterAll(() => t.stop());

  it("pages newest first with an opaque token until the last page, over REST", async () => {
    const seen: string[] = [];
    let query = "?page_size=2";
    for (let pages = 0; pages < 5; pages++) {
      const { status, body } = await list(query);
      expect(status).toBe(200);
      seen.push(...body.results.map((l: Json) => l.external_id));
      if (body.next_page_token === null) {
        expect(body.next).toBeNull();
        break;
      }
      expect(body.next).toBe(`${LEADS}?page_size=2&page_token=${body.next_page_token}`);
      query = body.next.slice(LEADS.length);
    }
    expect(seen).toEqual(created.map((l) => l.external_id).reverse());
  });

  it("never lists another provider's leads", async () => {
    const mine = await list("");
    const theirs = await list("", otherKey);
    expect(mine.body.results).toHaveLength(5);
    expect(theirs.body.results).toHaveLength(1);
    expect(theirs.body.results[0].external_id).not.toBeOneOf(created.map((l) => l.external_id));
  });

  it("filters by state and by updated_after", async () => {
    const moved = created[1] as Json;
    const admin = await t.token();
    const before = new Date().toISOString();
    await connectClient(LeadWorkflowService, t.port, "grpc").transitionLead(
      { leadId: BigInt(moved.id), toState: LeadState.QUOTE },
      bearer(admin),
    );
    const quoted = await list("?state=QUOTE");
    expect(quoted.body.results.map((l: Json) => l.external_id)).toEqual([moved.external_id]);
    const changed = await list(`?updated_after=${encodeURIComponent(before)}`);
    expect(changed.body.results.map((l: Json) => l.external_id)).toEqual([moved.external_id]);
  });

  it("answers 400 naming the parameter for a token it did not issue, a bad size or state", async () => {
    for (const [query, field] of [
      ["?page_token=bm90LWEtbnVtYmVy", "page_token"],
      ["?page_token=%00", "page_token"],
      ["?page_size=101", "page_size"],
      ["?state=NEW", "state"],
      ["?updated_after=yesterday", "updated_after"],
    ]) {
      const { status, body } = await list(query as string);
      expect(status, query).toBe(400);
      expect(
        body.errors.map((e: Json) => e.field),
        query,
      ).toEqual([field]);
    }
  });

  it("pages the same way over gRPC", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const first = await client.listLeads({ pageSize: 3 }, bearer(key));
    expect(first.leads.map((l) => l.externalId)).toEqual(
      created
        .slice(2)
        .map((l) => l.external_id)
        .reverse(),
    );
    const second = await client.listLeads({ pageSize: 3, pageToken: first.nextPageToken }, bearer(key));
    expect(second.leads.map((l) => l.externalId)).toEqual(
      created
        .slice(0, 2)
        .map((l) => l.external_id)
        .reverse(),
    );
    expect(second.nextPageToken).toBe("");
    const quoted = await client.listLeads({ state: LeadState.QUOTE }, bearer(key));
    expect(quoted.leads).toHaveLength(1);
  });
});
