/**
 * The provider portal's money routes (docs/money.md, docs/portal.md) against a real server, on
 * PGlite and (with TEST_DATABASE_URL) Postgres: a signed-in person reads its provider's own book
 * only — balance, lines, statements (JSON, CSV, PDF), terms, quotes and earnings per day — the
 * same answers its provider's key gets from the Public API; live and test books apart; earnings
 * per calendar day of BUSINESS_TIMEZONE, zero-filled, at an hour when UTC is already on the next
 * date; and the back office's spend per day beside it. After every test the ledger is whole.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { DateTime } from "luxon";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import {
  car,
  expectLedgerWhole,
  freshLead,
  ISSUE_TERMS,
  movableClock,
  parseCsv,
  portalPerson,
} from "./helpers/money.ts";

const ZONE = "America/New_York";
const PASSWORD = "amber quarry lantern 64 fjord";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;

describe.each(BACKENDS)("the portal's money ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      {
        RATE_LIMIT_PER_MINUTE: "100000",
        RATE_LIMIT_PER_DAY: "10000000",
        SETTLEMENT_INTERVAL_SECONDS: "86400",
        BUSINESS_TIMEZONE: ZONE,
      },
      { now: clock.now },
    );
    admin = await t.token();
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });
  afterEach(async () => {
    clock.reset();
    await expectLedgerWhole(t.app.database.db);
  });

  /** A provider with live and test keys, `terms` when given, and one of its people signed in. */
  async function payee(terms?: Json) {
    const p = await t.provider();
    const issued = await j(
      t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } }),
    );
    if (terms) {
      const res = await t.call("PUT", `/api/v1/lead_providers/${p.id}/terms/`, { auth: admin, body: terms });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    const person = await portalPerson(t, admin, p.id, PASSWORD);
    return { ...p, testKey: issued.api_key as string, ...person };
  }
  const create = async (key: string, body: Json) => {
    const res = await t.call("POST", "/api/v1/public/leads/", { auth: key, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Json;
  };
  const pub = (key: string, path: string) => j(t.call("GET", `/api/v1/public/${path}`, { auth: key }));
  const month = () => DateTime.now().setZone(ZONE).toFormat("yyyy-MM");
  const withoutAsOf = ({ as_of: _, ...rest }: Json) => rest;

  let fakeLead = 9_000_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1000;
  /** A purchase posted as lead creation posts it, dated `at` (in the future: the ledger never dates a line before now). */
  async function purchaseAt(providerId: number, livemode: boolean, at: DateTime, cents: number, termsVersion: number) {
    fakeLead += 1;
    await sql`select ledger_post_purchase(${fakeLead}::bigint, ${providerId}::bigint, ${livemode}::boolean,
      ${`pinned-${fakeLead}`}::text, ${`LP-PIN${fakeLead}`}::text, ${at.toJSDate()}::timestamptz, ${cents}::bigint,
      'USD', ${termsVersion}::integer, 7)`.execute(t.app.database.db);
  }

  it("counts earnings per day of the business time zone, zero-filled, when UTC is already on the next date", async () => {
    // 02:30 UTC three days ahead: still the evening before in New York (UTC-4 or UTC-5).
    const utcDay = DateTime.utc().plus({ days: 3 }).startOf("day");
    const late = utcDay.set({ hour: 2, minute: 30 });
    // 07:30 UTC two dates before: the same date in New York, its yesterday.
    const early = late.minus({ days: 2 }).plus({ hours: 5 });
    const nyToday = late.setZone(ZONE);
    expect(nyToday.toISODate()).not.toBe(late.toISODate());

    const a = await payee(ISSUE_TERMS);
    const b = await payee();
    await purchaseAt(a.id, true, early, 1500, 1);
    await purchaseAt(b.id, true, early.plus({ hours: 1 }), 1000, 0);
    await purchaseAt(a.id, true, late, 2500, 1);
    await purchaseAt(a.id, true, late.plus({ minutes: 10 }), 700, 1);
    await purchaseAt(a.id, false, late, 300, 1);
    clock.set(late.plus({ minutes: 20 }).toJSDate());
    // Sessions end after 12 idle hours: sign in again on the moved clock.
    Object.assign(a, await portalPerson(t, admin, a.id, PASSWORD));
    Object.assign(b, await portalPerson(t, admin, b.id, PASSWORD));

    const day = (n: number) => nyToday.minus({ days: n }).toISODate();
    const earnings = await j(a.portal("GET", "earnings/?days=4"));
    expect(earnings).toMatchObject({
      livemode: true,
      currency: "USD",
      timezone: ZONE,
      from: day(3),
      to: day(0),
      total_cents: 4700,
      total_leads: 3,
    });
    expect(earnings.days).toEqual([
      { date: day(3), amount_cents: 0, leads: 0 },
      { date: day(2), amount_cents: 0, leads: 0 },
      { date: day(1), amount_cents: 1500, leads: 1 },
      { date: day(0), amount_cents: 3200, leads: 2 },
    ]);
    expect(earnings.days.map((d: Json) => d.date)).not.toContain(late.toISODate());
    // The test book apart; B sees only its own; 30 days by default.
    expect((await j(a.portal("GET", "earnings/?days=4&mode=test"))).days.at(-1)).toEqual({
      date: day(0),
      amount_cents: 300,
      leads: 1,
    });
    const bEarnings = await j(b.portal("GET", "earnings/?days=4"));
    expect(bEarnings.days.map((d: Json) => d.amount_cents)).toEqual([0, 0, 1000, 0]);
    const month_ = await j(a.portal("GET", "earnings/"));
    expect(month_.days).toHaveLength(30);
    expect(month_.to).toBe(day(0));

    // The back office's spend: every provider's purchases of the book, the same days.
    const spend = await j(t.call("GET", "/api/v1/admin/ledger/spend/?days=4", { auth: admin }));
    expect(spend).toMatchObject({ livemode: true, timezone: ZONE, from: day(3), to: day(0) });
    const spent = (date: string | null) => spend.days.find((d: Json) => d.date === date);
    expect(spent(day(1))).toEqual({ date: day(1), amount_cents: 2500, leads: 2 });
    expect(spent(day(0))).toEqual({ date: day(0), amount_cents: 3200, leads: 2 });
    const testSpend = await j(t.call("GET", "/api/v1/admin/ledger/spend/?days=4&mode=test", { auth: admin }));
    expect(testSpend.days.at(-1)).toEqual({ date: day(0), amount_cents: 300, leads: 1 });
    expect(testSpend.total_cents).toBe(300);
  });

  it("shows a provider's people only their own book, as their key reads it from the Public API", async () => {
    const a = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
    const b = await payee({ ...ISSUE_TERMS, default_price_cents: 9900, settlement_days: 0 });
    const aLead = await create(a.key, freshLead({ origin_zip: "90210", vehicles: [car(), car()] }));
    const bLead = await create(b.key, freshLead());
    await t.app.settlement.runOnce();
    const paid = await t.call("POST", `/api/v1/lead_providers/${b.id}/payouts/`, {
      auth: admin,
      body: { amount_cents: 100, reference: "B-ONLY", paid_at: new Date().toISOString() },
    });
    expect(paid.status).toBe(201);

    const balance = await j(a.portal("GET", "balance/"));
    expect(balance).toMatchObject({ pending_cents: 0, available_cents: 2500, paid_out_cents: 0, livemode: true });
    expect(withoutAsOf(balance)).toEqual(withoutAsOf(await pub(a.key, "balance/")));
    expect(withoutAsOf(await j(b.portal("GET", "balance/")))).toEqual(withoutAsOf(await pub(b.key, "balance/")));

    const lines = await j(a.portal("GET", "balance_transactions/?page_size=100"));
    expect(lines.results.map((l: Json) => l.id)).toEqual(
      (await pub(a.key, "balance_transactions/?page_size=100")).results.map((l: Json) => l.id),
    );
    expect(lines.results.map((l: Json) => l.lead?.external_id)).toEqual([
      aLead.external_id,
      aLead.external_id,
      aLead.external_id,
    ]);
    expect(JSON.stringify(lines)).not.toContain("B-ONLY");
    expect((await j(a.portal("GET", `balance_transactions/?external_id=${bLead.external_id}`))).results).toEqual([]);
    const purchases = await j(a.portal("GET", "balance_transactions/?type=lead_purchase"));
    expect(purchases.results.map((l: Json) => [l.type, l.amount_cents])).toEqual([["lead_purchase", 2500]]);
    // B's line as A's page token: not a token of A's list.
    const bLines = await j(b.portal("GET", "balance_transactions/"));
    const token = Buffer.from(bLines.results[0].id).toString("base64url");
    const stolen = await a.portal("GET", `balance_transactions/?page_token=${token}`);
    expect(stolen.status).toBe(400);
    expect((await j(stolen)).errors.map((e: Json) => e.field)).toEqual(["page_token"]);
    // Paging: one line a page, the next link stays on the portal.
    const first = await j(a.portal("GET", "balance_transactions/?page_size=1"));
    expect(first.next).toContain("/api/v1/portal/balance_transactions/");
    const second = await j(a.portal("GET", `balance_transactions/?page_size=1&page_token=${first.next_page_token}`));
    expect(second.results[0].id).toBe(lines.results[1].id);

    const statements = await j(a.portal("GET", "statements/"));
    expect(statements).toEqual(await pub(a.key, "statements/"));
    expect(statements.results[0]).toMatchObject({ month: month(), status: "open", closing_balance_cents: 2500 });
    const statement = await j(a.portal("GET", `statements/${month()}/`));
    expect(statement).toEqual(await pub(a.key, `statements/${month()}/`));
    expect(statement.totals.payout).toBe(0);

    const terms = await j(a.portal("GET", "terms/"));
    expect(terms).toEqual(await pub(a.key, "terms/"));
    expect(terms.price_rules[1].description).toBe("the origin is in one of CA, NY and at least 2 vehicles");
    expect((await j(b.portal("GET", "terms/"))).default_price_cents).toBe(9900);

    const body = freshLead({ origin_zip: "10001", vehicles: [car(), car(), car()] });
    const quote = await j(a.portal("POST", "terms/quote/", body));
    expect(quote).toEqual({
      amount_cents: 3000,
      currency: "USD",
      rule: "price_rules[1]",
      terms_version: 1,
      base_cents: 2000,
      extra_vehicles_cents: 1000,
      livemode: true,
    });
    expect((await j(b.portal("POST", "terms/quote/", freshLead()))).amount_cents).toBe(9900);
    // A quote stores nothing.
    expect((await j(a.portal("GET", "balance_transactions/"))).results).toHaveLength(3);
  });

  it("keeps the test book apart from the live one in every route", async () => {
    const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
    const live = await create(p.key, freshLead());
    const test = await create(p.testKey, freshLead({ origin_zip: "75201", vehicles: [car(), car()] }));
    const liveLines = await j(p.portal("GET", "balance_transactions/"));
    const testLines = await j(p.portal("GET", "balance_transactions/?mode=test"));
    expect(liveLines.results.map((l: Json) => l.lead.external_id)).toEqual([live.external_id]);
    expect(testLines.results.map((l: Json) => l.lead.external_id)).toEqual([test.external_id]);
    expect(await j(p.portal("GET", "balance/?mode=test"))).toMatchObject({ pending_cents: 2000, livemode: false });
    expect(await j(p.portal("GET", "balance/?mode=live"))).toMatchObject({ pending_cents: 1500, livemode: true });
    expect(withoutAsOf(await j(p.portal("GET", "balance/?mode=test")))).toEqual(
      withoutAsOf(await pub(p.testKey, "balance/")),
    );
    expect((await j(p.portal("GET", "earnings/?days=1&mode=test"))).days).toEqual([
      { date: DateTime.now().setZone(ZONE).toISODate(), amount_cents: 2000, leads: 1 },
    ]);
    expect((await j(p.portal("GET", "earnings/?days=1"))).total_cents).toBe(1500);
    const testStatement = await j(p.portal("GET", `statements/${month()}/?mode=test`));
    expect(testStatement).toMatchObject({ livemode: false, closing_balance_cents: 2000 });
    const csv = await p.portal("GET", `statements/${month()}/?mode=test&format=csv`);
    expect(csv.headers.get("content-disposition")).toContain(`statement-${month()}-test.csv`);
    const rows = parseCsv(await csv.text());
    expect(rows.map((r) => r.external_id)).toEqual([test.external_id]);
    expect((await j(p.portal("GET", "terms/?mode=test"))).livemode).toBe(false);
    expect((await j(p.portal("POST", "terms/quote/?mode=test", freshLead()))).livemode).toBe(false);
  });

  it("answers a month's statement as CSV and as a PDF from the portal", async () => {
    const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
    for (const v of [1, 2]) await create(p.key, freshLead({ vehicles: Array.from({ length: v }, () => car()) }));
    await t.app.settlement.runOnce();
    await t.call("POST", `/api/v1/lead_providers/${p.id}/adjustments/`, {
      auth: admin,
      body: { amount_cents: -250, reason: "Returned lead, as agreed" },
    });
    const s = await j(p.portal("GET", `statements/${month()}/`));
    const csv = await p.portal("GET", `statements/${month()}/?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    expect(csv.headers.get("content-disposition")).toContain(`statement-${month()}.csv`);
    const text = await csv.text();
    expect(text).toBe(
      await (await t.call("GET", `/api/v1/public/statements/${month()}/?format=csv`, { auth: p.key })).text(),
    );
    const rows = parseCsv(text);
    expect(rows).toHaveLength(s.line_count);
    expect(rows.reduce((n, r) => n + Number(r.amount_cents), 0)).toBe(
      s.closing_balance_cents - s.opening_balance_cents,
    );
    expect(rows.find((r) => r.type === "adjustment")?.description).toBe("Returned lead, as agreed");

    const pdf = await p.portal("GET", `statements/${month()}/?format=pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toContain(`statement-${month()}.pdf`);
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe("%PDF-");
    const dir = mkdtempSync(join(tmpdir(), "portal-statement-"));
    try {
      writeFileSync(join(dir, "s.pdf"), bytes);
      const words = execFileSync("pdftotext", ["-layout", join(dir, "s.pdf"), "-"], { encoding: "utf8" });
      expect(words).toContain(`Statement ${month()}`);
      expect(words).toContain(`Lines: ${s.line_count}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses another credential and bad input, naming the field", async () => {
    const p = await payee();
    expect((await t.call("GET", "/api/v1/portal/balance/")).status).toBe(401);
    const keyed = await t.call("GET", "/api/v1/portal/balance/", { auth: p.key });
    expect(keyed.status).toBe(401);
    expect((await j(keyed)).code).toBe("session_required");
    for (const [path, field] of [
      ["earnings/?days=0", "days"],
      ["earnings/?days=367", "days"],
      ["earnings/?days=week", "days"],
      ["earnings/?mode=sandbox", "mode"],
      ["statements/2999-01/", "month"],
      ["statements/2026-13/", "month"],
      ["balance_transactions/?type=refund", "type"],
      ["balance_transactions/?created_after=soon", "created_after"],
    ] as const) {
      const res = await p.portal("GET", path);
      expect(res.status, path).toBe(400);
      expect(
        ((await j(res)).errors as Json[]).map((e) => e.field),
        path,
      ).toEqual([field]);
    }
    const badLead = await p.portal("POST", "terms/quote/", freshLead({ origin_zip: "00000" }));
    expect(badLead.status).toBe(400);
    expect((await j(badLead)).errors.map((e: Json) => e.field)).toEqual(["origin_zip"]);
    // A change from another site is refused even with the cookie.
    const crossSite = await t.call("POST", "/api/v1/portal/terms/quote/", {
      body: freshLead(),
      headers: { cookie: p.cookie, origin: "https://evil.example" },
    });
    expect(crossSite.status).toBe(403);
    expect((await j(crossSite)).code).toBe("cross_origin_refused");
  });
});
