/**
 * The request log and outcome analytics, against a real server over REST, gRPC and
 * Connect, on PGlite and (with TEST_DATABASE_URL) Postgres. Each provider sees its own entries of
 * its key's mode within 2 s, personal data masked; administrators find any entry by request id;
 * stats count exactly what the test did, as JSON, CSV and over gRPC; retention deletes old rows.
 */
import { createHash } from "node:crypto";
import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  LeadState,
  type OverseasType,
  type ShipVia,
  type VehicleType,
} from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { businessToday } from "../src/intake/business-time.ts";
import { createLogger } from "../src/logger.ts";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { clearOfDayEnd } from "./helpers/timing.ts";

const LEADS = "/api/v1/public/leads/";
const REQUESTS = "/api/v1/public/requests/";
const ZONE = "America/New_York";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;

/** Personal data a test sends, which no log answer or log line may hold. */
const PERSON = {
  first_name: "Bartholomew",
  last_name: "Quintanilla",
  email: "bartholomew.quintanilla@example.com",
  phone_number: "+1 (415) 555-0187",
  consent: {
    consent_text: "I agree to be contacted",
    consented_at: "2026-11-01T10:00:00Z",
    ip_address: "198.51.100.77",
    page_url: "https://leads.example.com/form",
  },
};
const RAW = ["Bartholomew", "Quintanilla", "bartholomew.quintanilla", "555-0187", "4155550187", "198.51.100.77"];

describe.each(BACKENDS)("request log and stats ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let a: { id: number; key: string };
  let b: { id: number; key: string };
  let aTest: string;
  const lines: string[] = [];
  let offsetMs = 0;

  /** Polls the provider's log until `requestId` is in it; how long after `answeredAt` it appeared. */
  async function seen(key: string, requestId: string, answeredAt: number): Promise<{ entry: Json; ms: number }> {
    for (;;) {
      const r = await t.call("GET", `${REQUESTS}${requestId}/`, { auth: key });
      if (r.status === 200) return { entry: (await r.json()) as Json, ms: Date.now() - answeredAt };
      expect(r.status).toBe(404);
      if (Date.now() - answeredAt > 5000) throw new Error(`${requestId} not in the log after 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    t = await startTestApp(
      backend,
      { JWT_WORKFLOW_VALUE: "DISPATCHER", BUSINESS_TIMEZONE: ZONE },
      { logger: createLogger("debug", sink), now: () => new Date(Date.now() + offsetMs) },
    );
    admin = await t.token();
    a = await t.provider(undefined, { rate_limit_per_minute: 5 });
    b = await t.provider();
    const issued = await t.call("POST", `/api/v1/lead_providers/${a.id}/generate_api_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    aTest = (await j(issued)).api_key;
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("records a refused, an accepted and a rate-limited request within seconds, masked, for the provider alone", async () => {
    const bad = leadBody({ ...PERSON, origin_zip: "00000", sub_id: "site-a" });
    const refused = await t.call("POST", LEADS, { auth: a.key, body: bad });
    expect(refused.status).toBe(400);
    const problem = await j(refused);
    const refusedAt = Date.now();
    expect(problem.code).toBe("invalid_zip");

    const good = leadBody({ ...PERSON, external_id: bad.external_id });
    const accepted = await t.call("POST", LEADS, { auth: a.key, body: good });
    expect(accepted.status).toBe(201);
    const lead = await j(accepted);
    const acceptedId = accepted.headers.get("x-request-id") as string;
    const acceptedAt = Date.now();

    // Use up the minute (limit 5: two creates, then reads), until a request is refused.
    let limited: Response | undefined;
    for (let i = 0; i < 12 && !limited; i += 1) {
      const r = await t.call("GET", `${LEADS}${bad.external_id}/`, { auth: a.key });
      if (r.status === 429) limited = r;
    }
    expect(limited?.status).toBe(429);
    const limitedId = limited?.headers.get("x-request-id") as string;
    const limitedAt = Date.now();

    // The log is readable while the provider is throttled (its own limit).
    const r1 = await seen(a.key, problem.request_id, refusedAt);
    const r2 = await seen(a.key, acceptedId, acceptedAt);
    const r3 = await seen(a.key, limitedId, limitedAt);
    // The writer flushes every 500 ms; 5 s leaves a loaded 2-core machine room and still fails a
    // log that waits for a full batch, a minute's timer or the service's stop.
    for (const { ms } of [r1, r2, r3]) expect(ms).toBeLessThan(5000);

    expect(r1.entry).toMatchObject({
      request_id: problem.request_id,
      operation: "POST /api/v1/public/leads/",
      protocol: "rest",
      status: 400,
      outcome: "rejected",
      code: "invalid_zip",
      external_id: bad.external_id,
      lead_id: null,
      livemode: true,
      key_hint: a.key.slice(-4),
      rpc_code: null,
    });
    expect(r1.entry.errors).toEqual(problem.errors);
    expect(r1.entry.request_body).toMatchObject({
      first_name: "B…",
      last_name: "Q…",
      email: "b***@example.com",
      phone_number: "…0187",
      origin_zip: "00000",
      sub_id: "site-a",
      consent: {
        ip_address: "198.51.100.0/24",
        consent_text: "…string(23)",
        page_url: "https://leads.example.com/form",
      },
    });
    expect(r1.entry.duration_ms).toBeGreaterThan(0);
    expect(r1.entry.client_ip).toBe("127.0.0.1");

    expect(r2.entry).toMatchObject({ status: 201, outcome: "accepted", code: null, lead_id: lead.id, errors: [] });
    expect(r3.entry).toMatchObject({
      status: 429,
      outcome: "rate_limited",
      code: "rate_limited",
      operation: "GET /api/v1/public/leads/{external_id}/",
      external_id: bad.external_id,
      request_body: null,
    });

    // Listed newest first, filtered.
    const list = await j(t.call("GET", `${REQUESTS}?external_id=${bad.external_id}&page_size=100`, { auth: a.key }));
    const ids = list.results.map((e: Json) => e.request_id);
    expect(ids.indexOf(limitedId)).toBeLessThan(ids.indexOf(acceptedId));
    expect(ids.indexOf(acceptedId)).toBeLessThan(ids.indexOf(problem.request_id));
    const rejected = await j(t.call("GET", `${REQUESTS}?outcome=rejected&code=invalid_zip`, { auth: a.key }));
    expect(rejected.results.map((e: Json) => e.request_id)).toEqual([problem.request_id]);
    const byStatus = await j(t.call("GET", `${REQUESTS}?status=429`, { auth: a.key }));
    expect(byStatus.results.map((e: Json) => e.request_id)).toContain(limitedId);
    expect(byStatus.results.every((e: Json) => e.status === 429)).toBe(true);

    // Another provider and the other mode see none of it; the same 404 as an unknown id.
    const other = await t.call("GET", `${REQUESTS}${problem.request_id}/`, { auth: b.key });
    expect(other.status).toBe(404);
    expect((await j(other)).code).toBe("request_not_found");
    expect((await t.call("GET", `${REQUESTS}${problem.request_id}/`, { auth: aTest })).status).toBe(404);
    expect((await j(t.call("GET", `${REQUESTS}?page_size=100`, { auth: b.key }))).results).toEqual([]);
    const testList = await j(t.call("GET", `${REQUESTS}?page_size=100`, { auth: aTest }));
    expect(testList.results.map((e: Json) => e.request_id)).not.toContain(problem.request_id);

    // An administrator finds it by the request id of the 400 body, with the provider.
    const found = await j(t.call("GET", `/api/v1/admin/requests/?request_id=${problem.request_id}`, { auth: admin }));
    expect(found.results).toHaveLength(1);
    expect(found.results[0]).toMatchObject({ provider_id: a.id, code: "invalid_zip" });
    const one = await j(t.call("GET", `/api/v1/admin/requests/${problem.request_id}/`, { auth: admin }));
    expect(one).toMatchObject({ provider_id: a.id, request_id: problem.request_id, status: 400 });

    // Nothing personal in any answer about the log, nor in any log line.
    const answers = JSON.stringify([r1, r2, r3, list, found, one]);
    for (const raw of RAW) expect(answers).not.toContain(raw);
    for (const raw of RAW) expect(lines.join("\n")).not.toContain(raw);
  });

  it("keeps test requests apart and records 401s for administrators only, under the client address", async () => {
    const r = await t.call("POST", LEADS, { auth: aTest, body: leadBody({ origin_zip: "00000" }) });
    const testProblem = await j(r);
    const { entry } = await seen(aTest, testProblem.request_id, Date.now());
    expect(entry).toMatchObject({ livemode: false, code: "invalid_zip", key_hint: aTest.slice(-4) });
    expect((await t.call("GET", `${REQUESTS}${testProblem.request_id}/`, { auth: a.key })).status).toBe(404);

    const denied = await t.call("POST", LEADS, { auth: "lp_live_not-a-real-key-000000000000", body: leadBody() });
    expect(denied.status).toBe(401);
    const deniedId = (await j(denied)).request_id;
    let adminEntry: Json | undefined;
    for (let i = 0; i < 100 && !adminEntry; i += 1) {
      const page = await j(
        t.call("GET", `/api/v1/admin/requests/?client_ip=127.0.0.1&status=401&page_size=100`, { auth: admin }),
      );
      adminEntry = page.results.find((e: Json) => e.request_id === deniedId);
      if (!adminEntry) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(adminEntry).toMatchObject({ provider_id: null, livemode: null, key_hint: null, outcome: "rejected" });
    expect(adminEntry?.code).toBe("invalid_api_key");
    for (const key of [a.key, b.key, aTest]) {
      const page = await j(t.call("GET", `${REQUESTS}?status=401`, { auth: key }));
      expect(page.results).toEqual([]);
    }
  });

  it("records gRPC and Connect calls with the REST status and the RPC code; lists them over gRPC", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const body = leadBody({ ...PERSON, origin_zip: "00000" });
    const err = (await client
      .createLead(
        {
          externalId: body.external_id as string,
          firstName: PERSON.first_name,
          lastName: PERSON.last_name,
          email: PERSON.email,
          phoneNumber: PERSON.phone_number,
          originZip: "00000",
          estimatedShipDate: body.estimated_ship_date as string,
          overseasType: 1,
          shipVia: 1,
          vehicles: [{ year: 2021, make: "Toyota", model: "Camry", type: 1, tariff: 950n, deposit: 150n }],
        },
        bearer(b.key),
      )
      .catch((e: unknown) => e)) as ConnectError;
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.code).toBe(Code.InvalidArgument);

    let entries: Json[] = [];
    for (let i = 0; i < 100 && entries.length === 0; i += 1) {
      const page = await client.listRequests({ externalId: body.external_id as string }, bearer(b.key));
      entries = page.requests as unknown as Json[];
      if (entries.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(entries).toHaveLength(1);
    const entry = entries[0] as Json;
    expect(entry).toMatchObject({
      operation: "leadprovider.v1.PublicLeadService/CreateLead",
      protocol: "grpc",
      status: 400,
      rpcCode: "invalid_argument",
      outcome: "rejected",
      code: "invalid_zip",
      keyHint: b.key.slice(-4),
    });
    expect(entry.requestBody).toMatchObject({ first_name: "B…", email: "b***@example.com", phone_number: "…0187" });
    expect(JSON.stringify(entry.requestBody)).not.toContain("Quintanilla");

    const got = await client.getRequest({ requestId: entry.requestId }, bearer(b.key));
    expect(got.request?.code).toBe("invalid_zip");
    const notMine = (await client
      .getRequest({ requestId: entry.requestId }, bearer(a.key))
      .catch((e) => e)) as ConnectError;
    expect(notMine.code).toBe(Code.NotFound);

    // A Connect call that succeeds: 200 and rpc_code ok.
    const connect = connectClient(PublicLeadService, t.port, "connect");
    await connect.getIntakeRules({}, bearer(b.key));
    let ok: Json | undefined;
    for (let i = 0; i < 100 && !ok; i += 1) {
      const page = await j(t.call("GET", `${REQUESTS}?page_size=10`, { auth: b.key }));
      ok = page.results.find((e: Json) => e.protocol === "connect");
      if (!ok) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ok).toMatchObject({
      operation: "leadprovider.v1.PublicLeadService/GetIntakeRules",
      status: 200,
      rpc_code: "ok",
      outcome: "accepted",
    });
  });

  it("counts stats exactly per day and per sub_id, as JSON, CSV and over gRPC", async () => {
    const p = await t.provider();
    await clearOfDayEnd(); // every lead and every read on one day
    const today = businessToday(new Date(), ZONE);
    let n = 0;
    const create = (overrides: Json) => {
      n += 1;
      const email = `stats.${process.pid}.${Date.now()}.${n}@example.com`;
      return t.call("POST", LEADS, { auth: p.key, body: leadBody({ email, ...overrides }) });
    };
    const ids: Record<string, number[]> = { a: [], b: [] };
    for (const [sub, n] of [
      ["a", 3],
      ["b", 2],
    ] as const) {
      for (let i = 0; i < n; i += 1) {
        const r = await create({ sub_id: `site-${sub}`, phone_number: `+1 212 555 0${sub === "a" ? 1 : 2}${i}0` });
        expect(r.status).toBe(201);
        ids[sub]?.push((await j(r)).id);
      }
    }
    // Refused: two bad ZIPs on site-a, one bad email on site-b.
    expect((await create({ sub_id: "site-a", origin_zip: "00000" })).status).toBe(400);
    expect((await create({ sub_id: "site-a", origin_zip: "00000" })).status).toBe(400);
    expect((await create({ sub_id: "site-b", email: "not-an-email" })).status).toBe(400);

    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const dispatcher = await t.token({ position: "DISPATCHER" }, { sub: "quote-engine" });
    const move = (id: number, to: LeadState) =>
      workflow.transitionLead({ leadId: BigInt(id), toState: to }, bearer(dispatcher));
    // site-a: two quoted, one of them ordered; site-b: one quoted.
    await move(ids.a?.[0] as number, LeadState.QUOTE);
    await move(ids.a?.[0] as number, LeadState.ORDER);
    await move(ids.a?.[1] as number, LeadState.QUOTE);
    await move(ids.b?.[0] as number, LeadState.QUOTE);

    const statsOf = async () => j(t.call("GET", `/api/v1/public/stats/?from=${today}&to=${today}`, { auth: p.key }));
    let stats = await statsOf();
    for (let i = 0; i < 100 && stats.totals.submitted < 8; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stats = await statsOf();
    }
    expect(stats.periods).toHaveLength(1);
    const expected = {
      submitted: 8,
      accepted: 5,
      rejected: { invalid_zip: 2, validation_error: 1 },
      duplicates: 0,
      quoted: 3,
      ordered: 1,
      quote_rate: 0.6,
      order_rate: 0.2,
    };
    expect(stats.periods[0]).toMatchObject({ period: today, group: null, ...expected });
    expect(stats.totals).toMatchObject(expected);
    expect(stats.totals.median_hours_to_quote).toBeGreaterThanOrEqual(0);
    expect(stats.totals.median_hours_to_quote).toBeLessThan(0.1);
    expect(stats).toMatchObject({ from: today, to: today, granularity: "day", livemode: true, timezone: ZONE });

    const grouped = await j(
      t.call("GET", `/api/v1/public/stats/?from=${today}&to=${today}&group_by=sub_id`, { auth: p.key }),
    );
    const bySub = Object.fromEntries(grouped.periods.map((r: Json) => [r.group, r]));
    expect(bySub["site-a"]).toMatchObject({
      submitted: 5,
      accepted: 3,
      rejected: { invalid_zip: 2 },
      quoted: 2,
      ordered: 1,
    });
    expect(bySub["site-b"]).toMatchObject({
      submitted: 3,
      accepted: 2,
      rejected: { validation_error: 1 },
      quoted: 1,
      ordered: 0,
      order_rate: 0,
    });

    const csv = await t.call("GET", `/api/v1/public/stats/?from=${today}&to=${today}&group_by=sub_id`, {
      auth: p.key,
      headers: { accept: "text/csv" },
    });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const rows = (await csv.text()).trimEnd().split("\r\n");
    expect(rows[0]).toBe(
      "period,sub_id,submitted,accepted,rejected,rejected_invalid_zip,rejected_validation_error,duplicates,quoted,ordered,quote_rate,order_rate,median_hours_to_quote,median_hours_to_order,last_lead_at,returned,return_rate,billable,acceptance_rate",
    );
    const csvA = rows.find((r) => r.startsWith(`${today},site-a,`))?.split(",");
    expect(csvA?.slice(2, 10)).toEqual(["5", "3", "2", "2", "0", "0", "2", "1"]);
    const csvB = rows.find((r) => r.startsWith(`${today},site-b,`))?.split(",");
    expect(csvB?.slice(2, 10)).toEqual(["3", "2", "1", "0", "1", "0", "1", "0"]);

    // The same numbers over gRPC; and another provider's stats hold none of them.
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const rpc = await client.getStats({ from: today, to: today }, bearer(p.key));
    expect(rpc.totals).toMatchObject({ submitted: 8n, accepted: 5n, quoted: 3n, ordered: 1n, quoteRate: 0.6 });
    expect(rpc.totals?.rejected).toEqual({ invalid_zip: 2n, validation_error: 1n });
    const others = await j(t.call("GET", `/api/v1/public/stats/?from=${today}&to=${today}`, { auth: b.key }));
    expect(others.totals.accepted).toBe(0);

    // Administrators: by provider, with the name.
    const adminStats = await j(
      t.call("GET", `/api/v1/admin/stats/?from=${today}&to=${today}&group_by=provider`, { auth: admin }),
    );
    const row = adminStats.periods.find((r: Json) => r.group === String(p.id));
    expect(row).toMatchObject({ submitted: 8, accepted: 5, quoted: 3, ordered: 1 });
    expect(row.provider_name).toMatch(/^Provider /);
  }, 180_000);

  it("answers the same stats from the daily rollup as from the leads, and follows moves of rolled-up days", async () => {
    const q = await t.provider();
    await clearOfDayEnd(); // every lead and every read on one day
    const today = businessToday(new Date(), ZONE);
    const yesterday = new Date(Date.parse(`${today}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const ids: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const r = await t.call("POST", LEADS, {
        auth: q.key,
        body: leadBody({ email: `rollup.${Date.now()}.${i}@example.com`, sub_id: i < 2 ? "old" : "new" }),
      });
      ids.push((await j(r)).id);
    }
    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const dispatcher = await t.token({ position: "DISPATCHER" }, { sub: "quote-engine" });
    const move = (id: number, to: LeadState) =>
      workflow.transitionLead({ leadId: BigInt(id), toState: to }, bearer(dispatcher));
    await move(ids[0] as number, LeadState.QUOTE);
    await move(ids[0] as number, LeadState.ORDER);
    await move(ids[2] as number, LeadState.QUOTE);
    // Two of them become yesterday's leads (noon yesterday, business time), with their moves.
    const { sql } = await import("kysely");
    await sql`
      update leads set created_at = created_at - interval '1 day', quoted_at = quoted_at - interval '1 day',
                       ordered_at = ordered_at - interval '1 day'
      where id in (${ids[0]}, ${ids[1]})`.execute(t.app.database.db);
    // As on a database the rollup has not reached yet (the app's own job may have rolled up an empty yesterday).
    await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(t.app.database.db);
    await sql`delete from lead_stats_daily`.execute(t.app.database.db);
    const path = `/api/v1/public/stats/?from=${yesterday}&to=${today}&group_by=sub_id`;
    const before = await j(t.call("GET", path, { auth: q.key }));
    const old = before.periods.find((r: Json) => r.period === yesterday && r.group === "old");
    expect(old).toMatchObject({ accepted: 2, quoted: 1, ordered: 1 });

    const { createStatsRollup } = await import("../src/stats/stats.rollup.ts");
    const rollup = createStatsRollup({
      db: t.app.database.db,
      zone: ZONE,
      logger: createLogger("silent"),
      lagSeconds: 0,
    });
    await rollup.runOnce();
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from lead_stats_daily where provider_id = ${q.id} and day = ${yesterday}::date`.execute(
      t.app.database.db,
    );
    expect(rows[0]?.n).toBe(1); // its one sub_id of yesterday (provider 0 holds everyone's)
    expect(await j(t.call("GET", path, { auth: q.key }))).toEqual(before);

    // A rolled-up day's lead moves: the next run rolls that day up again.
    await move(ids[1] as number, LeadState.QUOTE);
    await rollup.runOnce();
    const after = await j(t.call("GET", path, { auth: q.key }));
    expect(after.periods.find((r: Json) => r.period === yesterday && r.group === "old")).toMatchObject({
      accepted: 2,
      quoted: 2,
      ordered: 1,
    });
    expect(after.totals).toMatchObject({ accepted: 4, quoted: 3, ordered: 1 });
    // Every provider's stats of that day, from the rollup's all-providers level, match the leads too.
    const all = `/api/v1/admin/stats/?from=${yesterday}&to=${yesterday}`;
    const fromRollup = await j(t.call("GET", all, { auth: admin }));
    await sql`update lead_stats_rollup set rolled_through = null, history_id = 0`.execute(t.app.database.db);
    await sql`delete from lead_stats_daily`.execute(t.app.database.db);
    expect(await j(t.call("GET", all, { auth: admin }))).toEqual(fromRollup);
    expect(fromRollup.totals).toMatchObject({ accepted: 2, quoted: 2, ordered: 1 });
  }, 180_000);

  it("refuses bad stats and log queries by field", async () => {
    const bad = await j(t.call("GET", "/api/v1/public/stats/?from=2026-11-30&to=2026-11-01", { auth: b.key }));
    expect(bad.errors).toEqual([expect.objectContaining({ field: "from", code: "out_of_range" })]);
    const long = await j(t.call("GET", "/api/v1/public/stats/?from=2020-01-01&to=2026-11-01", { auth: b.key }));
    expect(long.errors[0]).toMatchObject({ field: "from", code: "out_of_range" });
    const token = await t.call("GET", `${REQUESTS}?page_token=bm9wZQ`, { auth: b.key });
    expect(token.status).toBe(400);
    expect((await j(token)).errors[0].field).toBe("page_token");
  });

  it("deletes only entries past the retention", async () => {
    offsetMs = -40 * 86_400_000;
    const old = await t.call("GET", `${LEADS}no-such-lead-old/`, { auth: b.key });
    offsetMs = 0;
    const recent = await t.call("GET", `${LEADS}no-such-lead-new/`, { auth: b.key });
    const oldId = old.headers.get("x-request-id") as string;
    const recentId = recent.headers.get("x-request-id") as string;
    await t.app.requestLog?.flush();
    expect((await t.call("GET", `/api/v1/admin/requests/${oldId}/`, { auth: admin })).status).toBe(200);
    const deleted = await t.app.requestLog?.purgeExpired();
    expect(deleted).toBeGreaterThanOrEqual(1);
    expect((await t.call("GET", `/api/v1/admin/requests/${oldId}/`, { auth: admin })).status).toBe(404);
    expect((await t.call("GET", `/api/v1/admin/requests/${recentId}/`, { auth: admin })).status).toBe(200);
  });
});

describe("the request log's own limit and bounded queue (pglite)", () => {
  let t: TestApp;
  const clock = minuteClock();
  beforeAll(async () => {
    t = await startTestApp(
      { name: "pglite" },
      { REQUEST_LOG_READS_PER_MINUTE: "3", RATE_LIMIT_PER_MINUTE: "2" },
      { now: clock },
    );
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("counts reads of the log and stats against their own limit, never against the API's", async () => {
    const p = await t.provider();
    clock.nextMinute(); // one rate-limit minute for the whole test, wherever the real minute boundary falls
    // The API limit (2 a minute) is used up ...
    for (let i = 0; i < 2; i += 1) expect((await t.call("GET", `${LEADS}x-${i}/`, { auth: p.key })).status).toBe(404);
    expect((await t.call("GET", `${LEADS}x-3/`, { auth: p.key })).status).toBe(429);
    // ... and the log is still readable, three times a minute, then refused with its own limit named.
    const reads = [
      await t.call("GET", REQUESTS, { auth: p.key }),
      await t.call("GET", "/api/v1/public/stats/", { auth: p.key }),
      await t.call("GET", REQUESTS, { auth: p.key }),
    ];
    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(reads[0]?.headers.get("ratelimit-policy")).toContain("3");
    const refused = await t.call("GET", REQUESTS, { auth: p.key });
    expect(refused.status).toBe(429);
    expect((await j(refused)).detail).toMatch(/^rate limit of 3 reads of the request log and stats per minute/);
    // Over gRPC the same bucket answers.
    const client = connectClient(PublicLeadService, t.port, "connect");
    const err = (await client.listRequests({}, bearer(p.key)).catch((e: unknown) => e)) as ConnectError;
    expect(err.code).toBe(Code.ResourceExhausted);
  });

  it("drops the oldest entries when its queue is full, counts them, and writes the rest", async () => {
    const { createRequestLogWriter } = await import("../src/request-log/request-log.writer.ts");
    const dropped: number[] = [];
    const writer = createRequestLogWriter({
      db: t.app.database.db,
      logger: createLogger("silent"),
      zone: ZONE,
      retentionDays: 30,
      maxQueue: 3,
      onDropped: (n) => dropped.push(n),
    });
    const entry = (n: number) => ({
      requestId: `queue-test-${process.pid}-${n}`,
      createdAt: new Date(),
      providerId: null,
      livemode: null,
      operation: "GET /api/v1/public/leads/",
      protocol: "rest",
      status: 401,
      rpcCode: null,
      outcome: "rejected" as const,
      code: "invalid_api_key",
      detail: "the API key is missing or invalid",
      errors: [],
      externalId: null,
      leadId: null,
      durationMs: 1,
      clientIp: "192.0.2.1",
      keyHint: null,
      userAgent: null,
      requestBody: null,
      requestBodyBytes: null,
      gated: false,
    });
    for (let n = 1; n <= 5; n += 1) writer.record(entry(n));
    expect(writer.stats()).toEqual({ queued: 3, dropped: 2 });
    expect(dropped.reduce((a, b) => a + b, 0)).toBe(2);
    await writer.flush();
    const admin = await t.token();
    const found = await j(t.call("GET", "/api/v1/admin/requests/?client_ip=192.0.2.1&page_size=10", { auth: admin }));
    expect(found.results.map((e: Json) => e.request_id).sort()).toEqual(
      [3, 4, 5].map((n) => `queue-test-${process.pid}-${n}`),
    );
    await writer.stop();
  });
  it("writes the rest of a batch whose one value the database refuses, and counts exactly what it wrote", async () => {
    const { createRequestLogWriter } = await import("../src/request-log/request-log.writer.ts");
    const p = await t.provider();
    const dropped: number[] = [];
    const writer = createRequestLogWriter({
      db: t.app.database.db,
      logger: createLogger("silent"),
      zone: ZONE,
      retentionDays: 30,
      onDropped: (n) => dropped.push(n),
    });
    const subId = `fallback-${process.pid}`;
    const id = (n: number) => `fallback-${process.pid}-${n}`;
    const entry = (n: number, status: number) => ({
      requestId: id(n),
      createdAt: new Date(),
      providerId: p.id,
      livemode: true,
      operation: "POST /api/v1/public/leads/",
      protocol: "rest",
      status,
      rpcCode: null,
      outcome: "accepted" as const,
      code: null,
      detail: null,
      errors: [],
      externalId: `fb-${n}`,
      leadId: null,
      durationMs: n === 3 ? Number.NaN : 2.5,
      clientIp: "192.0.2.9",
      keyHint: null,
      userAgent: null,
      requestBody: { sub_id: subId, first_name: "Bartholomew" },
      requestBodyBytes: null,
      gated: true,
    });
    // A status no smallint holds: the batch is refused, then written one entry at a time.
    writer.record(entry(1, 201));
    writer.record(entry(2, 70_000));
    writer.record(entry(3, 201));
    await writer.flush();
    const db = t.app.database.db;
    const rows = await db
      .selectFrom("request_log")
      .select(["request_id", "duration_ms", "request_body"])
      .where("request_id", "in", [id(1), id(2), id(3)])
      .orderBy("request_id")
      .execute();
    expect(rows.map((r) => r.request_id)).toEqual([id(1), id(3)]);
    expect(rows[1]?.duration_ms).toBeNaN();
    expect(rows[0]?.request_body).toEqual({ sub_id: subId, first_name: "B…" });
    expect(dropped).toEqual([1]);
    const counts = await db
      .selectFrom("request_outcomes_daily")
      .select(["code", "requests"])
      .where("provider_id", "=", p.id)
      .where("sub_id", "=", subId)
      .execute();
    expect(counts).toEqual([{ code: "", requests: 2 }]);
    await writer.stop();
  });
  it("refuses an entry whose outcome contradicts its status, which the refusals' list relies on (migration 0017)", async () => {
    const { createRequestLogWriter } = await import("../src/request-log/request-log.writer.ts");
    const p = await t.provider();
    const dropped: number[] = [];
    const writer = createRequestLogWriter({
      db: t.app.database.db,
      logger: createLogger("silent"),
      zone: ZONE,
      retentionDays: 30,
      onDropped: (n) => dropped.push(n),
    });
    const id = (n: number) => `contradiction-${process.pid}-${n}`;
    const entry = (n: number, status: number, outcome: "accepted" | "rejected") => ({
      requestId: id(n),
      createdAt: new Date(),
      providerId: p.id,
      livemode: true,
      operation: "GET /api/v1/public/leads/{external_id}/",
      protocol: "rest",
      status,
      rpcCode: null,
      outcome,
      code: null,
      detail: null,
      errors: [],
      externalId: null,
      leadId: null,
      durationMs: 1,
      clientIp: "192.0.2.10",
      keyHint: null,
      userAgent: null,
      requestBody: null,
      requestBodyBytes: null,
      gated: true,
    });
    writer.record(entry(1, 200, "accepted"));
    writer.record(entry(2, 200, "rejected"));
    writer.record(entry(3, 404, "accepted"));
    writer.record(entry(4, 404, "rejected"));
    await writer.flush();
    const rows = await t.app.database.db
      .selectFrom("request_log")
      .select("request_id")
      .where("request_id", "in", [1, 2, 3, 4].map(id))
      .orderBy("request_id")
      .execute();
    expect(rows.map((r) => r.request_id)).toEqual([id(1), id(4)]);
    expect(dropped).toEqual([1, 1]);
    await writer.stop();
  });
});

describe("the request log, attacked (pglite)", () => {
  let t: TestApp;
  let p: { id: number; key: string };
  let admin: string;
  const entryOf = async (requestId: string, auth: string, path = REQUESTS): Promise<Json> => {
    for (let i = 0; i < 100; i += 1) {
      const r = await t.call("GET", `${path}${requestId}/`, { auth });
      if (r.status === 200) return j(r);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${requestId} never appeared`);
  };
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { BUSINESS_TIMEZONE: ZONE });
    admin = await t.token();
    p = await t.provider(`=HYPERLINK("http://evil.example") ${Date.now()}`);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("records a body holding a lone UTF-16 surrogate, and the requests beside it in the same batch", async () => {
    // JSON's \ud800 escape: valid JSON text, but not a character Postgres's JSON parser accepts.
    const odd = await t.call("POST", LEADS, {
      auth: p.key,
      body: { "k\udc00": "x\ud800y", external_id: "\ud800", vehicles: [{ make: "x\ud800y" }] },
    });
    const plain = await t.call("GET", `${LEADS}no-such-lead/`, { auth: p.key });
    const entry = await entryOf((await j(odd)).request_id, p.key);
    expect(entry.request_body).toMatchObject({
      "k\ufffd": "…string(3)",
      external_id: "\ufffd",
      vehicles: [{ make: "x\ufffdy" }],
    });
    expect((await entryOf((await j(plain)).request_id, p.key)).status).toBe(404);
  });

  it("records a body holding NUL characters, with each one as U+FFFD", async () => {
    // Postgres's text holds no NUL: the entry keeps the rest, with U+FFFD in its place. (A
    // provider of its own: polling for the entry counts against the log's read limit.)
    const own = await t.provider(`NUL ${Date.now()}`);
    const r = await t.call("POST", LEADS, {
      auth: own.key,
      body: { "k\u0000": "a\u0000b", external_id: "x\u0000y", vehicles: [{ model: "a\u0000b" }] },
    });
    expect(r.status).toBe(400);
    const entry = await entryOf((await j(r)).request_id, own.key);
    expect(entry.request_body).toMatchObject({
      "k\ufffd": "…string(3)",
      external_id: "x\ufffdy",
      vehicles: [{ model: "a\ufffdb" }],
    });
    expect(entry.external_id).toBe("x\ufffdy");
  });

  /** Personal data under keys and in places the contract does not name, with the raw text each must never show. */
  const HIDDEN = {
    email_address: "hidden.one@example.com",
    emailAddress: "hidden.two@example.com",
    mobile: "+1 415 555 0199",
    phone2: "(415) 555-0142",
    customer_name: "Philippa Wetherspoon",
    address: "1600 Pennsylvania Ave NW",
    "first name": "Ignatius",
    "e-mail": "hidden.three@example.com",
  };
  const HIDDEN_RAW = [
    "hidden.one",
    "hidden.two",
    "hidden.three",
    "555 0199",
    "555-0142",
    "Wetherspoon",
    "Philippa",
    "Pennsylvania",
    "Ignatius",
    "Call me after five",
    "I agree to be called by Acme",
    "maria.q@example.com",
    "4155550123",
    "1HGCM82633A004352",
    "Quintanilla Hauling",
  ];
  const personalLead = (external_id: string) =>
    leadBody({
      ...HIDDEN,
      external_id,
      origin_zip: "00000",
      first_name: "Bartholomew",
      last_name: "Quintanilla",
      email: "maria.q@example.com",
      phone_number: "415-555-0123",
      company_name: "Quintanilla Hauling",
      note_from_shipper: "Call me after five",
      source_url: "https://leads.example.com/form?email=maria.q@example.com&phone=4155550123",
      consent: { consent_text: "I agree to be called by Acme", ip_address: "2001:db8:1234:5678::1", ...HIDDEN },
      vehicles: [{ year: 2020, make: "Honda", model: "Accord", type: "CAR", vin: "1HGCM82633A004352", owner: HIDDEN }],
      nested: { deeper: [{ email: "maria.q@example.com" }] },
    });

  it("keeps only the contract's non-personal members as sent; everything else as its type and size (REST)", async () => {
    const own = await t.provider(`mask REST ${Date.now()}`);
    const body = personalLead(`mask-${Date.now()}`);
    const r = await t.call("POST", LEADS, { auth: own.key, body });
    expect(r.status).toBe(400);
    const entry = await entryOf((await j(r)).request_id, own.key);
    const text = JSON.stringify(entry);
    for (const raw of [...RAW, ...HIDDEN_RAW]) expect(text).not.toContain(raw);
    expect(entry.request_body).toMatchObject({
      external_id: body.external_id,
      origin_zip: "00000",
      destination_zip: body.destination_zip,
      estimated_ship_date: body.estimated_ship_date,
      overseas_type: "DOMESTIC",
      first_name: "B…",
      last_name: "Q…",
      company_name: "Q…",
      email: "m***@example.com",
      phone_number: "…0123",
      note_from_shipper: "…string(18)",
      source_url: "https://leads.example.com/form?…",
      email_address: "…string(22)",
      emailAddress: "…string(22)",
      mobile: "…string(15)",
      phone2: "…string(14)",
      customer_name: "…string(20)",
      address: "…string(24)",
      "first name": "…string(8)",
      // A hyphen or case does not hide a contract member: "e-mail" is masked as email is.
      "e-mail": "h***@example.com",
      nested: "…object(1)",
      consent: {
        consent_text: "…string(28)",
        ip_address: "2001:db8:1234::/48",
        email_address: "…string(22)",
        "first name": "…string(8)",
      },
      vehicles: [{ year: 2020, make: "Honda", model: "Accord", type: "CAR", vin: "…4352", owner: "…object(8)" }],
    });
    expect(entry.request_body_truncated).toBe(false);
    expect(entry.request_body_bytes).toBe(Buffer.byteLength(JSON.stringify(body)));
  });

  it("keeps a lead sent over Connect JSON and gRPC the same way, whatever the case of its keys", async () => {
    const p = await t.provider(`mask RPC ${Date.now()}`);
    const connect = connectClient(PublicLeadService, t.port, "connect");
    const grpc = connectClient(PublicLeadService, t.port, "grpc");
    const message = (externalId: string) => ({
      externalId,
      firstName: "Bartholomew",
      lastName: "Quintanilla",
      email: "maria.q@example.com",
      phoneNumber: "415-555-0123",
      companyName: "Quintanilla Hauling",
      noteFromShipper: "Call me after five",
      sourceUrl: "https://leads.example.com/form?email=maria.q@example.com",
      originZip: "00000",
      estimatedShipDate: "2027-01-15",
      overseasType: 1 as OverseasType,
      shipVia: 1 as ShipVia,
      vehicles: [{ year: 2020, make: "Honda", model: "Accord", type: 1 as VehicleType, vin: "1HGCM82633A004352" }],
      consent: { consentText: "I agree to be called by Acme", ipAddress: "198.51.100.77" },
    });
    for (const [client, id] of [
      [connect, `connect-${Date.now()}`],
      [grpc, `grpc-${Date.now()}`],
    ] as const) {
      const err = (await client.createLead(message(id), bearer(p.key)).catch((e: unknown) => e)) as ConnectError;
      expect(err.code).toBe(Code.InvalidArgument);
      let entry: Json | undefined;
      for (let i = 0; i < 100 && !entry; i += 1) {
        const page = await j(t.call("GET", `${REQUESTS}?external_id=${id}`, { auth: p.key }));
        entry = page.results[0];
        if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const text = JSON.stringify(entry);
      for (const raw of [...RAW, ...HIDDEN_RAW]) expect(text).not.toContain(raw);
      expect(entry?.request_body).toMatchObject({
        external_id: id,
        first_name: "B…",
        last_name: "Q…",
        email: "m***@example.com",
        phone_number: "…0123",
        note_from_shipper: "…string(18)",
        source_url: "https://leads.example.com/form?…",
        consent: { consent_text: "…string(28)", ip_address: "198.51.100.0/24" },
        vehicles: [{ make: "Honda", model: "Accord", vin: "…4352" }],
      });
    }
    // Connect JSON sent by hand, with camelCase and snake_case keys the proto JSON reader takes.
    const raw = await fetch(`${t.url}/leadprovider.v1.PublicLeadService/CreateLead`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${p.key}` },
      body: JSON.stringify({ externalId: `cj-${Date.now()}`, firstName: "Bartholomew", phone_number: "415-555-0123" }),
    });
    expect(raw.status).toBe(400);
    const entry = await entryOf(raw.headers.get("x-request-id") as string, p.key);
    expect(entry.request_body).toMatchObject({ first_name: "B…", phone_number: "…0123" });
  });

  it("describes a body that is not an object, and keys that name what every object inherits", async () => {
    const p = await t.provider(`mask shapes ${Date.now()}`);
    const list = await t.call("POST", LEADS, { auth: p.key, body: [{ email: "maria.q@example.com" }] });
    expect(list.status).toBe(400);
    expect((await entryOf((await j(list)).request_id, p.key)).request_body).toBe("…array(1)");

    const body: Record<string, unknown> = {
      constructor: { email: "maria.q@example.com" },
      toString: "maria.q@example.com",
      hasOwnProperty: 4155550123,
    };
    // As JSON.parse reads it: an own key `__proto__`, kept as a key.
    Object.defineProperty(body, "__proto__", { value: { email: "maria.q@example.com" }, enumerable: true });
    const r = await t.call("POST", LEADS, { auth: p.key, body });
    const entry = await entryOf((await j(r)).request_id, p.key);
    expect(JSON.stringify(entry)).not.toContain("maria.q");
    expect(JSON.stringify(entry)).not.toContain("4155550123");
    expect(JSON.stringify(entry.request_body)).toContain('"__proto__":"…object(1)"');
    expect(entry.request_body).toMatchObject({
      constructor: "…object(1)",
      toString: "…string(19)",
      hasOwnProperty: "…number",
    });
  });

  it("records requests to mixed-case paths, and refusals before the gate, for the provider", async () => {
    const mixed = await t.call("POST", "/Api/V1/Public/Leads/", {
      auth: p.key,
      body: leadBody({ origin_zip: "00000" }),
    });
    expect(mixed.status).toBe(400);
    expect(await entryOf((await j(mixed)).request_id, p.key)).toMatchObject({ code: "invalid_zip", status: 400 });

    const malformed = await t.call("POST", LEADS, { auth: p.key, body: '{"external_id":"x",' });
    expect(malformed.status).toBe(400);
    const m = await entryOf((await j(malformed)).request_id, p.key);
    expect(m).toMatchObject({ code: "malformed_json", status: 400, outcome: "rejected", livemode: true });
    expect(m.key_hint).toBe(p.key.slice(-4));

    // A Connect message the server cannot read: still the provider's, with the RPC code.
    const connect = await fetch(`${t.url}/leadprovider.v1.PublicLeadService/CreateLead`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${p.key}` },
      body: '{"external_id":"x",',
    });
    expect(connect.status).toBe(400);
    const id = connect.headers.get("x-request-id") as string;
    expect(await entryOf(id, p.key)).toMatchObject({
      protocol: "connect",
      status: 400,
      rpc_code: "invalid_argument",
      code: "invalid_argument",
      outcome: "rejected",
    });
  });

  it("pages by the next link to the last entry, over REST, for the provider and the back office", async () => {
    const q = await t.provider();
    for (let i = 0; i < 3; i++)
      expect((await t.call("POST", LEADS, { auth: q.key, body: leadBody() })).status).toBe(201);
    const walk = async (first: string, auth: string) => {
      const ids: string[] = [];
      let next: string | null = first;
      while (next) {
        const r = await t.call("GET", next, { auth });
        expect(r.status, next).toBe(200);
        const page = await j(r);
        ids.push(...page.results.map((e: Json) => e.request_id));
        if (page.next_page_token) expect(page.next_page_token.length).toBeLessThanOrEqual(64);
        next = page.next;
      }
      return ids;
    };
    await expect.poll(async () => (await walk(`${REQUESTS}?page_size=1`, q.key)).length, { timeout: 5000 }).toBe(3);
    const mine = await walk(`${REQUESTS}?page_size=1`, q.key);
    expect(new Set(mine).size).toBe(3);
    expect(await walk(`/api/v1/admin/requests/?provider_id=${q.id}&page_size=2`, admin)).toEqual(mine);
  });

  it("refuses a forged page token with 400, never 500", async () => {
    const forged = Buffer.from("9999999999999999.1").toString("base64url");
    for (const path of [REQUESTS, "/api/v1/admin/requests/"]) {
      const r = await t.call("GET", `${path}?page_token=${forged}`, { auth: path === REQUESTS ? p.key : admin });
      expect(r.status).toBe(400);
      expect((await j(r)).errors[0].field).toBe("page_token");
    }
  });

  it("answers CSV for text/csv with a charset, and defuses formulas in names", async () => {
    expect((await t.call("POST", LEADS, { auth: p.key, body: leadBody() })).status).toBe(201);
    const csv = await t.call("GET", "/api/v1/admin/stats/?group_by=provider", {
      auth: admin,
      headers: { accept: "text/csv; charset=utf-8" },
    });
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const text = await csv.text();
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"")`);
    expect(text).not.toMatch(/(^|,)"?=HYPERLINK/m);
  });
});

describe("the request log's growth, bounded whatever callers send (pglite)", () => {
  let t: TestApp;
  let admin: string;
  const ADMIN_REQUESTS = "/api/v1/admin/requests/";
  const TALLIES = "/api/v1/admin/request_tallies/";
  const flushed = () => t.app.requestLog?.flush();
  const forwarded = (ip: string) => ({ "x-forwarded-for": ip });

  beforeAll(async () => {
    // One minute for the whole describe (the budgets are per minute), and addresses from X-Forwarded-For.
    t = await startTestApp(
      { name: "pglite" },
      { TRUST_PROXY: "loopback", AUTH_FAILURES_PER_MINUTE: "30", BUSINESS_TIMEZONE: ZONE },
      { now: minuteClock() },
    );
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function listed(clientIp: string): Promise<Json[]> {
    await flushed();
    const page = await j(t.call("GET", `${ADMIN_REQUESTS}?client_ip=${clientIp}&page_size=100`, { auth: admin }));
    return page.results;
  }
  async function tallied(filter = ""): Promise<Json[]> {
    await flushed();
    return (await j(t.call("GET", `${TALLIES}?page_size=100${filter}`, { auth: admin }))).results;
  }

  it("keeps no body of a request no key named a provider for: only its size and a SHA-256", async () => {
    const body = { ...leadBody({ email: "secret.person@example.com" }), padding: "x".repeat(60_000) };
    const text = JSON.stringify(body);
    const ip = "192.0.2.11";
    const r = await fetch(`${t.url}${LEADS}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer lp_live_wrong", ...forwarded(ip) },
      body: text,
    });
    expect(r.status).toBe(401);
    const noKey = await fetch(`${t.url}${LEADS}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...forwarded(ip) },
      body: text,
    });
    expect(noKey.status).toBe(401);
    const entries = await listed(ip);
    expect(entries).toHaveLength(2);
    for (const e of entries) {
      expect(e).toMatchObject({ provider_id: null, request_body: null, request_body_bytes: Buffer.byteLength(text) });
      // Nothing of the body is kept, whether or not it was read before the refusal.
      expect(JSON.stringify(e)).not.toContain("secret.person");
      expect(
        e.request_body_sha256 === null || e.request_body_sha256 === createHash("sha256").update(text).digest("hex"),
      ).toBe(true);
    }
    const rows = await t.app.database.db
      .selectFrom("request_log")
      .select(sql<number>`octet_length(request_log::text)`.as("bytes"))
      .where("client_ip", "=", ip)
      .execute();
    for (const row of rows) expect(Number(row.bytes)).toBeLessThan(1024);
  });

  it("lists at most ten of an address's refused requests a minute and counts the rest, limiter refusals too", async () => {
    const ip = "192.0.2.22";
    for (let i = 0; i < 25; i += 1) {
      const r = await t.call("GET", `${LEADS}x/`, { headers: forwarded(ip) });
      expect(r.status).toBe(401);
    }
    // A wrong key from the same address: 30 failures, then the failed-authentication limiter's 429s.
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      statuses.push((await t.call("GET", `${LEADS}x/`, { auth: "lp_live_wrong", headers: forwarded(ip) })).status);
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    expect(await listed(ip)).toHaveLength(10);
    const counts = (await tallied()).filter((c) => c.provider_id === null);
    const sum = (outcome: string) => counts.filter((c) => c.outcome === outcome).reduce((a, c) => a + c.requests, 0);
    // 65 refused, 10 listed: 45 refusals and the limiter's 10 are counted instead.
    expect(sum("rejected")).toBeGreaterThanOrEqual(45);
    expect(sum("rate_limited")).toBe(10);
    expect(counts.find((c) => c.outcome === "rate_limited")).toMatchObject({ livemode: null, code: "rate_limited" });
  });

  it("lists at most 120 anonymous requests a minute from all addresses together", async () => {
    const before = (await tallied()).filter((c) => c.provider_id === null).reduce((a, c) => a + c.requests, 0);
    const beforeRows = await t.app.database.db
      .selectFrom("request_log")
      .select(sql<number>`count(*)`.as("n"))
      .where("provider_id", "is", null)
      .executeTakeFirstOrThrow();
    const sent = 300;
    await Promise.all(
      Array.from({ length: sent }, (_, i) =>
        t.call("POST", LEADS, { body: leadBody(), headers: forwarded(`198.51.100.${i % 30}`) }),
      ),
    );
    await flushed();
    const rows = await t.app.database.db
      .selectFrom("request_log")
      .select(sql<number>`count(*)`.as("n"))
      .where("provider_id", "is", null)
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(120);
    const after = (await tallied()).filter((c) => c.provider_id === null).reduce((a, c) => a + c.requests, 0);
    expect(after - before).toBe(sent - (120 - Number(beforeRows.n)));
  });

  it("lists a provider's first rate-limited request of a minute and counts the rest; the stats count every one", async () => {
    const p = await t.provider(undefined, { rate_limit_per_minute: 2 });
    const sub = `bounded-${Date.now()}`;
    const statuses: number[] = [];
    for (let i = 0; i < 14; i += 1) {
      statuses.push((await t.call("POST", LEADS, { auth: p.key, body: leadBody({ sub_id: sub }) })).status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    await flushed();
    const mine = await j(t.call("GET", `${ADMIN_REQUESTS}?provider_id=${p.id}&page_size=100`, { auth: admin }));
    const limited = mine.results.filter((e: Json) => e.outcome === "rate_limited");
    expect(limited).toHaveLength(10);
    expect(mine.results.filter((e: Json) => e.outcome === "accepted")).toHaveLength(2);
    const counted = (await tallied(`&provider_id=${p.id}`)).reduce((a, c) => a + c.requests, 0);
    expect(counted).toBe(2);
    // The stats' refusals still count all twelve.
    const stats = await j(t.call("GET", `/api/v1/public/stats/?group_by=sub_id`, { auth: p.key }));
    const group =
      stats.results?.find?.((g: Json) => g.sub_id === sub) ?? stats.groups?.find?.((g: Json) => g.sub_id === sub);
    expect(JSON.stringify(group ?? stats)).toContain('"rate_limited":12');
  });

  it("lists a provider's first ten answered reads a minute, counts the rest by operation, and every refused read", async () => {
    const p = await t.provider();
    const created = await j(t.call("POST", LEADS, { auth: p.key, body: leadBody() }));
    for (let i = 0; i < 15; i += 1) {
      expect((await t.call("GET", `${LEADS}${created.external_id}/`, { auth: p.key })).status).toBe(200);
    }
    for (let i = 0; i < 12; i += 1) {
      expect((await t.call("GET", `${LEADS}missing-${i}/`, { auth: p.key })).status).toBe(404);
    }
    await flushed();
    const mine = await j(t.call("GET", `${ADMIN_REQUESTS}?provider_id=${p.id}&page_size=100`, { auth: admin }));
    const reads = mine.results.filter((e: Json) => e.operation === "GET /api/v1/public/leads/{external_id}/");
    expect(reads.filter((e: Json) => e.status === 200)).toHaveLength(10);
    expect(reads.filter((e: Json) => e.status === 404)).toHaveLength(12);
    expect(mine.results.filter((e: Json) => e.operation === "POST /api/v1/public/leads/")).toHaveLength(1);
    const counted = await tallied(`&provider_id=${p.id}`);
    expect(counted).toEqual([
      expect.objectContaining({
        provider_id: p.id,
        livemode: true,
        outcome: "accepted",
        code: null,
        operation: "GET /api/v1/public/leads/{external_id}/",
        requests: 5,
      }),
    ]);
  });

  it("cuts a kept body to 4 KiB, in order, and says it did", async () => {
    const p = await t.provider();
    const vehicles = Array.from({ length: 400 }, (_, i) => ({
      year: 2020,
      make: `Make${i}`,
      model: "Model",
      type: "CAR",
    }));
    const body = leadBody({ vehicles, note_from_shipper: "n".repeat(30_000), external_id: `big-${Date.now()}` });
    const r = await t.call("POST", LEADS, { auth: p.key, body });
    expect(r.status).toBe(400);
    await flushed();
    const entry = await j(t.call("GET", `${REQUESTS}${(await j(r)).request_id}/`, { auth: p.key }));
    expect(entry.request_body_truncated).toBe(true);
    expect(entry.request_body_bytes).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(Buffer.byteLength(JSON.stringify(entry.request_body))).toBeLessThanOrEqual(4096);
    expect(entry.request_body).toMatchObject({ external_id: body.external_id, note_from_shipper: "…string(30000)" });
    expect(entry.request_body.vehicles[0]).toEqual({ year: 2020, make: "Make0", model: "Model", type: "CAR" });
    expect(entry.request_body.vehicles.length).toBeLessThan(400);
    // A body within the limit is whole.
    const small = await t.call("POST", LEADS, { auth: p.key, body: leadBody({ origin_zip: "00000" }) });
    await flushed();
    const whole = await j(t.call("GET", `${REQUESTS}${(await j(small)).request_id}/`, { auth: p.key }));
    expect(whole.request_body_truncated).toBe(false);
  });

  it("refuses a forged tally page token with 400 naming it", async () => {
    for (const token of ["not-a-token", Buffer.from("[1,2]").toString("base64url"), "%%%"]) {
      const r = await t.call("GET", `${TALLIES}?page_token=${encodeURIComponent(token)}`, { auth: admin });
      expect(r.status).toBe(400);
      expect((await j(r)).errors[0].field).toBe("page_token");
    }
  });
});
