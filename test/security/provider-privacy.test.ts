/**
 * What a provider can learn beyond its own leads: nothing of another provider's volume (lead ids,
 * order numbers and the events feed's page tokens count no one else's leads) and no staff member's
 * identity (a move by staff shows as "staff" in the history, over REST, gRPC, the events feed and
 * webhooks; administrators see who it was).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { PublicLeadService } from "../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "../helpers/app.ts";
import { BACKENDS } from "../helpers/database.ts";
import { bearer, connectClient } from "../helpers/grpc.ts";
import { startReceiver } from "../helpers/receiver.ts";

const P = "/api/v1/lead_providers/";
const LEADS = "/api/v1/public/leads/";

describe.each(BACKENDS)("what a provider learns of others ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
  });
  afterAll(() => t.stop());

  describe("identifiers reveal no other provider's volume", () => {
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
        ids.push(
          ((await (await t.call("POST", LEADS, { auth: b.key, body: leadBody() })).json()) as Json).id as number,
        );
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

  describe("staff identities never reach providers", () => {
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
});
