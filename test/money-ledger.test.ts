/**
 * The ledger under load and against misuse, on PGlite and (with TEST_DATABASE_URL) Postgres:
 * 100 concurrent creates from 10 providers post exactly 100 purchases with every chain gapless;
 * UPDATE, DELETE and TRUNCATE of the ledger are refused by the database itself; two instances
 * sharing Postgres settle each purchase once and price by terms another instance just changed.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { countTransactions, expectLedgerWhole, freshLead, ISSUE_TERMS } from "./helpers/money.ts";

const LEADS = "/api/v1/public/leads/";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;
const ENV = { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000", SETTLEMENT_INTERVAL_SECONDS: "86400" };

describe.each(BACKENDS)("the ledger ($name)", (backend) => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp(backend, ENV);
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const setTerms = (id: number, terms: Json) =>
    t.call("PUT", `/api/v1/lead_providers/${id}/terms/`, { auth: admin, body: terms });

  it("posts exactly 100 purchases for 100 concurrent creates from 10 providers; each chain is gapless and adds up", async () => {
    const providers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const p = await t.provider();
        await setTerms(p.id, { ...ISSUE_TERMS, default_price_cents: 1000 + i });
        return { ...p, price: 1000 + i };
      }),
    );
    const answers = await Promise.all(
      providers.flatMap((p) =>
        Array.from({ length: 10 }, () => t.call("POST", LEADS, { auth: p.key, body: freshLead() })),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(100).fill(201));
    const db = t.app.database.db;
    for (const p of providers) {
      expect(await countTransactions(db, p.id, "lead_purchase")).toBe(10);
      const balance = await j(t.call("GET", "/api/v1/public/balance/", { auth: p.key }));
      expect(balance.pending_cents).toBe(10 * p.price);
      // The provider's lines, oldest first: balance_after goes up by each line, with no gap.
      const lines = (await j(t.call("GET", "/api/v1/public/balance_transactions/?page_size=100", { auth: p.key })))
        .results as Json[];
      expect(lines).toHaveLength(10);
      let running = 0;
      for (const line of [...lines].reverse()) {
        running += line.amount_cents;
        expect(line.balance_after_cents).toBe(running);
      }
      expect(running).toBe(balance.pending_cents);
    }
    const versions = await sql<{ account_id: number; versions: number[] }>`
      select account_id, array_agg(account_version order by account_version) as versions
      from ledger_entries where provider_id in (${sql.join(providers.map((p) => p.id))}) group by account_id`.execute(
      db,
    );
    expect(versions.rows).toHaveLength(20); // pending and lead_expense of each
    for (const r of versions.rows) expect(r.versions.map(Number)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    await expectLedgerWhole(db);
  });

  it("refuses UPDATE, DELETE and TRUNCATE of transactions, entries and terms, and a change of what an account is", async () => {
    const p = await t.provider();
    await setTerms(p.id, ISSUE_TERMS);
    expect((await t.call("POST", LEADS, { auth: p.key, body: freshLead() })).status).toBe(201);
    const db = t.app.database.db;
    const attempts = [
      sql`update ledger_entries set amount_cents = amount_cents + 1 where provider_id = ${p.id}`,
      sql`update ledger_transactions set description = 'edited' where provider_id = ${p.id}`,
      sql`delete from ledger_entries where provider_id = ${p.id}`,
      sql`delete from ledger_transactions where provider_id = ${p.id}`,
      sql`update provider_terms set terms = '{}'::jsonb where provider_id = ${p.id}`,
      sql`delete from provider_terms where provider_id = ${p.id}`,
      sql`truncate ledger_entries cascade`,
      sql`truncate ledger_transactions cascade`,
      sql`delete from ledger_accounts where provider_id = ${p.id}`,
      sql`update ledger_accounts set type = 'available' where provider_id = ${p.id} and type = 'pending'`,
    ];
    for (const q of attempts) {
      const err = await q.execute(db).then(
        () => undefined,
        (e: unknown) => e as { code?: string; message?: string },
      );
      expect(err?.code, q.compile(db).sql).toBe("LPL01");
      expect(err?.message).toMatch(/refused/);
    }
    expect(await countTransactions(db, p.id, "lead_purchase")).toBe(1);
    await expectLedgerWhole(db);
  });
});

// Two instances share one database only on Postgres (PGlite is one process's database).
const POSTGRES = BACKENDS.find((b) => b.name === "postgres");
describe.runIf(POSTGRES)("the ledger across two instances (postgres)", () => {
  const backend = POSTGRES as (typeof BACKENDS)[number];
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp(backend, ENV);
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  const setTerms = (id: number, terms: Json) =>
    t.call("PUT", `/api/v1/lead_providers/${id}/terms/`, { auth: admin, body: terms });

  it("settles each purchase once when two instances sharing Postgres run the job at the same time, twice", async () => {
    const two = await startTestApp(backend, { ...ENV, DATABASE_URL: t.databaseUrl as string });
    try {
      // The test runs the job itself: the apps' own first runs (a few seconds after start) would
      // settle part of the purchases on a slow machine, outside the runs it adds up.
      await Promise.all([t.app.settlement.stop(), two.app.settlement.stop()]);
      const providers = await Promise.all(Array.from({ length: 4 }, () => t.provider()));
      for (const p of providers) await setTerms(p.id, { ...ISSUE_TERMS, settlement_days: 0 });
      await Promise.all(
        providers.flatMap((p) =>
          Array.from({ length: 15 }, (_, i) =>
            (i % 2 === 0 ? t : two).call("POST", LEADS, { auth: p.key, body: freshLead() }),
          ),
        ),
      );
      // Four runs at once, again until a round settles nothing (a run stops at its time budget on
      // a loaded machine): together they settle each purchase exactly once.
      let settled = 0;
      for (let round = 0; round < 20; round += 1) {
        const runs = await Promise.all([
          t.app.settlement.runOnce(),
          two.app.settlement.runOnce(),
          t.app.settlement.runOnce(),
          two.app.settlement.runOnce(),
        ]);
        const done = runs.reduce((n, r) => n + r.done, 0);
        settled += done;
        if (done === 0) break;
      }
      expect(settled).toBe(60);
      const db = t.app.database.db;
      for (const p of providers) {
        expect(await countTransactions(db, p.id, "lead_purchase")).toBe(15);
        expect(await countTransactions(db, p.id, "settlement")).toBe(15);
        expect(await j(t.call("GET", "/api/v1/public/balance/", { auth: p.key }))).toMatchObject({
          pending_cents: 0,
          available_cents: 15 * 1500,
        });
      }
      const queued = await sql<{ n: number }>`
          select count(*)::int as n from ledger_settlement_queue
          where provider_id in (${sql.join(providers.map((p) => p.id))})`.execute(db);
      expect(queued.rows[0]?.n).toBe(0);
      // Run again (a rerun after a crash): nothing is posted twice.
      await Promise.all([t.app.settlement.runOnce(), two.app.settlement.runOnce()]);
      for (const p of providers) expect(await countTransactions(db, p.id, "settlement")).toBe(15);
      await expectLedgerWhole(db);
    } finally {
      await two.stop();
    }
  });

  it("prices a lead by terms another instance saved a moment before, though this one had the old terms in hand", async () => {
    const two = await startTestApp(backend, { ...ENV, DATABASE_URL: t.databaseUrl as string });
    try {
      const p = await t.provider();
      await setTerms(p.id, ISSUE_TERMS);
      // The second instance prices a lead and keeps version 1.
      expect((await j(two.call("POST", LEADS, { auth: p.key, body: freshLead() }))).price.terms_version).toBe(1);
      await setTerms(p.id, { ...ISSUE_TERMS, default_price_cents: 4200 });
      const lead = await j(two.call("POST", LEADS, { auth: p.key, body: freshLead() }));
      expect(lead.price).toMatchObject({ amount_cents: 4200, terms_version: 2 });
      expect(await countTransactions(t.app.database.db, p.id, "lead_purchase")).toBe(2);
      await expectLedgerWhole(t.app.database.db);
    } finally {
      await two.stop();
    }
  });
});
