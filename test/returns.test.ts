/**
 * Returns and disputes against a real server, over REST and gRPC, on PGlite and (with
 * TEST_DATABASE_URL) Postgres: every refusal with its code and nothing stored; concurrent returns
 * of one lead (one wins) and across leads racing the monthly cap (never over it); auto-approval on
 * a moved clock with exactly one reversal; contest → deny (nothing posted, the lead settles) and
 * contest → approve after settlement (reversed from available); the events signed and in order
 * per lead; one provider never seeing or contesting another's returns. After every test the
 * ledger is whole and its trial balance 0.
 */
import { once } from "node:events";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { DateTime } from "luxon";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../generated/proto/leadprovider/v1/errors_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, rejection } from "./helpers/grpc.ts";
import {
  countTransactions,
  expectLedgerWhole,
  freshLead,
  ISSUE_TERMS,
  movableClock,
  portalPerson,
} from "./helpers/money.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { startServiceProcess } from "./helpers/service-process.ts";
import { pollUntil } from "./helpers/timing.ts";

const LEADS = "/api/v1/public/leads/";
const HOUR = 3_600_000;
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;
/** Terms whose cap allows every lead back (max_rate 1), unless a test says otherwise. */
const TERMS = { ...ISSUE_TERMS, settlement_days: 1, returns: { ...ISSUE_TERMS.returns, max_rate: 1 } };

describe.each(BACKENDS)("returns ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const clock = movableClock();
  const publicRpc = () => connectClient(PublicLeadService, t.port, "grpc");
  const workflowRpc = () => connectClient(LeadWorkflowService, t.port, "grpc");

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      {
        RATE_LIMIT_PER_MINUTE: "100000",
        RATE_LIMIT_PER_DAY: "10000000",
        SETTLEMENT_INTERVAL_SECONDS: "86400",
        RETURNS_INTERVAL_SECONDS: "86400",
      },
      { now: clock.now },
    );
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });
  afterEach(async () => {
    clock.reset();
    await expectLedgerWhole(t.app.database.db);
    const trial = await j(t.call("GET", "/api/v1/admin/ledger/trial_balance/", { auth: admin }));
    expect(trial.total_cents).toBe(0);
  });

  async function payee(terms: Json = TERMS, fields: Json = {}) {
    const p = await t.provider(undefined, fields);
    const res = await t.call("PUT", `/api/v1/lead_providers/${p.id}/terms/`, { auth: admin, body: terms });
    expect(res.status, await res.clone().text()).toBe(200);
    return p;
  }
  const create = async (key: string, body: Json = freshLead()) => {
    const res = await t.call("POST", LEADS, { auth: key, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Json;
  };
  const fileReturn = (leadId: number, body: Json) =>
    t.call("POST", `/api/v1/admin/leads/${leadId}/returns/`, { auth: admin, body });
  const contest = (key: string, externalId: string, body: Json) =>
    t.call("POST", `${LEADS}${encodeURIComponent(externalId)}/return/contest/`, { auth: key, body });
  const decide = (id: string, body: Json) =>
    t.call("POST", `/api/v1/admin/returns/${id}/decide/`, { auth: admin, body });
  const balance = (key: string) => j(t.call("GET", "/api/v1/public/balance/", { auth: key }));
  const returnCount = async () =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from lead_returns`.execute(t.app.database.db)).rows[0]?.n,
    );
  const EVIDENCE = {
    consent_certificate_url: "https://cert.trustedform.com/abc123",
    recording_url: "https://calls.example.com/r/1.mp3",
    attachments: [{ name: "form.png", url: "https://files.example.com/form.png" }],
  };

  async function expectProblem(res: Response, status: number, code: string): Promise<Json> {
    expect(res.status, await res.clone().text()).toBe(status);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    const body = (await res.json()) as Json;
    expect(body.code).toBe(code);
    return body;
  }

  describe("filing", () => {
    it("files a return (REST and gRPC), holds the purchase back from settlement, and shows it to the provider", async () => {
      const p = await payee();
      const a = await create(p.key);
      const b = await create(p.key);
      const res = await fileReturn(a.id, { reason: "invalid_contact", note: "Number disconnected" });
      expect(res.status, await res.clone().text()).toBe(201);
      const r = (await res.json()) as Json;
      expect(r).toMatchObject({
        lead: { id: a.id, external_id: a.external_id, order_number: a.order_number },
        provider_id: p.id,
        state: "requested",
        reason: "invalid_contact",
        note: "Number disconnected",
        contest: null,
        decided_at: null,
        amount_cents: 1500,
      });
      expect(r.id).toMatch(/^ret_[0-9a-f]{32}$/);
      expect(new Date(r.contest_deadline).getTime() - new Date(r.requested_at).getTime()).toBe(48 * HOUR);

      const viaGrpc = await workflowRpc().returnLead({ leadId: BigInt(b.id), reason: "out_of_area" }, bearer(admin));
      expect(viaGrpc.leadReturn).toMatchObject({ state: "requested", reason: "out_of_area", providerId: BigInt(p.id) });

      // The provider's list (REST and gRPC) has both, without provider_id.
      const own = await j(t.call("GET", "/api/v1/public/returns/", { auth: p.key }));
      expect(own.results.map((x: Json) => x.lead.external_id)).toEqual([b.external_id, a.external_id]);
      expect(own.results[0]).not.toHaveProperty("provider_id");
      const filtered = await j(t.call("GET", "/api/v1/public/returns/?reason=out_of_area", { auth: p.key }));
      expect(filtered.results).toHaveLength(1);
      const listed = await publicRpc().listReturns({ state: "requested" }, bearer(p.key));
      expect(listed.returns.map((x) => x.lead?.externalId)).toEqual([b.external_id, a.external_id]);
      expect(listed.returns[0]?.providerId).toBe(0n);
      const adminList = await j(t.call("GET", `/api/v1/admin/returns/?provider_id=${p.id}`, { auth: admin }));
      expect(adminList.results).toHaveLength(2);
      expect(await j(t.call("GET", `/api/v1/admin/returns/${r.id}/`, { auth: admin }))).toMatchObject({ id: r.id });

      // The lead's GET shows its return: REST, gRPC (the fast path's hand-written encoding and
      // connect-node's), and the workflow's FindLead.
      const shown = {
        id: r.id,
        state: "requested",
        reason: "invalid_contact",
        note: "Number disconnected",
        requested_at: r.requested_at,
        contest_deadline: r.contest_deadline,
        decided_at: null,
        decision_note: null,
      };
      expect((await j(t.call("GET", `${LEADS}${a.external_id}/`, { auth: p.key }))).return).toEqual(shown);
      for (const protocol of ["grpc", "connect"] as const) {
        const got = await connectClient(PublicLeadService, t.port, protocol).getLead(
          { externalId: a.external_id },
          bearer(p.key),
        );
        expect(got.lead?.leadReturn, protocol).toMatchObject({
          id: r.id,
          state: "requested",
          note: "Number disconnected",
        });
      }
      const found = await workflowRpc().findLead({ key: { case: "id", value: BigInt(b.id) } }, bearer(admin));
      expect(found.record?.lead?.leadReturn?.reason).toBe("out_of_area");
      const untouched = await create(p.key);
      expect(untouched.return).toBeNull();

      // Open returns are held back from settlement (the lead without one settles).
      clock.advance(25 * HOUR);
      await t.app.settlement.runOnce();
      expect(await balance(p.key)).toMatchObject({ pending_cents: 3000, available_cents: 1500 });

      // Audited with the actor.
      const audit = await j(t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: admin }));
      const filed = audit.results.filter((e: Json) => e.action === "lead.return_requested");
      expect(filed).toHaveLength(2);
      expect(filed.map((e: Json) => e.actor)).toContain("test-admin");
    });

    it("refuses each bad return with its named code and stores nothing", async () => {
      const p = await payee({
        ...TERMS,
        returns: { ...TERMS.returns, reasons: ["invalid_contact", "other"], auto_approve: [] },
      });
      const lead = await create(p.key);
      const before = await returnCount();
      const cases: Array<[Json, number, string, string | undefined]> = [
        [{ reason: "bogus" }, 400, "validation_error", "reason"],
        [{ reason: "out_of_area" }, 400, "validation_error", "reason"],
        [{ reason: "other" }, 400, "validation_error", "note"],
        [{ reason: "invalid_contact", note: "x".repeat(1001) }, 400, "validation_error", "note"],
        [{ reason: "invalid_contact", extra: 1 }, 400, "validation_error", "extra"],
      ];
      for (const [body, status, code, field] of cases) {
        const problem = await expectProblem(await fileReturn(lead.id, body), status, code);
        if (field)
          expect(
            problem.errors.map((e: Json) => e.field),
            JSON.stringify(body),
          ).toContain(field);
      }
      await expectProblem(await fileReturn(999_999_999, { reason: "invalid_contact" }), 404, "lead_not_found");

      // not billable: a flagged duplicate.
      const original = freshLead();
      await create(p.key, original);
      const dup = await create(p.key, { ...freshLead(), phone_number: original.phone_number, email: original.email });
      expect(dup.price).toBeNull();
      await expectProblem(await fileReturn(dup.id, { reason: "invalid_contact" }), 409, "not_billable");

      // The window: 72 hours after acceptance.
      clock.advance(73 * HOUR);
      const closed = await expectProblem(
        await fileReturn(lead.id, { reason: "invalid_contact" }),
        409,
        "return_window_closed",
      );
      expect(new Date(closed.closed_at).getTime()).toBe(new Date(lead.created_at).getTime() + 72 * HOUR);
      clock.reset();
      // gRPC: FAILED_PRECONDITION with the code in the details.
      clock.advance(73 * HOUR);
      const err = await rejection(
        workflowRpc().returnLead({ leadId: BigInt(lead.id), reason: "invalid_contact" }, bearer(admin)),
      );
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.findDetails(ErrorDetailSchema)[0]?.code).toBe("return_window_closed");
      clock.reset();
      expect(await returnCount()).toBe(before);

      // already returned.
      expect((await fileReturn(lead.id, { reason: "invalid_contact" })).status).toBe(201);
      const again = await expectProblem(
        await fileReturn(lead.id, { reason: "other", note: "again" }),
        409,
        "already_returned",
      );
      expect(again.return_id).toMatch(/^ret_/);
      expect(await returnCount()).toBe(before + 1);
    });

    it("refuses a return over the monthly cap, naming the numbers", async () => {
      const p = await payee({ ...TERMS, returns: { ...TERMS.returns, max_rate: 0.25 } });
      const leads: Json[] = [];
      for (let i = 0; i < 4; i++) leads.push(await create(p.key));
      expect((await fileReturn((leads[0] as Json).id, { reason: "invalid_contact" })).status).toBe(201);
      const capped = await expectProblem(
        await fileReturn((leads[1] as Json).id, { reason: "invalid_contact" }),
        409,
        "return_cap_reached",
      );
      expect(capped).toMatchObject({
        returns_this_month: 1,
        billable_leads_this_month: 4,
        max_rate: 0.25,
        max_returns: 1,
      });
    });

    it("twenty concurrent returns of one lead: exactly one is filed", async () => {
      const p = await payee();
      const lead = await create(p.key);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => fileReturn(lead.id, { reason: "invalid_contact" })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const r of answers.filter((x) => x.status === 409))
        expect(((await r.json()) as Json).code).toBe("already_returned");
      const n = await sql<{
        n: number;
      }>`select count(*)::int as n from lead_returns where lead_id = ${lead.id}`.execute(t.app.database.db);
      expect(Number(n.rows[0]?.n)).toBe(1);
    });

    it("returns racing the monthly cap never exceed it", async () => {
      const p = await payee({ ...TERMS, returns: { ...TERMS.returns, max_rate: 0.3 } });
      const leads: Json[] = [];
      for (let i = 0; i < 10; i++) leads.push(await create(p.key));
      const answers = await Promise.all(leads.map((l) => fileReturn(l.id, { reason: "invalid_contact" })));
      const filed = answers.filter((r) => r.status === 201);
      expect(filed).toHaveLength(3);
      for (const r of answers.filter((x) => x.status !== 201))
        expect(((await r.json()) as Json).code).toBe("return_cap_reached");
    });
  });

  describe("deciding", () => {
    it("approves an uncontested return after contest_hours (moved clock) with exactly one reversal, from pending", async () => {
      const p = await payee();
      const lead = await create(p.key);
      const r = await j(fileReturn(lead.id, { reason: "invalid_contact" }));
      await t.app.returnsJob.runOnce();
      expect((await j(t.call("GET", `/api/v1/admin/returns/${r.id}/`, { auth: admin }))).state).toBe("requested");
      clock.advance(48 * HOUR + 60_000);
      await t.app.returnsJob.runOnce();
      await t.app.returnsJob.runOnce(); // again: nothing twice
      const done = await j(t.call("GET", `/api/v1/admin/returns/${r.id}/`, { auth: admin }));
      expect(done).toMatchObject({ state: "approved", decision_note: "approved: not contested before the deadline" });
      expect(await countTransactions(t.app.database.db, p.id, "return")).toBe(1);
      expect(await balance(p.key)).toMatchObject({ pending_cents: 0, available_cents: 0 });
      // The lead never settles afterwards.
      clock.advance(10 * 24 * HOUR);
      await t.app.settlement.runOnce();
      expect(await countTransactions(t.app.database.db, p.id, "settlement")).toBe(0);
      // The lines and the statement show the reversal.
      const lines = await j(t.call("GET", "/api/v1/public/balance_transactions/?type=return", { auth: p.key }));
      expect(lines.results.map((l: Json) => [l.account, l.amount_cents, l.lead.external_id])).toEqual([
        ["pending", -1500, lead.external_id],
      ]);
      // The purchase is in the statement of the lead's month, the reversal in that of the month it
      // was posted in (48 hours later: the next month's for a lead of a month's last two days).
      const monthOf = (at: string) => DateTime.fromISO(at).setZone("America/New_York").toFormat("yyyy-MM");
      const statementOf = (month: string) => j(t.call("GET", `/api/v1/public/statements/${month}/`, { auth: p.key }));
      const bought = await statementOf(monthOf(lead.created_at));
      expect(bought.accounts.pending.totals.lead_purchase).toBe(1500);
      const returned = await statementOf(monthOf(lines.results[0].created_at));
      expect(returned.totals.return).toBe(-1500);
      expect(returned.accounts.pending.totals.return).toBe(-1500);
    });

    it("auto-approves a reason in auto_approve at once", async () => {
      const p = await payee();
      const lead = await create(p.key);
      const r = await j(fileReturn(lead.id, { reason: "test_or_fraud" }));
      expect(r.state).toBe("approved");
      expect(await countTransactions(t.app.database.db, p.id, "return")).toBe(1);
    });

    it("contest then deny: nothing is posted and the lead settles afterwards", async () => {
      const p = await payee();
      const lead = await create(p.key);
      const r = await j(fileReturn(lead.id, { reason: "not_requested" }));
      // Deciding before a contest is refused.
      await expectProblem(await decide(r.id, { decision: "deny" }), 409, "return_not_contested");
      const contested = await contest(p.key, lead.external_id, { statement: "They asked for it.", evidence: EVIDENCE });
      expect(contested.status, await contested.clone().text()).toBe(200);
      expect(await contested.json()).toMatchObject({
        state: "contested",
        contest: { statement: "They asked for it.", evidence: EVIDENCE },
      });
      await expectProblem(await contest(p.key, lead.external_id, { statement: "Again" }), 409, "already_contested");
      const denied = await j(decide(r.id, { decision: "deny", note: "Certificate matches" }));
      expect(denied).toMatchObject({ state: "denied", decision_note: "Certificate matches" });
      await expectProblem(await decide(r.id, { decision: "approve" }), 409, "return_not_contested");
      await expectProblem(
        await t.call("POST", `/api/v1/admin/returns/${r.id}/withdraw/`, { auth: admin, body: {} }),
        409,
        "return_decided",
      );
      expect(await countTransactions(t.app.database.db, p.id, "return")).toBe(0);
      clock.advance(25 * HOUR);
      await t.app.settlement.runOnce();
      expect(await balance(p.key)).toMatchObject({ pending_cents: 0, available_cents: 1500 });
    });

    it("contest then approve after settlement reverses from available (which may go below zero)", async () => {
      const p = await payee({ ...TERMS, settlement_days: 0 });
      const lead = await create(p.key);
      await t.app.settlement.runOnce();
      expect(await balance(p.key)).toMatchObject({ pending_cents: 0, available_cents: 1500 });
      const payout = await t.call("POST", `/api/v1/lead_providers/${p.id}/payouts/`, {
        auth: admin,
        body: { amount_cents: 1500, reference: `PO-${p.id}`, paid_at: new Date().toISOString() },
      });
      expect(payout.status).toBe(201);
      const r = await j(fileReturn(lead.id, { reason: "not_requested" }));
      const viaGrpc = await publicRpc().contestReturn(
        {
          externalId: lead.external_id,
          statement: "Consent on file",
          evidence: { recordingUrl: "https://x.example/r.mp3" },
        },
        bearer(p.key),
      );
      expect(viaGrpc.leadReturn?.state).toBe("contested");
      const approved = await j(decide(r.id, { decision: "approve", note: "No consent for this number" }));
      expect(approved.state).toBe("approved");
      expect(await balance(p.key)).toMatchObject({ pending_cents: 0, available_cents: -1500, paid_out_cents: 1500 });
      const lines = await j(t.call("GET", "/api/v1/public/balance_transactions/?type=return", { auth: p.key }));
      expect(lines.results.map((l: Json) => [l.account, l.amount_cents])).toEqual([["available", -1500]]);
    });

    it("withdraws an open return: the lead settles as usual", async () => {
      const p = await payee();
      const lead = await create(p.key);
      const r = await j(fileReturn(lead.id, { reason: "invalid_contact" }));
      const w = await j(
        t.call("POST", `/api/v1/admin/returns/${r.id}/withdraw/`, { auth: admin, body: { note: "Wrong lead" } }),
      );
      expect(w).toMatchObject({ state: "withdrawn", decision_note: "Wrong lead" });
      clock.advance(25 * HOUR);
      await t.app.settlement.runOnce();
      expect(await balance(p.key)).toMatchObject({ available_cents: 1500 });
      expect(await countTransactions(t.app.database.db, p.id, "return")).toBe(0);
    });

    it("refuses a bad contest: after the deadline, bad links, too long, another provider's lead", async () => {
      const a = await payee();
      const b = await payee();
      const lead = await create(a.key);
      const r = await j(fileReturn(lead.id, { reason: "not_requested" }));
      const bad: Array<[Json, string]> = [
        [{ statement: "" }, "statement"],
        [{ statement: "x".repeat(2001) }, "statement"],
        [{ statement: "ok", evidence: { recording_url: "http://insecure.example/r.mp3" } }, "evidence.recording_url"],
        [
          { statement: "ok", evidence: { attachments: [{ name: "a", url: "ftp://x" }] } },
          "evidence.attachments[0].url",
        ],
      ];
      for (const [body, field] of bad) {
        const problem = await expectProblem(await contest(a.key, lead.external_id, body), 400, "validation_error");
        expect(
          problem.errors.map((e: Json) => e.field),
          JSON.stringify(body),
        ).toContain(field);
      }
      // Provider B can neither contest nor see A's return (REST and gRPC).
      await expectProblem(await contest(b.key, lead.external_id, { statement: "mine" }), 404, "return_not_found");
      const err = await rejection(
        publicRpc().contestReturn({ externalId: lead.external_id, statement: "mine" }, bearer(b.key)),
      );
      expect(err.code).toBe(Code.NotFound);
      expect((await j(t.call("GET", "/api/v1/public/returns/", { auth: b.key }))).results).toEqual([]);
      expect((await publicRpc().listReturns({}, bearer(b.key))).returns).toEqual([]);
      // Nor can B's people in the portal.
      const person = await portalPerson(t, admin, b.id, "saffron glacier harbor 73 pier");
      const viaPortal = await person.portal("POST", `leads/${encodeURIComponent(lead.external_id)}/return/contest/`, {
        statement: "mine",
      });
      await expectProblem(viaPortal, 404, "return_not_found");
      expect(((await (await person.portal("GET", "returns/")).json()) as Json).results).toEqual([]);
      // After the deadline.
      clock.advance(49 * HOUR);
      const late = await expectProblem(
        await contest(a.key, lead.external_id, { statement: "late" }),
        409,
        "contest_window_closed",
      );
      expect(late.closed_at).toBe(r.contest_deadline);
      clock.reset();
      expect((await j(t.call("GET", `/api/v1/admin/returns/${r.id}/`, { auth: admin }))).state).toBe("requested");
    });
  });

  describe("events", () => {
    it("announces every change, signed, in order per lead (feed and webhooks)", async () => {
      const receiver = await startReceiver();
      try {
        const p = await payee(TERMS, { webhook_url: receiver.url });
        const lead = await create(p.key);
        const r = await j(fileReturn(lead.id, { reason: "not_requested" }));
        expect((await contest(p.key, lead.external_id, { statement: "Consent on file" })).status).toBe(200);
        expect((await decide(r.id, { decision: "approve", note: "No" })).status).toBe(200);
        const types = ["lead.return_requested", "lead.return_contested", "lead.return_approved"];
        const feed = await j(t.call("GET", "/api/v1/public/events/?page_size=10", { auth: p.key }));
        const returnEvents = feed.results.filter((e: Json) => e.type.startsWith("lead.return_")).reverse();
        expect(returnEvents.map((e: Json) => e.type)).toEqual(types);
        expect(returnEvents[1].data.return).toMatchObject({ state: "contested", actor: "provider" });
        expect(returnEvents[2].data.return).not.toHaveProperty("provider_id");

        const hook = await j(t.call("GET", `/api/v1/lead_providers/${p.id}/webhook/`, { auth: admin }));
        await receiver.waitFor(
          (all) => all.filter((x) => x.body.includes('"lead.return_')).length === 3,
          20_000,
          "three return webhooks",
        );
        const got = receiver.received
          .filter((x) => x.body.includes('"lead.return_'))
          .map((x) => new Webhook(hook.secret).verify(x.body, x.headers) as Json);
        expect(got.map((e) => e.type)).toEqual(types);
        expect(got.every((e) => e.data.return.lead.id === lead.id)).toBe(true);
      } finally {
        await receiver.close();
      }
    });
  });

  describe("stats", () => {
    it("counts approved returns per period and sub_id, with the return rate (REST, CSV and gRPC)", async () => {
      // An app of its own: the other tests move the clock, and the stats rollup would roll "today"
      // under a moved clock.
      const s = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RETURNS_INTERVAL_SECONDS: "86400" });
      try {
        const token = await s.token();
        const p = await s.provider();
        expect(
          (await s.call("PUT", `/api/v1/lead_providers/${p.id}/terms/`, { auth: token, body: TERMS })).status,
        ).toBe(200);
        const made: Json[] = [];
        for (const sub of ["site-a", "site-a", "site-b"]) {
          made.push(await j(s.call("POST", LEADS, { auth: p.key, body: freshLead({ sub_id: sub }) })));
        }
        const [a, , b] = made as [Json, Json, Json];
        const file = (id: number, reason: string) =>
          s.call("POST", `/api/v1/admin/leads/${id}/returns/`, { auth: token, body: { reason } });
        expect((await file(a.id, "test_or_fraud")).status).toBe(201); // approved at once
        expect((await file(b.id, "invalid_contact")).status).toBe(201); // still open: not counted
        const day = DateTime.now().setZone("America/New_York").toISODate() as string;
        const query = `?from=${day}&to=${day}&group_by=sub_id`;
        const stats = await j(s.call("GET", `/api/v1/public/stats/${query}`, { auth: p.key }));
        expect(stats.totals).toMatchObject({ accepted: 3, returned: 1, return_rate: 0.3333 });
        const bySub = Object.fromEntries(stats.periods.map((r: Json) => [r.group, [r.returned, r.return_rate]]));
        expect(bySub).toEqual({ "site-a": [1, 0.5], "site-b": [0, 0] });
        const csv = await s.call("GET", `/api/v1/public/stats/${query}`, {
          auth: p.key,
          headers: { accept: "text/csv" },
        });
        const [header, ...rows] = (await csv.text()).trimEnd().split("\r\n");
        const columns = header?.split(",") ?? [];
        const siteA = rows.find((r) => r.includes(",site-a,"))?.split(",");
        expect([siteA?.[columns.indexOf("returned")], siteA?.[columns.indexOf("return_rate")]]).toEqual(["1", "0.5"]);
        const rpc = await connectClient(PublicLeadService, s.port, "grpc").getStats(
          { from: day, to: day },
          bearer(p.key),
        );
        expect(rpc.totals).toMatchObject({ returned: 1n, returnRate: 0.3333 });
        const all = await j(
          s.call("GET", `/api/v1/admin/stats/?from=${day}&to=${day}&provider_id=${p.id}`, { auth: token }),
        );
        expect(all.totals.returned).toBe(1);
        await expectLedgerWhole(s.app.database.db);
      } finally {
        await s.stop();
      }
    });
  });

  describe("test mode", () => {
    it("returns a test lead in the test book", async () => {
      const p = await payee();
      const issued = await j(
        t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } }),
      );
      const testKey = issued.api_key as string;
      const lead = await create(testKey);
      const r = await j(fileReturn(lead.id, { reason: "test_or_fraud" }));
      expect(r).toMatchObject({ livemode: false, state: "approved" });
      expect(await countTransactions(t.app.database.db, p.id, "return", false)).toBe(1);
      expect(await countTransactions(t.app.database.db, p.id, "return", true)).toBe(0);
      expect((await j(t.call("GET", "/api/v1/public/returns/", { auth: testKey }))).results).toHaveLength(1);
      expect((await j(t.call("GET", "/api/v1/public/returns/", { auth: p.key }))).results).toHaveLength(0);
    });
  });
});

// A real process killed with SIGKILL while its returns job approves: Postgres only (the child and
// this process share the database).
const POSTGRES = BACKENDS.find((b) => b.name === "postgres");
describe.runIf(POSTGRES)("the returns job killed with SIGKILL mid-run (postgres)", () => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp(POSTGRES as (typeof BACKENDS)[number], {
      RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_PER_DAY: "10000000",
      SETTLEMENT_INTERVAL_SECONDS: "86400",
      RETURNS_INTERVAL_SECONDS: "86400",
    });
    // This instance's own job stays still: the child's is the one killed.
    await t.app.returnsJob.stop();
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("leaves each return approved with its one reversal or untouched, and a rerun posts no reversal twice", async () => {
    const db = t.app.database.db;
    const p = await t.provider();
    const terms = { ...TERMS, returns: { ...TERMS.returns, auto_approve: [] } };
    expect((await t.call("PUT", `/api/v1/lead_providers/${p.id}/terms/`, { auth: admin, body: terms })).status).toBe(
      200,
    );
    const N = 300;
    for (let done = 0; done < N; done += 25) {
      await Promise.all(
        Array.from({ length: 25 }, async () => {
          const lead = (await (await t.call("POST", LEADS, { auth: p.key, body: freshLead() })).json()) as Json;
          const res = await t.call("POST", `/api/v1/admin/leads/${lead.id}/returns/`, {
            auth: admin,
            body: { reason: "invalid_contact" },
          });
          expect(res.status).toBe(201);
        }),
      );
    }
    // Past their contest deadline, as if 48 hours had gone by.
    await sql`update lead_returns set contest_deadline = now() - interval '1 minute' where provider_id = ${p.id}`.execute(
      db,
    );
    const approved = async () =>
      Number(
        (
          await sql<{ n: number }>`
            select count(*)::int as n from lead_returns where provider_id = ${p.id} and state = 'approved'`.execute(db)
        ).rows[0]?.n,
      );
    const child = await startServiceProcess(
      {
        DATABASE_URL: t.databaseUrl as string,
        RETURNS_INTERVAL_SECONDS: "1",
        SETTLEMENT_INTERVAL_SECONDS: "86400",
        WEB_CONCURRENCY: "1",
      },
      '"lead provider api listening"',
    );
    try {
      await pollUntil("the child to approve some returns", async () => (await approved()) >= 10, {
        timeoutMs: 60_000,
        intervalMs: 10,
      });
      child.child.kill("SIGKILL");
      await once(child.child, "exit");
    } finally {
      await child.stop();
    }
    const before = await approved();
    expect(before).toBeGreaterThanOrEqual(10);
    expect(before, "the kill came after the job had finished: nothing was cut short").toBeLessThan(N);
    // Each return is approved with exactly its reversal, or untouched (requested, held, no reversal).
    const mismatched = await sql<{ public_id: string }>`
      select r.public_id from lead_returns r
      left join ledger_transactions t on t.idempotency_key = 'lead:' || r.lead_id || ':return'
      where r.provider_id = ${p.id} and (r.state = 'approved') <> (t.id is not null)`.execute(db);
    expect(mismatched.rows).toEqual([]);
    await expectLedgerWhole(db);

    // The catch-up run approves the rest; nothing is reversed twice.
    let run = await t.app.returnsJob.runOnce(60_000);
    while (run.behind) run = await t.app.returnsJob.runOnce(60_000);
    expect(await approved()).toBe(N);
    expect(await countTransactions(db, p.id, "return")).toBe(N);
    await t.app.returnsJob.runOnce();
    expect(await countTransactions(db, p.id, "return")).toBe(N);
    expect(await j(t.call("GET", "/api/v1/public/balance/", { auth: p.key }))).toMatchObject({
      pending_cents: 0,
      available_cents: 0,
    });
    await expectLedgerWhole(db);
  }, 300_000);
});
