/**
 * The TypeScript SDK's reads, money and returns against the real service on port 0, on Postgres
 * when TEST_DATABASE_URL is set, else PGlite (what is tested here is the SDK's mapping of each
 * operation, which no database changes; the service's own tests run these routes on both): terms and a quote agreeing with the price the lead gets, the
 * balance, its lines and the month's statement (JSON, CSV, PDF), a return listed and contested
 * once (the second contest a ConflictError); the leads, events, request log, stats and intake
 * rules read back. The last test checks that every provider-key operation of the SDK's table
 * (sdks/typescript/src/operations.ts) was called against the service: the requests are observed
 * through the SDK's `fetch` option, which hands each to the real fetch.
 */
import { DateTime } from "luxon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConflictError,
  type LeadCreate,
  LeadProvider,
  type LeadProviderOptions,
} from "../sdks/typescript/src/index.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { freshLead, ISSUE_TERMS } from "./helpers/money.ts";
import { operationsNotCalled, PROVIDERS, refusal, ruledProvider } from "./helpers/sdk.ts";
import { clearOfDayEnd, DAY_END_MS } from "./helpers/timing.ts";

const ZONE = "America/New_York";
const lead = (overrides: Json = {}) => freshLead(overrides) as LeadCreate;

describe.each(BACKENDS.slice(-1))("the TypeScript SDK's reads, money and returns ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  /** `METHOD /path` of every request this file's clients sent. */
  const sent: string[] = [];
  const observed: NonNullable<LeadProviderOptions["fetch"]> = (request) => {
    sent.push(`${request.method} ${new URL(request.url).pathname}`);
    return fetch(request);
  };

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" });
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const client = (apiKey: string) => new LeadProvider({ apiKey, baseUrl: t.url, fetch: observed });
  const provider = (fields: Json = {}, rules?: Json) => ruledProvider(t, fields, rules);

  it("reads terms, quotes, balance, lines and statements, and contests a return", async () => {
    const p = await provider();
    // Terms whose monthly cap allows this one lead back (max_rate 1).
    const generous = { ...ISSUE_TERMS, returns: { ...ISSUE_TERMS.returns, max_rate: 1 } };
    const terms = await t.call("PUT", `${PROVIDERS}${p.id}/terms/`, { auth: admin, body: generous });
    expect(terms.status, await terms.clone().text()).toBe(200);
    const c = client(p.key);
    expect((await c.terms.get()).default_price_cents).toBe(1500);
    const body = lead();
    expect(await c.terms.quote(body)).toMatchObject({ amount_cents: 1500, livemode: true });
    const created = await c.leads.create(body);
    expect(await c.balance.get()).toMatchObject({ pending_cents: 1500, available_cents: 0, livemode: true });
    const lines = [];
    for await (const line of c.balanceTransactions.listAll({ type: "lead_purchase" })) lines.push(line);
    expect(lines).toEqual([expect.objectContaining({ type: "lead_purchase", amount_cents: 1500 })]);
    const statements = [];
    for await (const s of c.statements.listAll()) statements.push(s);
    const month = statements[0]?.month as string;
    expect((await c.statements.list()).results[0]?.month).toBe(month);
    expect(await c.statements.get(month)).toMatchObject({ month, livemode: true });
    expect(await c.statements.getCsv(month)).toContain(created.external_id);
    expect(new TextDecoder().decode((await c.statements.getPdf(month)).slice(0, 5))).toBe("%PDF-");

    const filed = await t.call("POST", `/api/v1/admin/leads/${created.id}/returns/`, {
      auth: admin,
      body: { reason: "invalid_contact", note: "Number disconnected" },
    });
    expect(filed.status, await filed.clone().text()).toBe(201);
    const open = [];
    for await (const r of c.returns.listAll({ state: "requested" })) open.push(r);
    expect(open).toEqual([expect.objectContaining({ reason: "invalid_contact", state: "requested" })]);
    expect((await c.returns.list()).results).toHaveLength(1);
    const contested = await c.returns.contest(created.external_id, {
      statement: "The customer asked for a quote on the phone.",
      evidence: { recording_url: "https://calls.example.com/r/1.mp3" },
    });
    expect(contested.state).toBe("contested");
    const twice = await refusal<ConflictError>(c.returns.contest(created.external_id, { statement: "Again" }));
    expect(twice).toBeInstanceOf(ConflictError);
    expect(twice.code).toBe("already_contested");
  });

  it(
    "reads the leads, the events, the request log, the stats and the intake rules",
    async () => {
      // The stats count today's leads: keep the test's requests and reads in one day.
      await clearOfDayEnd();
      const p = await provider({}, { caps: { day: 50 } });
      const c = client(p.key);
      const created = await c.leads.create(lead({ sub_id: "fb-1" }));
      expect((await c.leads.get(created.external_id)).sub_id).toBe("fb-1");
      expect((await c.leads.list({ state: "LEAD" })).results.map((l) => l.id)).toEqual([created.id]);
      const events = [];
      for await (const e of c.events.listAll({ type: "lead.created" })) events.push(e);
      expect(events.map((e) => e.data.lead?.id)).toEqual([created.id]);
      expect((await c.events.list({ type: "lead.created", page_size: 5 })).results).toHaveLength(1);
      await t.app.requestLog?.flush();
      const requests = [];
      for await (const r of c.requests.listAll({ outcome: "accepted" })) requests.push(r);
      expect(requests.map((r) => r.external_id)).toContain(created.external_id);
      const [newest] = (await c.requests.list({ page_size: 1 })).results;
      expect(await c.requests.get(newest?.request_id as string)).toEqual(newest);
      const today = DateTime.now().setZone(ZONE).toISODate() as string;
      const stats = await c.stats.get({ from: today, to: today, group_by: "sub_id" });
      expect(stats.totals.accepted).toBeGreaterThanOrEqual(1);
      expect((await c.stats.getCsv({ from: today, to: today })).split("\n")[0]).toContain("period");
      const rules = await c.intakeRules.get();
      expect(rules.caps).toMatchObject({ day: 50 });
      expect(rules.cap_usage.day).toMatchObject({ limit: 50, used: 1, remaining: 49 });
    },
    DAY_END_MS + 30_000,
  );

  it("called every provider-key operation of the SDK's table against the service", () => {
    expect(operationsNotCalled(sent)).toEqual([]);
  });
});
