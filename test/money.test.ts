/**
 * Money against a real server, over REST and gRPC, on PGlite and (with TEST_DATABASE_URL)
 * Postgres: terms and the price of every lead (the quote agreeing with the price the lead gets),
 * a flagged duplicate posting nothing, test money apart, settlement on a moved clock, payouts
 * (over the available balance refused, a retry posted once), corrections landing in the next
 * month while a closed statement stays as it was, the statement's CSV and PDF, and one provider
 * never seeing another's money. After every test the ledger is whole and its trial balance 0.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { DateTime } from "luxon";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ErrorDetailSchema } from "../generated/proto/leadprovider/v1/errors_pb.ts";
import { OverseasType, ShipVia, VehicleType } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import {
  car,
  countTransactions,
  expectLedgerWhole,
  freshLead,
  ISSUE_TERMS,
  movableClock,
  parseCsv,
} from "./helpers/money.ts";
import { startReceiver } from "./helpers/receiver.ts";

const LEADS = "/api/v1/public/leads/";
const ZONE = "America/New_York";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;
const termsPath = (id: number) => `/api/v1/lead_providers/${id}/terms/`;
const money = (cents: number) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(cents / 100);

describe.each(BACKENDS)("money ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const clock = movableClock();
  const publicRpc = () => connectClient(PublicLeadService, t.port, "grpc");
  const providerRpc = () => connectClient(ProviderService, t.port, "grpc");

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000", SETTLEMENT_INTERVAL_SECONDS: "86400" },
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
    for (const book of trial.books) expect(book.total_cents).toBe(0);
  });

  /** A provider with live and test keys, and `terms` when given. */
  async function payee(terms?: Json, fields: Json = {}) {
    const p = await t.provider(undefined, fields);
    const issued = await j(
      t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } }),
    );
    if (terms) {
      const res = await t.call("PUT", termsPath(p.id), { auth: admin, body: terms });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    return { ...p, testKey: issued.api_key as string };
  }
  const create = async (key: string, body: Json) => {
    const res = await t.call("POST", LEADS, { auth: key, body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Json;
  };
  const quote = (key: string, body: Json) => j(t.call("POST", "/api/v1/public/terms/quote/", { auth: key, body }));
  const balance = (key: string) => j(t.call("GET", "/api/v1/public/balance/", { auth: key }));
  const lines = (key: string, query = "") =>
    j(t.call("GET", `/api/v1/public/balance_transactions/${query}`, { auth: key }));

  describe("terms and prices", () => {
    it("prices each rule example as specified, and the quote agrees with the price the lead then gets (REST and gRPC)", async () => {
      const p = await payee(ISSUE_TERMS);
      const foreign = { overseas_type: "FOREIGN", ship_via: "CONTAINER_20FT" };
      const cases: Array<[string, Json, number, string]> = [
        ["sub_id prefix fb- and FOREIGN", { sub_id: "fb-spring", ...foreign }, 2500, "price_rules[0]"],
        ["sub_id fb- itself and FOREIGN", { sub_id: "fb-", ...foreign }, 2500, "price_rules[0]"],
        ["fb- but DOMESTIC", { sub_id: "fb-spring" }, 1500, "default_price_cents"],
        ["a sub_id that only starts like the prefix", { sub_id: "fbx", ...foreign }, 1500, "default_price_cents"],
        ["CA with 2 vehicles (one extra)", { origin_zip: "90210", vehicles: [car(), car()] }, 2500, "price_rules[1]"],
        [
          "NY with 3 vehicles (two extra)",
          { origin_zip: "10001", vehicles: [car(), car(), car()] },
          3000,
          "price_rules[1]",
        ],
        ["CA with 1 vehicle: no rule", { origin_zip: "90210" }, 1500, "default_price_cents"],
        [
          "TX with 2 vehicles: default plus an extra",
          { origin_zip: "75201", vehicles: [car(), car()] },
          2000,
          "default_price_cents",
        ],
        [
          "both rules match: the first wins",
          { sub_id: "fb-x", ...foreign, origin_zip: "90210", vehicles: [car(), car()] },
          3000,
          "price_rules[0]",
        ],
      ];
      for (const [what, fields, cents, rule] of cases) {
        const body = freshLead(fields);
        const q = await quote(p.key, body);
        expect(q, what).toMatchObject({ amount_cents: cents, currency: "USD", rule, terms_version: 1, livemode: true });
        expect(q.base_cents + q.extra_vehicles_cents, what).toBe(cents);
        const lead = await create(p.key, body);
        expect(lead.price, what).toEqual({ amount_cents: cents, currency: "USD", rule, terms_version: 1 });
        expect(lead.billable).toBe(true);
        const got = await j(t.call("GET", `${LEADS}${body.external_id}/`, { auth: p.key }));
        expect(got.price, what).toEqual(lead.price);
      }
      // Over gRPC: the quote and the create of the same lead, and the lead read back.
      const rpc = publicRpc();
      const grpcLead = {
        externalId: `g-${Date.now()}`,
        firstName: "Ana",
        lastName: "Lima",
        email: `ana.${Date.now()}@example.com`,
        phoneNumber: freshLead().phone_number as string,
        originZip: "10001",
        estimatedShipDate: freshLead().estimated_ship_date as string,
        overseasType: OverseasType.DOMESTIC,
        shipVia: ShipVia.OPEN,
        vehicles: [1, 2].map(() => ({
          year: 2020,
          make: "Ford",
          model: "Focus",
          type: VehicleType.CAR,
          tariff: 100n,
          deposit: 10n,
        })),
      };
      const { quote: rq } = await rpc.quoteLead({ lead: grpcLead }, bearer(p.key));
      expect(rq?.price).toMatchObject({ amountCents: 2500n, rule: "price_rules[1]", termsVersion: 1 });
      const created = await rpc.createLead(grpcLead, bearer(p.key));
      expect(created.lead?.price).toMatchObject({ amountCents: 2500n, currency: "USD", rule: "price_rules[1]" });
      const read = await rpc.getLead({ externalId: grpcLead.externalId }, bearer(p.key));
      expect(read.lead?.price?.amountCents).toBe(2500n);
      // Every billable lead is one purchase, pending.
      expect(await countTransactions(t.app.database.db, p.id, "lead_purchase")).toBe(cases.length + 1);
      const b = await balance(p.key);
      expect(b).toMatchObject({ pending_cents: cases.reduce((s, c) => s + c[2], 0) + 2500, available_cents: 0 });
    });

    it("previews a lead's price under the current or draft terms for an administrator, storing nothing (REST and gRPC)", async () => {
      const p = await payee(ISSUE_TERMS);
      const path = `/api/v1/lead_providers/${p.id}/terms/quote/`;
      const lead = freshLead({ origin_zip: "10001", vehicles: [car(), car()] });
      const current = await j(t.call("POST", path, { auth: admin, body: { lead } }));
      expect(current).toEqual({
        amount_cents: 2500,
        currency: "USD",
        rule: "price_rules[1]",
        terms_version: 1,
        base_cents: 2000,
        extra_vehicles_cents: 500,
        draft: false,
      });
      expect(current.amount_cents).toBe((await quote(p.key, lead)).amount_cents);
      const draftTerms = { default_price_cents: 1000, extra_vehicle_cents: 0, price_rules: [] };
      const draft = await j(t.call("POST", path, { auth: admin, body: { lead, terms: draftTerms } }));
      expect(draft).toMatchObject({
        amount_cents: 1000,
        rule: "default_price_cents",
        terms_version: null,
        draft: true,
      });
      // Nothing saved: the terms are still version 1, no change audited or announced.
      expect((await j(t.call("GET", termsPath(p.id), { auth: admin }))).version).toBe(1);
      expect(await countTransactions(t.app.database.db, p.id, "lead_purchase")).toBe(0);

      const bad = await t.call("POST", path, {
        auth: admin,
        body: {
          lead: { ...lead, origin_zip: "00000" },
          terms: { price_rules: [{ when: { origin_states: ["ZZ"] }, price_cents: 19.99 }] },
        },
      });
      expect(bad.status).toBe(400);
      const fields = ((await j(bad)).errors as Json[]).map((e) => e.field).sort();
      expect(fields).toEqual([
        "lead.origin_zip",
        "terms.price_rules[0].price_cents",
        "terms.price_rules[0].when.origin_states[0]",
      ]);
      const noLead = await t.call("POST", path, { auth: admin, body: { terms: draftTerms } });
      expect(((await j(noLead)).errors as Json[]).map((e) => e.field)).toEqual(["lead"]);
      const missing = await t.call("POST", "/api/v1/lead_providers/999999/terms/quote/", {
        auth: admin,
        body: { lead },
      });
      expect((await j(missing)).code).toBe("provider_not_found");

      const rpc = providerRpc();
      const rpcLead = {
        externalId: String(freshLead().external_id),
        firstName: "Maria",
        lastName: "Gonzalez",
        email: "maria.rpc@example.com",
        phoneNumber: "+1 (310) 555-0142",
        originZip: "10001",
        estimatedShipDate: String(lead.estimated_ship_date),
        overseasType: OverseasType.DOMESTIC,
        shipVia: ShipVia.OPEN,
        vehicles: [
          { year: 2021, make: "Toyota", model: "Camry", type: VehicleType.CAR, tariff: 950n, deposit: 150n },
          { year: 2021, make: "Toyota", model: "Camry", type: VehicleType.CAR, tariff: 950n, deposit: 150n },
        ],
      };
      const viaRpc = await rpc.quoteProviderLead({ id: BigInt(p.id), lead: rpcLead }, bearer(admin));
      expect(viaRpc.draft).toBe(false);
      expect(viaRpc.quote?.price).toMatchObject({ amountCents: 2500n, rule: "price_rules[1]", termsVersion: 1 });
      const rpcDraft = await rpc.quoteProviderLead(
        { id: BigInt(p.id), lead: rpcLead, terms: { defaultPriceCents: 700n, settlementDays: 7 } },
        bearer(admin),
      );
      expect(rpcDraft.draft).toBe(true);
      expect(rpcDraft.quote?.price?.amountCents).toBe(700n);
      const err = await rpc
        .quoteProviderLead(
          {
            id: BigInt(p.id),
            lead: rpcLead,
            terms: { priceRules: [{ when: { originStates: { values: ["ZZ"] } }, priceCents: 5n }], settlementDays: 7 },
          },
          bearer(admin),
        )
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(err?.code).toBe(Code.InvalidArgument);
      expect(err?.findDetails(ErrorDetailSchema)[0]?.violations.map((v) => v.field)).toEqual([
        "terms.price_rules[0].when.origin_states[0]",
      ]);
    });

    it("names every bad member of a terms document, over REST and gRPC, and stores nothing", async () => {
      const p = await payee(ISSUE_TERMS);
      const bad = {
        ...ISSUE_TERMS,
        currency: "EUR",
        extra_vehicle_cents: 12.5,
        settlement_days: -1,
        colour: "blue",
        price_rules: [
          { when: { sub_id: "fb-", size: "L" }, price_cents: 100 },
          { when: { origin_states: ["XX", "CA", "CA"] }, price_cents: 19.99 },
          { when: {}, price_cents: -5 },
        ],
        returns: { max_rate: 2, reasons: ["bogus"] },
      };
      const res = await t.call("PUT", termsPath(p.id), { auth: admin, body: bad });
      expect(res.status).toBe(400);
      const body = await j(res);
      expect(body.errors.map((e: Json) => e.field).sort()).toEqual(
        [
          "colour",
          "currency",
          "extra_vehicle_cents",
          "price_rules[0].when.size",
          "price_rules[1].when.origin_states[0]",
          "price_rules[1].when.origin_states[2]",
          "price_rules[1].price_cents",
          "price_rules[2].when",
          "price_rules[2].price_cents",
          "returns.max_rate",
          "returns.reasons[0]",
          "settlement_days",
        ].sort(),
      );
      expect(body.errors.find((e: Json) => e.field === "price_rules[1].when.origin_states[0]").message).toMatch(
        /^price_rules\[1\]\.when\.origin_states\[0\] must be a state code/,
      );
      expect(body.errors.find((e: Json) => e.field === "extra_vehicle_cents").message).toMatch(/whole number of cents/);
      const after = await j(t.call("GET", termsPath(p.id), { auth: admin }));
      expect(after.version).toBe(1);
      // gRPC names the member the same way.
      const err = await providerRpc()
        .setTerms(
          {
            id: BigInt(p.id),
            terms: { currency: "USD", priceRules: [{ when: { originStates: { values: ["ZZ"] } }, priceCents: 10n }] },
          },
          bearer(admin),
        )
        .then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
      expect(err?.code).toBe(Code.InvalidArgument);
      const detail = err?.findDetails(ErrorDetailSchema)[0];
      expect(detail?.violations.map((v) => v.field)).toEqual(["price_rules[0].when.origin_states[0]"]);
    });

    it("versions a change from the moment it is saved, never retroactively; audits it; publishes it with an ETag; announces it signed", async () => {
      const receiver = await startReceiver();
      try {
        const p = await payee(undefined, { webhook_url: receiver.url });
        const defaults = await j(t.call("GET", "/api/v1/public/terms/", { auth: p.key }));
        expect(defaults).toMatchObject({ version: 0, effective_at: null, default_price_cents: 0, settlement_days: 7 });
        const before = await create(p.key, freshLead());
        expect(before.price).toEqual({
          amount_cents: 0,
          currency: "USD",
          rule: "default_price_cents",
          terms_version: 0,
        });

        const set = await j(t.call("PUT", termsPath(p.id), { auth: admin, body: ISSUE_TERMS }));
        expect(set).toMatchObject({ version: 1, default_price_cents: 1500 });
        // The same terms again: no new version.
        expect((await j(t.call("PUT", termsPath(p.id), { auth: admin, body: set }))).version).toBe(1);
        const after = await create(p.key, freshLead());
        expect(after.price.amount_cents).toBe(1500);
        // The earlier lead keeps its price.
        expect((await j(t.call("GET", `${LEADS}${before.external_id}/`, { auth: p.key }))).price.amount_cents).toBe(0);

        const published = await t.call("GET", "/api/v1/public/terms/", { auth: p.key });
        const tag = published.headers.get("etag") as string;
        const pub = await j(published);
        expect(pub).toMatchObject({ version: 1, livemode: true });
        expect(pub.price_rules[0].description).toBe("sub_id starts with fb- and overseas_type is FOREIGN");
        expect(pub.conditions.map((c: Json) => c.member)).toContain("vehicle_run");
        const again = await t.call("GET", "/api/v1/public/terms/", { auth: p.key, headers: { "if-none-match": tag } });
        expect(again.status).toBe(304);
        const grpcTerms = await publicRpc().getTerms({}, bearer(p.key));
        expect(grpcTerms.terms?.terms?.version).toBe(1);
        expect(grpcTerms.terms?.terms?.priceRules[1]?.description).toBe(
          "the origin is in one of CA, NY and at least 2 vehicles",
        );

        await t.call("PUT", termsPath(p.id), { auth: admin, body: { ...ISSUE_TERMS, default_price_cents: 1800 } });
        const changed = await t.call("GET", "/api/v1/public/terms/", {
          auth: p.key,
          headers: { "if-none-match": tag },
        });
        expect(changed.status).toBe(200);
        expect((await create(p.key, freshLead())).price).toMatchObject({ amount_cents: 1800, terms_version: 2 });

        const audit = await j(t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: admin }));
        const entries = audit.results.filter((e: Json) => e.action === "terms.updated");
        expect(entries).toHaveLength(2);
        expect(entries[0].details).toMatchObject({
          version: 2,
          before: { default_price_cents: 1500 },
          after: { default_price_cents: 1800 },
        });
        const feed = await j(t.call("GET", "/api/v1/public/events/?type=terms.changed", { auth: p.key }));
        expect(feed.results.map((e: Json) => e.data.terms.version)).toEqual([2, 1]);
        const events = await publicRpc().listEvents({ type: "terms.changed" }, bearer(p.key));
        expect(events.events[0]?.data).toMatchObject({ terms: { version: 2, default_price_cents: 1800 } });

        const hook = await j(t.call("GET", `/api/v1/lead_providers/${p.id}/webhook/`, { auth: admin }));
        await receiver.waitFor((all) => all.filter((r) => r.body.includes('"terms.changed"')).length === 2, 10_000);
        for (const r of receiver.received.filter((x) => x.body.includes('"terms.changed"'))) {
          const event = new Webhook(hook.secret).verify(r.body, r.headers) as Json;
          expect(event.type).toBe("terms.changed");
          expect([1, 2]).toContain(event.data.terms.version);
        }
      } finally {
        await receiver.close();
      }
    });

    it("posts nothing for a flagged duplicate", async () => {
      const p = await payee(ISSUE_TERMS);
      const first = freshLead();
      await create(p.key, first);
      const dup = await create(p.key, freshLead({ phone_number: first.phone_number }));
      expect(dup).toMatchObject({ billable: false, price: null });
      expect(dup.duplicate).not.toBeNull();
      expect(await countTransactions(t.app.database.db, p.id, "lead_purchase")).toBe(1);
      expect((await balance(p.key)).pending_cents).toBe(1500);
    });

    it("keeps test money apart: a test lead that is not a duplicate is billable, priced and posted to the test book", async () => {
      const p = await payee(ISSUE_TERMS);
      const testLead = await create(p.testKey, freshLead());
      expect(testLead).toMatchObject({ livemode: false, billable: true });
      expect(testLead.price).toMatchObject({ amount_cents: 1500, terms_version: 1 });
      await create(p.key, freshLead({ origin_zip: "90210", vehicles: [car(), car()] }));
      expect(await balance(p.testKey)).toMatchObject({ livemode: false, pending_cents: 1500 });
      expect(await balance(p.key)).toMatchObject({ livemode: true, pending_cents: 2500 });
      const testLines = await lines(p.testKey);
      expect(testLines.results.map((l: Json) => l.lead.external_id)).toEqual([testLead.external_id]);
      expect((await lines(p.key)).results.map((l: Json) => l.lead.external_id)).not.toContain(testLead.external_id);
      const adminTest = await j(t.call("GET", `/api/v1/lead_providers/${p.id}/balance/?mode=test`, { auth: admin }));
      expect(adminTest.pending_cents).toBe(1500);
      const grpc = await providerRpc().getProviderBalance({ id: BigInt(p.id), mode: "test" }, bearer(admin));
      expect(grpc.balance?.pendingCents).toBe(1500n);
      expect(await countTransactions(t.app.database.db, p.id, "lead_purchase", false)).toBe(1);
    });
  });

  describe("settlement, payouts and statements", () => {
    it("settles exactly the purchases past their settlement_days, under the terms each was priced with (moved clock)", async () => {
      const p = await payee({ ...ISSUE_TERMS, settlement_days: 1 });
      const a = await create(p.key, freshLead());
      const b = await create(p.key, freshLead());
      await t.call("PUT", termsPath(p.id), { auth: admin, body: { ...ISSUE_TERMS, settlement_days: 3 } });
      const c = await create(p.key, freshLead());
      const settled = async () =>
        (await lines(p.key, "?type=settlement&page_size=100")).results
          .filter((l: Json) => l.account === "available")
          .map((l: Json) => l.lead.external_id)
          .sort();

      await t.app.settlement.runOnce();
      expect(await settled()).toEqual([]);
      clock.advance(23 * 3600_000);
      await t.app.settlement.runOnce();
      expect(await settled()).toEqual([]);
      clock.advance(3600_000 + 60_000);
      await t.app.settlement.runOnce();
      expect(await settled()).toEqual([a.external_id, b.external_id].sort());
      expect(await balance(p.key)).toMatchObject({ pending_cents: 1500, available_cents: 3000 });
      clock.advance(2 * 86_400_000);
      await t.app.settlement.runOnce();
      await t.app.settlement.runOnce(); // again: nothing twice
      expect(await settled()).toEqual([a.external_id, b.external_id, c.external_id].sort());
      expect(await countTransactions(t.app.database.db, p.id, "settlement")).toBe(3);
      expect(await balance(p.key)).toMatchObject({ pending_cents: 0, available_cents: 4500 });
      // A settlement is two lines: off pending, onto available.
      const aLines = await lines(p.key, `?external_id=${a.external_id}`);
      expect(aLines.results.map((l: Json) => [l.type, l.account, l.amount_cents])).toEqual([
        ["settlement", "available", 1500],
        ["settlement", "pending", -1500],
        ["lead_purchase", "pending", 1500],
      ]);
    });

    it("refuses a payout over the available balance (409 insufficient_balance) and posts one within it once despite retries", async () => {
      const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
      for (let i = 0; i < 3; i++) await create(p.key, freshLead());
      await t.app.settlement.runOnce();
      expect((await balance(p.key)).available_cents).toBe(4500);
      const payouts = `/api/v1/lead_providers/${p.id}/payouts/`;
      const over = await t.call("POST", payouts, {
        auth: admin,
        body: { amount_cents: 4501, reference: "WIRE-1", paid_at: new Date().toISOString() },
      });
      expect(over.status).toBe(409);
      expect(await j(over)).toMatchObject({
        code: "insufficient_balance",
        errors: [{ field: "amount_cents", code: "insufficient_balance" }],
      });
      expect(await countTransactions(t.app.database.db, p.id, "payout")).toBe(0);

      const paidAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
      const body = { amount_cents: 4000, reference: "WIRE-2", paid_at: paidAt };
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => t.call("POST", payouts, { auth: admin, body })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      const bodies = await Promise.all(answers.map((r) => r.json() as Promise<Json>));
      expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
      expect(bodies[0]).toMatchObject({ amount_cents: 4000, reference: "WIRE-2", livemode: true, provider_id: p.id });
      // The same reference over gRPC: replayed, nothing new.
      const grpc = await providerRpc().createPayout(
        {
          id: BigInt(p.id),
          amountCents: 4000n,
          reference: "WIRE-2",
          paidAt: { seconds: BigInt(Date.parse(paidAt) / 1000), nanos: 0 },
        },
        bearer(admin),
      );
      expect(grpc.replayed).toBe(true);
      expect(grpc.payout?.id).toBe(bodies[0]?.id);
      const reused = await t.call("POST", payouts, { auth: admin, body: { ...body, amount_cents: 10 } });
      expect(reused.status).toBe(409);
      expect((await j(reused)).code).toBe("reference_reused");

      expect(await countTransactions(t.app.database.db, p.id, "payout")).toBe(1);
      expect(await balance(p.key)).toMatchObject({ available_cents: 500, paid_out_cents: 4000 });
      const line = (await lines(p.key, "?type=payout")).results;
      expect(line).toEqual([
        expect.objectContaining({
          amount_cents: -4000,
          balance_after_cents: 500,
          account: "available",
          reference: "WIRE-2",
        }),
      ]);
      const feed = await j(t.call("GET", "/api/v1/public/events/?type=payout.created", { auth: p.key }));
      expect(feed.results).toHaveLength(1);
      expect(feed.results[0].data.payout).toMatchObject({ amount_cents: 4000, reference: "WIRE-2" });
      const audit = await j(t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}`, { auth: admin }));
      expect(audit.results.find((e: Json) => e.action === "payout.created").details).toMatchObject({
        before: { available_cents: 4500, paid_out_cents: 0 },
        after: { available_cents: 500, paid_out_cents: 4000 },
      });
    });

    it("keeps a closed statement as it was after a later adjustment, which lands in the next month", async () => {
      const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
      const lead = await create(p.key, freshLead({ origin_zip: "90210", vehicles: [car(), car()] }));
      await create(p.key, freshLead());
      await t.app.settlement.runOnce();
      const month = DateTime.now().setZone(ZONE).toFormat("yyyy-MM");
      const next = DateTime.now().setZone(ZONE).startOf("month").plus({ months: 1 });
      const statement = (m: string, format = "") =>
        t.call("GET", `/api/v1/public/statements/${m}/${format}`, { auth: p.key });
      expect((await j(statement(month))).status).toBe("open");

      // Ten minutes into next month: this month is closed.
      clock.set(next.plus({ minutes: 10 }).toJSDate());
      const closed = await j(statement(month));
      expect(closed).toMatchObject({ status: "closed", month, opening_balance_cents: 0, closing_balance_cents: 4000 });
      expect(closed.totals).toEqual({ lead_purchase: 4000, settlement: 0, return: 0, adjustment: 0, payout: 0 });
      const closedCsv = await (await statement(month, "?format=csv")).text();

      const adj = await t.call("POST", `/api/v1/lead_providers/${p.id}/adjustments/`, {
        auth: admin,
        body: { amount_cents: -300, reason: "Lead called twice", lead_id: lead.id, reference: "ADJ-1" },
      });
      expect(adj.status).toBe(201);
      expect(await j(adj)).toMatchObject({ amount_cents: -300, lead: { external_id: lead.external_id } });

      expect(await j(statement(month))).toEqual(closed);
      expect(await (await statement(month, "?format=csv")).text()).toBe(closedCsv);
      const nextMonth = await j(statement(next.toFormat("yyyy-MM")));
      expect(nextMonth).toMatchObject({
        status: "open",
        opening_balance_cents: 4000,
        closing_balance_cents: 3700,
        line_count: 1,
      });
      expect(nextMonth.totals.adjustment).toBe(-300);
      expect(nextMonth.accounts.available.totals.adjustment).toBe(-300);
      const list = await j(t.call("GET", "/api/v1/public/statements/", { auth: p.key }));
      expect(list.results.slice(0, 2).map((s: Json) => [s.month, s.status])).toEqual([
        [next.toFormat("yyyy-MM"), "open"],
        [month, "closed"],
      ]);
      // A month not begun is refused, naming it.
      const future = await statement(next.plus({ months: 1 }).toFormat("yyyy-MM"));
      expect(future.status).toBe(400);
      expect((await j(future)).errors[0]).toMatchObject({ field: "month", code: "out_of_range" });
      const grpc = await publicRpc().getStatement({ month }, bearer(p.key));
      expect(grpc.statement).toMatchObject({ status: "closed", closingBalanceCents: 4000n, lineCount: 6n });
    });

    it("answers a statement whose CSV lines add up to its totals, and whose PDF shows them", async () => {
      const name = `Statement Co ${process.pid}-${Date.now()}`;
      const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 }, { name });
      for (const v of [1, 2, 3]) {
        await create(p.key, freshLead({ origin_zip: "10001", vehicles: Array.from({ length: v }, () => car()) }));
      }
      await t.app.settlement.runOnce();
      await t.call("POST", `/api/v1/lead_providers/${p.id}/payouts/`, {
        auth: admin,
        body: { amount_cents: 2000, reference: "W-9", paid_at: new Date().toISOString() },
      });
      await t.call("POST", `/api/v1/lead_providers/${p.id}/adjustments/`, {
        auth: admin,
        body: { amount_cents: 125, reason: 'Goodwill, "as agreed"' },
      });
      const month = DateTime.now().setZone(ZONE).toFormat("yyyy-MM");
      const s = await j(t.call("GET", `/api/v1/public/statements/${month}/`, { auth: p.key }));
      const csv = await t.call("GET", `/api/v1/public/statements/${month}/?format=csv`, { auth: p.key });
      expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
      const rows = parseCsv(await csv.text());
      expect(rows).toHaveLength(s.line_count);
      for (const account of ["pending", "available"]) {
        for (const type of ["lead_purchase", "settlement", "return", "adjustment", "payout"]) {
          const sum = rows
            .filter((r) => r.account === account && r.type === type)
            .reduce((n, r) => n + Number(r.amount_cents), 0);
          expect(sum, `${account} ${type}`).toBe(s.accounts[account].totals[type]);
        }
        const own = rows.filter((r) => r.account === account);
        expect(Number(own.at(-1)?.balance_after_cents ?? 0)).toBe(s.accounts[account].closing_balance_cents);
      }
      const total = rows.reduce((n, r) => n + Number(r.amount_cents), 0);
      expect(s.opening_balance_cents + total).toBe(s.closing_balance_cents);
      expect(rows.find((r) => r.type === "adjustment")?.description).toBe('Goodwill, "as agreed"');

      const pdf = await t.call("GET", `/api/v1/public/statements/${month}/?format=pdf`, { auth: p.key });
      expect(pdf.headers.get("content-type")).toBe("application/pdf");
      const dir = mkdtempSync(join(tmpdir(), "statement-"));
      try {
        writeFileSync(join(dir, "s.pdf"), Buffer.from(await pdf.arrayBuffer()));
        const text = execFileSync("pdftotext", ["-layout", join(dir, "s.pdf"), "-"], { encoding: "utf8" });
        expect(text).toContain(`Statement ${month}`);
        expect(text).toContain(name);
        expect(text).toContain(`Closing balance`);
        expect(text).toContain(money(s.closing_balance_cents));
        expect(text).toContain(money(s.totals.lead_purchase));
        expect(text).toContain(money(s.totals.payout));
        expect(text).toContain(`Lines: ${s.line_count}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe("who sees what", () => {
    it("never shows provider A anything of B's money, in any route", async () => {
      const a = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
      const b = await payee({ ...ISSUE_TERMS, default_price_cents: 9900, settlement_days: 0 });
      const bLead = await create(b.key, freshLead());
      await create(a.key, freshLead());
      await t.app.settlement.runOnce();
      await t.call("POST", `/api/v1/lead_providers/${b.id}/payouts/`, {
        auth: admin,
        body: { amount_cents: 100, reference: "B-ONLY", paid_at: new Date().toISOString() },
      });
      const aLines = await lines(a.key, "?page_size=100");
      const bLines = await lines(b.key, "?page_size=100");
      expect(aLines.results).toHaveLength(3);
      expect(aLines.results.every((l: Json) => l.lead?.external_id !== bLead.external_id)).toBe(true);
      expect(JSON.stringify(aLines)).not.toContain("B-ONLY");
      // B's line id as A's page token, and B's lead as A's filter: nothing of B's.
      const token = Buffer.from(bLines.results[0].id).toString("base64url");
      expect(
        (await t.call("GET", `/api/v1/public/balance_transactions/?page_token=${token}`, { auth: a.key })).status,
      ).toBe(400);
      expect((await lines(a.key, `?external_id=${bLead.external_id}`)).results).toEqual([]);
      expect(await balance(a.key)).toMatchObject({ available_cents: 1500, paid_out_cents: 0 });
      const month = DateTime.now().setZone(ZONE).toFormat("yyyy-MM");
      const aStatement = await j(t.call("GET", `/api/v1/public/statements/${month}/`, { auth: a.key }));
      expect(aStatement.closing_balance_cents).toBe(1500);
      const aCsv = await (
        await t.call("GET", `/api/v1/public/statements/${month}/?format=csv`, { auth: a.key })
      ).text();
      expect(aCsv).not.toContain(bLead.external_id);
      expect((await j(t.call("GET", "/api/v1/public/terms/", { auth: a.key }))).default_price_cents).toBe(1500);
      expect((await quote(a.key, freshLead())).amount_cents).toBe(1500);
      const feed = await j(t.call("GET", "/api/v1/public/events/?type=payout.created", { auth: a.key }));
      expect(feed.results).toEqual([]);
      const rpc = publicRpc();
      expect((await rpc.getBalance({}, bearer(a.key))).balance?.paidOutCents).toBe(0n);
      const rpcLines = await rpc.listBalanceTransactions({ pageSize: 100 }, bearer(a.key));
      expect(rpcLines.balanceTransactions.map((l) => l.lead?.externalId)).not.toContain(bLead.external_id);
      // The administrators' view of each is its own.
      const adminA = await j(t.call("GET", `/api/v1/lead_providers/${a.id}/balance_transactions/`, { auth: admin }));
      expect(adminA.results.map((l: Json) => l.id).sort()).toEqual(aLines.results.map((l: Json) => l.id).sort());
      const payables = await j(t.call("GET", "/api/v1/admin/payables/?page_size=500", { auth: admin }));
      const row = (id: number) => payables.results.find((r: Json) => r.provider_id === id);
      expect(row(a.id)).toMatchObject({ available_cents: 1500, paid_out_cents: 0 });
      expect(row(b.id)).toMatchObject({ available_cents: 9800, paid_out_cents: 100 });
      const csv = parseCsv(await (await t.call("GET", "/api/v1/admin/payables/?format=csv", { auth: admin })).text());
      expect(csv.find((r) => Number(r.provider_id) === b.id)).toMatchObject({ paid_out_cents: "100" });
    });

    it("answers bad input with 400 naming the field, over REST and gRPC, and posts nothing", async () => {
      const p = await payee({ ...ISSUE_TERMS, settlement_days: 0 });
      await create(p.key, freshLead());
      await t.app.settlement.runOnce();
      const payouts = `/api/v1/lead_providers/${p.id}/payouts/`;
      const adjustments = `/api/v1/lead_providers/${p.id}/adjustments/`;
      const cases: Array<[string, string, Json, string[]]> = [
        ["POST", payouts, { amount_cents: 100.5, reference: "X", paid_at: new Date().toISOString() }, ["amount_cents"]],
        ["POST", payouts, { amount_cents: "100", reference: "X", paid_at: new Date().toISOString() }, ["amount_cents"]],
        [
          "POST",
          payouts,
          { amount_cents: 0, reference: "", paid_at: "yesterday" },
          ["amount_cents", "paid_at", "reference"],
        ],
        ["POST", payouts, { amount_cents: 10, reference: "X", paid_at: new Date().toISOString(), tip: 1 }, ["tip"]],
        ["POST", adjustments, { amount_cents: 0 }, ["amount_cents", "reason"]],
        ["POST", adjustments, { amount_cents: 10, reason: "x", lead_id: 1 }, ["lead_id"]],
        ["POST", adjustments, { amount_cents: 1.25, reason: "x", mode: "sandbox" }, ["amount_cents", "mode"]],
      ];
      for (const [method, path, body, fields] of cases) {
        const res = await t.call(method, path, { auth: admin, body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(((await j(res)).errors as Json[]).map((e) => e.field).sort(), JSON.stringify(body)).toEqual(fields);
      }
      for (const [path, field] of [
        ["/api/v1/public/statements/2026-13/", "month"],
        ["/api/v1/public/statements/26-01/", "month"],
        ["/api/v1/public/balance_transactions/?type=refund", "type"],
        ["/api/v1/public/balance_transactions/?page_token=bm9wZQ", "page_token"],
        ["/api/v1/public/balance_transactions/?created_after=soon", "created_after"],
        ["/api/v1/public/statements/?page_token=MjA5OS0wMQ", "page_token"],
      ] as const) {
        const res = await t.call("GET", path, { auth: p.key });
        expect(res.status, path).toBe(400);
        expect(
          ((await j(res)).errors as Json[]).map((e) => e.field),
          path,
        ).toEqual([field]);
      }
      const bad = await t.call("GET", `/api/v1/lead_providers/${p.id}/balance/?mode=sandbox`, { auth: admin });
      expect(bad.status).toBe(400);
      const missing = await t.call("GET", "/api/v1/lead_providers/999999/balance/", { auth: admin });
      expect((await j(missing)).code).toBe("provider_not_found");
      const invalidQuote = await t.call("POST", "/api/v1/public/terms/quote/", {
        auth: p.key,
        body: freshLead({ origin_zip: "00000" }),
      });
      expect(invalidQuote.status).toBe(400);
      expect((await j(invalidQuote)).errors[0].field).toBe("origin_zip");
      for (const call of [
        () => publicRpc().getStatement({ month: "2026-1" }, bearer(p.key)),
        () => providerRpc().createAdjustment({ id: BigInt(p.id), amountCents: 5n, reason: "" }, bearer(admin)),
        () => providerRpc().createPayout({ id: BigInt(p.id), amountCents: 0n, reference: "R" }, bearer(admin)),
      ]) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(err?.code).toBe(Code.InvalidArgument);
        expect(err?.findDetails(ErrorDetailSchema)[0]?.violations.length).toBeGreaterThan(0);
      }
      expect(await countTransactions(t.app.database.db, p.id, "payout")).toBe(0);
      expect(await countTransactions(t.app.database.db, p.id, "adjustment")).toBe(0);
    });
  });
});
