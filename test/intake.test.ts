/**
 * The intake pipeline (docs/intake.md), against a real server over REST and gRPC, on PGlite and (with
 * TEST_DATABASE_URL) Postgres: contact checks, duplicates across providers, per-provider rules,
 * caps and hours, the published rules, the rules-changed event and the sandbox's answers.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { DateTime } from "luxon";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema, RetryInfoSchema } from "../generated/proto/google/rpc/error_details_pb.ts";
import { ErrorDetailSchema } from "../generated/proto/leadprovider/v1/errors_pb.ts";
import { OverseasType, ShipVia, VehicleType } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { checkPhone } from "../src/intake/contact.ts";
import { type Json, leadBody, shipDate, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { startReceiver } from "./helpers/receiver.ts";

const LEADS = "/api/v1/public/leads/";
const j = async (r: Response | Promise<Response>): Promise<Json> => (await (await r).json()) as Json;
const RULES = "/api/v1/public/intake_rules/";
const rulesPath = (id: number) => `/api/v1/lead_providers/${id}/intake_rules/`;

/** A valid US phone number no other test uses (checked with the service's own parser). */
const usedPhones = new Set<string>();
let phoneCounter = 0;
function freshPhone(): string {
  const areas = [212, 213, 305, 312, 404, 415, 512, 617, 702, 713, 808, 917];
  for (;;) {
    const area = areas[Math.floor(Math.random() * areas.length)];
    const exchange = 200 + Math.floor(Math.random() * 700);
    const line = String(Math.floor(Math.random() * 10_000)).padStart(4, "0");
    const phone = `+1 ${area} ${exchange} ${line}`;
    const checked = checkPhone(phone);
    if ("e164" in checked && !usedPhones.has(checked.e164)) {
      usedPhones.add(checked.e164);
      return phone;
    }
  }
}
function freshEmail(): string {
  phoneCounter += 1;
  return `shipper.${process.pid}.${Date.now()}.${phoneCounter}@example.com`;
}
/** A lead with its own phone and email, so no other test's lead makes it a duplicate. */
const fresh = (overrides: Json = {}) => leadBody({ phone_number: freshPhone(), email: freshEmail(), ...overrides });

/** The start of the New York business day of `iso`, as the API writes an instant. */
const businessDayStart = (iso: string) =>
  DateTime.fromISO(iso, { zone: "America/New_York" }).startOf("day").toUTC().toISO() as string;

/**
 * 02:30:15.123 UTC yesterday: a time that is the day before yesterday in New York, so an answer
 * dated by the UTC day, or left exact, cannot pass for the business day's start.
 */
const lateEveningInNewYork = () => `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}T02:30:15.123Z`;

describe.each(BACKENDS)("intake ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  const create = (key: string, body: unknown) => t.call("POST", LEADS, { auth: key, body });
  const setRules = (id: number, body: unknown) => t.call("PUT", rulesPath(id), { auth: admin, body });

  beforeAll(async () => {
    t = await startTestApp(backend);
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

  describe("contact and lead checks", () => {
    let key: string;
    beforeAll(async () => {
      ({ key } = await t.provider());
    });

    it.each([
      ["an impossible number", "123-456-7890", "is not a valid phone number"],
      ["a toll-free number", "800-555-1234", "toll-free"],
      ["a premium-rate number", "900-555-1234", "premium-rate"],
    ])("refuses %s as invalid_phone", async (_what, phone, words) => {
      const res = await create(key, fresh({ phone_number: phone }));
      expect(res.status).toBe(400);
      const body = await j(res);
      expect(body.code).toBe("validation_error");
      expect(body.errors).toEqual([
        { field: "phone_number", code: "invalid_phone", message: expect.stringContaining(words) },
      ]);
    });

    it("stores and returns phone_e164 beside the phone as sent", async () => {
      const body = fresh({ phone_number: "(212) 555-0142" });
      const res = await create(key, body);
      expect(res.status).toBe(201);
      const lead = await j(res);
      expect(lead).toMatchObject({ phone_number: "(212) 555-0142", phone_e164: "+12125550142" });
      const got = await j(t.call("GET", `${LEADS}${body.external_id}/`, { auth: key }));
      expect(got.phone_e164).toBe("+12125550142");
    });

    it("refuses a ship date before yesterday (America/New_York) and accepts yesterday", async () => {
      const old = await create(key, fresh({ estimated_ship_date: "2020-01-01" }));
      expect(old.status).toBe(400);
      expect((await j(old)).errors).toEqual([
        { field: "estimated_ship_date", code: "ship_date_in_past", message: expect.any(String) },
      ]);
      const yesterday = await create(key, fresh({ estimated_ship_date: shipDate(-1) }));
      expect(yesterday.status, await yesterday.clone().text()).toBe(201);
      expect((await create(key, fresh({ estimated_ship_date: shipDate(-3) }))).status).toBe(400);
    });

    it("checks a VIN's check digit, names vehicles[i].vin, and returns it upper case", async () => {
      const car = { year: 2003, make: "Honda", model: "Accord", type: "CAR", tariff: 900, deposit: 100 };
      const bad = await create(
        key,
        fresh({ vehicles: [car, { ...car, vin: "1HGCM82633A004353" }, { ...car, vin: "1HGCM82633A00435O" }] }),
      );
      expect(bad.status).toBe(400);
      expect((await j(bad)).errors.map((e: Json) => [e.field, e.code])).toEqual([
        ["vehicles[1].vin", "invalid_vin"],
        ["vehicles[2].vin", "invalid_vin"],
      ]);
      const body = fresh({ vehicles: [{ ...car, vin: "1hgcm82633a004352" }] });
      const ok = await create(key, body);
      expect(ok.status).toBe(201);
      expect((await j(ok)).vehicles[0].vin).toBe("1HGCM82633A004352");
      const got = await j(t.call("GET", `${LEADS}${body.external_id}/`, { auth: key }));
      expect(got.vehicles[0].vin).toBe("1HGCM82633A004352");
    });

    it("stores sub_id, source_url and consent, and names each bad consent member", async () => {
      const consent = {
        trusted_form_cert_url: `https://cert.trustedform.com/${"a1".repeat(20)}`,
        jornaya_lead_id: "8c1f1e8e-4c5b-4d2a-9a0b-3c4d5e6f7a8b",
        consent_text: "I agree to be contacted.",
        consented_at: new Date(Date.now() - 60_000).toISOString(),
        ip_address: "2001:db8::7",
        user_agent: "Mozilla/5.0",
        page_url: "https://quotes.example.com/form",
      };
      const body = fresh({ sub_id: "fb-campaign.17:a", source_url: "https://quotes.example.com/x?utm=1", consent });
      const res = await create(key, body);
      expect(res.status).toBe(201);
      const got = await j(t.call("GET", `${LEADS}${body.external_id}/`, { auth: key }));
      expect(got).toMatchObject({
        sub_id: "fb-campaign.17:a",
        source_url: "https://quotes.example.com/x?utm=1",
        consent,
      });

      const bad = await create(
        key,
        fresh({
          sub_id: "has space",
          source_url: "ftp://example.com/",
          consent: {
            trusted_form_cert_url: "https://cert.trustedform.com/xyz",
            jornaya_lead_id: "nope",
            consented_at: new Date(Date.now() + 3_600_000).toISOString(),
            ip_address: "1.2.3",
            page_url: "javascript:alert(1)",
            colour: "red",
          },
        }),
      );
      expect(bad.status).toBe(400);
      expect((await j(bad)).errors.map((e: Json) => e.field).sort()).toEqual(
        [
          "consent.colour",
          "consent.consented_at",
          "consent.ip_address",
          "consent.jornaya_lead_id",
          "consent.page_url",
          "consent.trusted_form_cert_url",
          "source_url",
          "sub_id",
        ].sort(),
      );
    });

    it("accepts a disposable email with a warning, unless the rules reject it", async () => {
      const res = await create(key, fresh({ email: `someone.${Date.now()}@Mailinator.com` }));
      expect(res.status).toBe(201);
      expect((await j(res)).warnings).toContainEqual({
        field: "email",
        code: "disposable_email",
        message: expect.any(String),
      });
    });
  });

  describe("duplicates across providers", () => {
    it("flags (default): 201, billable false, and nothing of the other provider in the answer", async () => {
      const first = await t.provider("Dup Original Co");
      const second = await t.provider("Dup Second Co");
      const phone = freshPhone();
      const originalBody = fresh({ phone_number: phone, first_name: "Zebediah", company_name: "Secret Corp" });
      const original = await j(create(first.key, originalBody));
      expect(original).toMatchObject({ duplicate: null, billable: true });

      const res = await create(second.key, fresh({ phone_number: phone }));
      expect(res.status).toBe(201);
      const raw = await res.text();
      const lead = JSON.parse(raw);
      expect(lead.billable).toBe(false);
      expect(lead.duplicate).toEqual({
        matched_on: ["phone_number"],
        first_seen_at: businessDayStart(original.created_at),
        same_provider: false,
        original: null,
      });
      for (const secret of [
        String(original.id),
        original.order_number,
        originalBody.external_id,
        "Dup Original Co",
        "Zebediah",
        "Secret Corp",
      ]) {
        expect(raw).not.toContain(secret);
      }
      expect(raw).not.toContain("provider_id");
      // GET shows the same flag.
      const got = await j(t.call("GET", `${LEADS}${lead.external_id}/`, { auth: second.key }));
      expect(got.duplicate).toEqual(lead.duplicate);

      // Administrators see the original across providers.
      const admin_ = await j(
        t.call("GET", `/api/v1/admin/leads/?duplicate=true&provider_id=${second.id}`, { auth: admin }),
      );
      expect(admin_.results).toHaveLength(1);
      expect(admin_.results[0].duplicate.original).toEqual({
        id: original.id,
        provider_id: first.id,
        order_number: original.order_number,
        external_id: originalBody.external_id,
      });
    });

    it("dates another provider's original to its business day (REST, events, webhook), the provider's own to the millisecond", async () => {
      const receiver = await startReceiver();
      try {
        const first = await t.provider();
        const second = await t.provider(undefined, { webhook_url: receiver.url });
        const refusing = await t.provider();
        expect((await setRules(refusing.id, { duplicate_policy: "reject" })).status).toBe(200);
        const phone = freshPhone();
        const original = await j(create(first.key, fresh({ phone_number: phone })));
        // Sent at 02:30:15.123 UTC yesterday: the evening before in New York.
        const seen = lateEveningInNewYork();
        await t.app.database.db
          .updateTable("leads")
          .set({ created_at: new Date(seen) })
          .where("id", "=", original.id)
          .execute();
        const day = businessDayStart(seen);
        expect(day.slice(0, 10)).toBe(new Date(Date.parse(seen) - 86_400_000).toISOString().slice(0, 10));
        expect(day).toMatch(/T0[45]:00:00\.000Z$/);

        const flagged = await j(create(second.key, fresh({ phone_number: phone })));
        expect(flagged.duplicate).toEqual({
          matched_on: ["phone_number"],
          first_seen_at: day,
          same_provider: false,
          original: null,
        });
        const got = await j(t.call("GET", `${LEADS}${flagged.external_id}/`, { auth: second.key }));
        expect(got.duplicate.first_seen_at).toBe(day);
        const listed = await j(t.call("GET", `${LEADS}?page_size=1`, { auth: second.key }));
        expect(listed.results[0].duplicate.first_seen_at).toBe(day);
        const feed = await j(t.call("GET", "/api/v1/public/events/?type=lead.created", { auth: second.key }));
        expect(feed.results[0].data.lead.duplicate.first_seen_at).toBe(day);
        await receiver.waitFor((all) => all.length >= 1, 10_000, "the lead.created webhook");
        const hook = JSON.parse(receiver.ofType("lead.created", flagged.id)[0]?.body ?? "{}") as Json;
        expect(hook.data.lead.duplicate.first_seen_at).toBe(day);

        const refused = await create(refusing.key, fresh({ phone_number: phone }));
        expect(refused.status).toBe(400);
        const problem = await j(refused);
        expect(problem.duplicate.first_seen_at).toBe(day);
        expect(problem.detail).toContain(day);
        expect(problem.detail).not.toContain(seen.slice(11, 19));

        // The provider's own original: exact.
        const own = await j(create(first.key, fresh({ phone_number: phone })));
        expect(own.duplicate).toMatchObject({ same_provider: true, first_seen_at: seen });
        // Administrators see every original exactly.
        const admin_ = await j(
          t.call("GET", `/api/v1/admin/leads/?duplicate=true&provider_id=${second.id}`, { auth: admin }),
        );
        expect(admin_.results[0].duplicate.first_seen_at).toBe(seen);
      } finally {
        await receiver.close();
      }
    });

    it("matches the same provider under another external_id, naming its own original; email with its domain in any case", async () => {
      const p = await t.provider();
      const email = freshEmail();
      const original = await j(create(p.key, fresh({ email })));
      const again = await create(p.key, fresh({ email: email.replace("example.com", "EXAMPLE.com") }));
      expect(again.status).toBe(201);
      expect((await j(again)).duplicate).toEqual({
        matched_on: ["email"],
        first_seen_at: original.created_at,
        same_provider: true,
        original: { id: original.id, order_number: original.order_number, external_id: original.external_id },
      });
      // The same external_id again is still duplicate_external_id, not a duplicate of itself.
      const repeat = await create(p.key, { ...leadBody(), external_id: original.external_id, email });
      expect((await j(repeat)).code).toBe("duplicate_external_id");
    });

    it("rejects under duplicate_policy reject: 400 duplicate_lead, nothing stored, the external_id still free", async () => {
      const first = await t.provider();
      const second = await t.provider();
      expect((await setRules(second.id, { duplicate_policy: "reject" })).status).toBe(200);
      const phone = freshPhone();
      expect((await create(first.key, fresh({ phone_number: phone }))).status).toBe(201);
      const body = fresh({ phone_number: phone });
      const res = await create(second.key, body);
      expect(res.status).toBe(400);
      const problem = await j(res);
      expect(problem).toMatchObject({
        code: "duplicate_lead",
        duplicate: { matched_on: ["phone_number"], same_provider: false, original: null },
      });
      expect((await t.call("GET", `${LEADS}${body.external_id}/`, { auth: second.key })).status).toBe(404);
      expect((await create(second.key, { ...body, phone_number: freshPhone(), email: freshEmail() })).status).toBe(201);
    });

    it("matches test leads only against the same provider's test leads", async () => {
      const a = await t.provider();
      const b = await t.provider();
      const issue = async (id: number) =>
        (
          await j(
            t.call("POST", `/api/v1/lead_providers/${id}/generate_api_key/`, {
              auth: admin,
              body: { mode: "test" },
            }),
          )
        ).api_key as string;
      const [testA, testB] = [await issue(a.id), await issue(b.id)];
      const phone = freshPhone();
      expect((await j(create(a.key, fresh({ phone_number: phone })))).duplicate).toBeNull();
      const t1 = await j(create(testA, fresh({ phone_number: phone })));
      // A test lead that duplicates nothing is billable in the test book, and priced.
      expect(t1).toMatchObject({ livemode: false, duplicate: null, billable: true, price: { amount_cents: 0 } });
      expect((await j(create(testB, fresh({ phone_number: phone })))).duplicate).toBeNull();
      const t2 = await j(create(testA, fresh({ phone_number: phone })));
      expect(t2.duplicate).toMatchObject({ same_provider: true, original: { id: t1.id } });
      expect(t2).toMatchObject({ billable: false, price: null });
    });

    it("matches an email whatever its case, local part included", async () => {
      const a = await t.provider();
      const b = await t.provider();
      const email = freshEmail();
      expect((await create(a.key, fresh({ email }))).status).toBe(201);
      const again = await j(create(b.key, fresh({ email: email.toUpperCase() })));
      expect(again.duplicate).toMatchObject({ matched_on: ["email"], same_provider: false });
      expect(again.billable).toBe(false);
    });

    it("race: 20 providers with reject send one new phone at once; exactly one 201", async () => {
      const providers = await Promise.all(Array.from({ length: 20 }, () => t.provider()));
      await Promise.all(providers.map((p) => setRules(p.id, { duplicate_policy: "reject" })));
      // Each key and its rules read once first (they are cached), so the 20 inserts really race.
      await Promise.all(providers.map((p) => t.call("GET", RULES, { auth: p.key })));
      const phone = freshPhone();
      const answers = await Promise.all(providers.map((p) => create(p.key, fresh({ phone_number: phone }))));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(19);
      for (const r of answers.filter((a) => a.status === 400)) expect((await j(r)).code).toBe("duplicate_lead");
    });
  });

  describe("intake rules", () => {
    it("names every bad member of a PUT and keeps the old rules", async () => {
      const p = await t.provider();
      const res = await setRules(p.id, {
        caps: { day: 0, week: 1.5, year: 3 },
        origin_states: ["FL", "XX", "FL"],
        vehicle_types: [],
        duplicate_policy: "maybe",
        schedule: { mon: [{ open: "09:00", close: "08:00" }], someday: [] },
        colour: "red",
        ship_date_min_days: 10,
        ship_date_max_days: 5,
      });
      expect(res.status).toBe(400);
      const problem = await j(res);
      const byField = Object.fromEntries(problem.errors.map((e: Json) => [e.field, e.message]));
      expect(byField["caps.day"]).toMatch(/^caps\.day must be a positive integer/);
      expect(Object.keys(byField).sort()).toEqual(
        [
          "caps.day",
          "caps.week",
          "caps.year",
          "colour",
          "duplicate_policy",
          "origin_states[1]",
          "origin_states[2]",
          "schedule.mon[0].close",
          "schedule.someday",
          "ship_date_min_days",
          "vehicle_types",
        ].sort(),
      );
      const stored = await j(t.call("GET", rulesPath(p.id), { auth: admin }));
      expect(stored).toMatchObject({ version: 0, caps: { day: null }, duplicate_policy: "flag" });
    });

    it("lists every rule a lead breaks in one outside_criteria answer, and audits the change with before and after", async () => {
      const p = await t.provider();
      const res = await setRules(p.id, {
        origin_states: ["FL", "GA"],
        destination_states: ["TX"],
        overseas_types: ["DOMESTIC"],
        ship_via: ["OPEN"],
        vehicle_types: ["CAR"],
        max_vehicles: 1,
        ship_date_min_days: 3,
        reject_disposable_email: true,
        consent_required: true,
      });
      expect(res.status).toBe(200);
      expect((await j(res)).version).toBe(1);
      const car = { year: 2020, make: "Ford", model: "F-150", type: "PICKUP", tariff: 900, deposit: 100 };
      const bad = await create(
        p.key,
        fresh({
          origin_zip: "90210",
          destination_zip: "10001",
          ship_via: "ENCLOSED",
          vehicles: [car, { ...car, type: "CAR" }],
          estimated_ship_date: shipDate(1),
          email: `x${Date.now()}@mailinator.com`,
        }),
      );
      expect(bad.status).toBe(400);
      const problem = await j(bad);
      expect(problem.code).toBe("outside_criteria");
      expect(problem.errors.map((e: Json) => [e.field, e.code])).toEqual([
        ["origin_zip", "origin_state_not_accepted"],
        ["destination_zip", "destination_state_not_accepted"],
        ["ship_via", "ship_via_not_accepted"],
        ["vehicles[0].type", "vehicle_type_not_accepted"],
        ["vehicles", "too_many_vehicles"],
        ["estimated_ship_date", "ship_date_too_soon"],
        ["email", "disposable_email"],
        ["consent", "consent_required"],
      ]);
      const ok = await create(
        p.key,
        fresh({
          origin_zip: "33101",
          destination_zip: "75201",
          estimated_ship_date: shipDate(5),
          consent: { jornaya_lead_id: "8c1f1e8e-4c5b-4d2a-9a0b-3c4d5e6f7a8b" },
        }),
      );
      expect(ok.status).toBe(201);

      const log = await j(t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}&page_size=100`, { auth: admin }));
      const entry = log.results.find((e: Json) => e.action === "intake_rules.updated");
      expect(entry.details.before.origin_states).toBeNull();
      expect(entry.details.after.origin_states).toEqual(["FL", "GA"]);
    });

    it("paused: live leads get 429 intake_paused with the reason and no Retry-After; test keys still work", async () => {
      const p = await t.provider();
      await setRules(p.id, { paused: true, paused_reason: "Holiday week" });
      const res = await create(p.key, fresh());
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBeNull();
      expect(await j(res)).toMatchObject({ code: "intake_paused", paused_reason: "Holiday week" });
      const test = await j(
        t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
          auth: admin,
          body: { mode: "test" },
        }),
      );
      expect((await create(test.api_key, fresh())).status).toBe(201);
    });

    it.each([
      ["the week cap is full, the day cap is not", { day: 5, week: 2 }, 2, "week"],
      ["the day cap is full, the week cap is not", { day: 1, week: 5 }, 1, "day"],
      ["both are full: none gets in before the week resets", { day: 1, week: 1 }, 1, "week"],
      ["the month cap is full, the day and week caps are not", { day: 4, week: 3, month: 2 }, 2, "month"],
      ["the day cap is full, the month cap is not", { day: 1, month: 3 }, 1, "day"],
    ] as const)("cap_reached names the window that is full: %s", async (_what, caps, fits, window) => {
      const p = await t.provider();
      expect((await setRules(p.id, { caps })).status).toBe(200);
      for (let i = 0; i < fits; i += 1) expect((await create(p.key, fresh())).status).toBe(201);
      const full = await create(p.key, fresh());
      expect(full.status).toBe(429);
      const problem = await j(full);
      // When that window resets in New York (computed after the answer, so a midnight between cannot flake it).
      const here = DateTime.now().setZone("America/New_York");
      const resets = here
        .startOf(window)
        .plus({ [`${window}s`]: 1 })
        .toUTC()
        .toISO();
      expect(problem).toMatchObject({ code: "cap_reached", window, resets_at: resets });
      expect(problem.detail).toContain(`the ${window} cap`);
    });

    it("caps: 50 creates at once against a remaining cap of 10 give exactly 10 × 201, then cap_reached with the reset", async () => {
      const p = await t.provider(undefined, { rate_limit_per_minute: 10_000 });
      await setRules(p.id, { caps: { day: 12 } });
      for (let i = 0; i < 2; i++) expect((await create(p.key, fresh())).status).toBe(201);
      const answers = await Promise.all(Array.from({ length: 50 }, () => create(p.key, fresh())));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
      const refused = answers.filter((r) => r.status === 429);
      expect(refused).toHaveLength(40);
      const problem = await j(refused[0] as Response);
      expect(problem).toMatchObject({ code: "cap_reached", window: "day" });
      const resetsAt = new Date(problem.resets_at).getTime();
      expect(resetsAt).toBeGreaterThan(Date.now());
      expect(resetsAt - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
      const retry = Number(refused[0]?.headers.get("retry-after"));
      expect(Math.abs(retry - (resetsAt - Date.now()) / 1000)).toBeLessThan(5);

      const published = await j(t.call("GET", RULES, { auth: p.key }));
      expect(published.cap_usage.day).toEqual({ limit: 12, used: 12, remaining: 0, resets_at: problem.resets_at });
    });
  });

  describe("a lead sent again", () => {
    it("is named as duplicate_external_id whatever refuses new leads now: a full cap, a pause, tighter rules", async () => {
      const p = await t.provider();
      const body = fresh();
      const first = await j(create(p.key, body));
      await setRules(p.id, { caps: { day: 1 } });
      expect((await create(p.key, fresh())).status).toBe(429);
      for (const rules of [
        { caps: { day: 1 } },
        { paused: true },
        { origin_states: ["TX"] },
        { duplicate_policy: "reject" },
      ]) {
        await setRules(p.id, rules);
        const again = await create(p.key, body);
        expect(again.status, JSON.stringify(rules)).toBe(400);
        expect(await j(again)).toMatchObject({
          code: "duplicate_external_id",
          existing_lead: { id: first.id, order_number: first.order_number },
        });
      }
      // Even when the body would now fail a check (a toll-free number).
      const changed = await j(create(p.key, { ...body, phone_number: "800-555-1234" }));
      expect(changed.code).toBe("duplicate_external_id");
    });
  });

  describe("changing the rules", () => {
    it("takes back what GET answered, and a PUT that changes nothing makes no new version or event", async () => {
      const p = await t.provider();
      const v1 = await j(setRules(p.id, { origin_states: ["FL"], caps: { day: 5 } }));
      expect(v1.version).toBe(1);
      const read = await j(t.call("GET", rulesPath(p.id), { auth: admin }));
      const again = await setRules(p.id, read);
      expect(again.status).toBe(200);
      expect((await j(again)).version).toBe(1);
      const events = await j(
        t.call("GET", `/api/v1/admin/audit_log/?provider_id=${p.id}&page_size=100`, { auth: admin }),
      );
      expect(events.results.filter((e: Json) => e.action === "intake_rules.updated")).toHaveLength(1);
      expect((await j(setRules(p.id, { ...read, origin_states: ["GA"] }))).version).toBe(2);
    });

    it("counts cap usage past a cap set below what the window already holds", async () => {
      const p = await t.provider();
      for (let i = 0; i < 3; i++) expect((await create(p.key, fresh())).status).toBe(201);
      const rules = await j(setRules(p.id, { caps: { day: 2 } }));
      expect(rules.cap_usage.day).toMatchObject({ limit: 2, used: 3, remaining: 0 });
    });

    it("refuses a Connect SetIntakeRules without rules instead of resetting them", async () => {
      const p = await t.provider();
      await setRules(p.id, { origin_states: ["FL"] });
      const providers = connectClient(ProviderService, t.port, "connect");
      const err = await providers.setIntakeRules({ id: BigInt(p.id) }, bearer(admin)).catch((e: ConnectError) => e);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).findDetails(ErrorDetailSchema)[0]?.violations.map((v) => v.field)).toEqual([
        "rules",
      ]);
      expect((await j(t.call("GET", rulesPath(p.id), { auth: admin }))).origin_states).toEqual(["FL"]);
    });
  });

  describe("published rules", () => {
    it("answers the rules as they apply to the key, with an ETag and 304, counting as a Public API request", async () => {
      const p = await t.provider();
      await setRules(p.id, { origin_states: ["NY"], caps: { week: 100 }, duplicate_policy: "reject" });
      const res = await t.call("GET", RULES, { auth: p.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeTruthy();
      const body = await j(res);
      expect(body).toMatchObject({
        livemode: true,
        open: true,
        opens_at: null,
        origin_states: ["NY"],
        duplicate_policy: "reject",
        caps: { day: null, week: 100, month: null },
        cap_usage: { day: null, week: { limit: 100, used: 0, remaining: 100 }, month: null },
        duplicate_window_days: 30,
        duplicate_match: ["phone_number", "email"],
        business_timezone: "America/New_York",
        rate_limits: { per_minute: expect.any(Number), per_day: expect.any(Number) },
        version: 1,
      });
      expect(body.accepted.ship_via_by_overseas_type.FOREIGN).toContain("ROLLON_ROLLOFF");
      const byCode = Object.fromEntries(body.rules.map((r: Json) => [r.code, r]));
      expect(byCode.origin_state_not_accepted).toMatchObject({ field: "origin_zip", active: true });
      expect(byCode.destination_state_not_accepted.active).toBe(false);
      expect(byCode.intake_paused.active).toBe(false);

      const tag = res.headers.get("etag") as string;
      const again = await t.call("GET", RULES, { auth: p.key, headers: { "if-none-match": tag } });
      expect(again.status).toBe(304);
      await create(p.key, fresh({ origin_zip: "10001" }));
      const changed = await t.call("GET", RULES, { auth: p.key, headers: { "if-none-match": tag } });
      expect(changed.status).toBe(200);
      expect((await j(changed)).cap_usage.week.used).toBe(1);
    });
  });

  describe("the sandbox's reserved values (test key)", () => {
    let testKey: string;
    beforeAll(async () => {
      const p = await t.provider();
      testKey = (
        await j(
          t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
            auth: admin,
            body: { mode: "test" },
          }),
        )
      ).api_key;
    });
    it.each([
      ["sandbox:duplicate", 400, "duplicate_lead"],
      ["sandbox:cap_reached", 429, "cap_reached"],
      ["sandbox:intake_closed", 429, "intake_closed"],
      ["sandbox:outside_criteria", 400, "outside_criteria"],
    ])("%s answers %i %s and stores nothing", async (marker, status, code) => {
      const body = fresh({ note_from_shipper: marker });
      const res = await create(testKey, body);
      expect(res.status).toBe(status);
      const problem = await j(res);
      expect(problem.code).toBe(code);
      if (status === 429) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await t.call("GET", `${LEADS}${body.external_id}/`, { auth: testKey })).status).toBe(404);
    });
  });

  describe("over gRPC", () => {
    const request = (overrides: Json = {}) => ({
      externalId: `grpc-intake-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      firstName: "Ana",
      lastName: "Rivera",
      email: freshEmail(),
      phoneNumber: freshPhone(),
      originZip: "33101",
      estimatedShipDate: shipDate(20),
      overseasType: OverseasType.DOMESTIC,
      shipVia: ShipVia.OPEN,
      vehicles: [
        {
          year: 2019,
          make: "Honda",
          model: "Civic",
          type: VehicleType.CAR,
          tariff: 900n,
          deposit: 100n,
          vin: "1HGCM82633A004352",
        },
      ],
      ...overrides,
    });

    it("flags a duplicate, refuses one under reject with ErrorInfo DUPLICATE_LEAD, and names outside_criteria rules", async () => {
      const a = await t.provider();
      const b = await t.provider();
      const leads = connectClient(PublicLeadService, t.port, "grpc");
      const providers = connectClient(ProviderService, t.port, "grpc");
      const phone = freshPhone();
      const first = await leads.createLead(request({ phoneNumber: phone }), bearer(a.key));
      expect(first.lead?.billable).toBe(true);
      expect(first.lead?.vehicles[0]?.vin).toBe("1HGCM82633A004352");
      const second = await leads.createLead(request({ phoneNumber: phone }), bearer(b.key));
      expect(second.lead?.billable).toBe(false);
      expect(second.lead?.duplicate?.matchedOn).toEqual(["phone_number"]);
      expect(second.lead?.duplicate?.original).toBeUndefined();

      await providers.setIntakeRules(
        { id: BigInt(b.id), rules: { duplicatePolicy: "reject", originStates: { values: ["FL"] } } },
        bearer(await t.token()),
      );
      const refused = await leads.createLead(request({ phoneNumber: phone }), bearer(b.key)).catch((e) => e);
      expect(refused).toBeInstanceOf(ConnectError);
      expect(refused.code).toBe(Code.InvalidArgument);
      const detail = (refused as ConnectError).findDetails(ErrorDetailSchema)[0];
      expect(detail?.code).toBe("duplicate_lead");
      expect(detail?.duplicate?.matchedOn).toEqual(["phone_number"]);

      const outside = await leads
        .createLead(request({ originZip: "90210" }), bearer(b.key))
        .catch((e: ConnectError) => e);
      expect((outside as ConnectError).code).toBe(Code.InvalidArgument);
      const violations = (outside as ConnectError).findDetails(ErrorDetailSchema)[0]?.violations ?? [];
      expect(violations.map((v) => [v.field, v.code])).toEqual([["origin_zip", "origin_state_not_accepted"]]);

      const published = await leads.getIntakeRules({}, bearer(b.key));
      expect(published.intakeRules?.rules?.originStates?.values).toEqual(["FL"]);
      expect(published.intakeRules?.rules?.duplicatePolicy).toBe("reject");
    });

    it("dates another provider's original to its business day over gRPC and Connect, the provider's own exactly", async () => {
      const a = await t.provider();
      const b = await t.provider();
      const refusing = await t.provider();
      await connectClient(ProviderService, t.port, "connect").setIntakeRules(
        { id: BigInt(refusing.id), rules: { duplicatePolicy: "reject" } },
        bearer(await t.token()),
      );
      const phone = freshPhone();
      const grpc = connectClient(PublicLeadService, t.port, "grpc");
      const connect = connectClient(PublicLeadService, t.port, "connect");
      const first = await grpc.createLead(request({ phoneNumber: phone }), bearer(a.key));
      const seen = lateEveningInNewYork();
      await t.app.database.db
        .updateTable("leads")
        .set({ created_at: new Date(seen) })
        .where("id", "=", Number(first.lead?.id))
        .execute();
      const day = businessDayStart(seen);
      for (const client of [grpc, connect]) {
        const created = await client.createLead(request({ phoneNumber: phone }), bearer(b.key));
        const dup = created.lead?.duplicate;
        expect(dup?.sameProvider).toBe(false);
        expect(dup?.firstSeenAt && timestampDate(dup.firstSeenAt).toISOString()).toBe(day);
        const read = await client.getLead({ externalId: created.lead?.externalId ?? "" }, bearer(b.key));
        expect(read.lead?.duplicate?.firstSeenAt && timestampDate(read.lead.duplicate.firstSeenAt).toISOString()).toBe(
          day,
        );
        const refused = (await client
          .createLead(request({ phoneNumber: phone }), bearer(refusing.key))
          .catch((e: unknown) => e)) as ConnectError;
        expect(refused.code).toBe(Code.InvalidArgument);
        const detail = refused.findDetails(ErrorDetailSchema)[0];
        expect(detail?.duplicate?.firstSeenAt && timestampDate(detail.duplicate.firstSeenAt).toISOString()).toBe(day);
      }
      const own = await grpc.createLead(request({ phoneNumber: phone }), bearer(a.key));
      expect(own.lead?.duplicate?.sameProvider).toBe(true);
      expect(own.lead?.duplicate?.firstSeenAt && timestampDate(own.lead.duplicate.firstSeenAt).toISOString()).toBe(
        seen,
      );
    });

    it("caps answer RESOURCE_EXHAUSTED with cap_reached, the window and the reset; bad rules are named", async () => {
      const p = await t.provider();
      const providers = connectClient(ProviderService, t.port, "connect");
      const auth = bearer(await t.token());
      const bad = await providers
        .setIntakeRules({ id: BigInt(p.id), rules: { caps: { day: -1 }, duplicatePolicy: "x" } }, auth)
        .catch((e: ConnectError) => e);
      expect((bad as ConnectError).code).toBe(Code.InvalidArgument);
      expect((bad as ConnectError).findDetails(ErrorDetailSchema)[0]?.violations.map((v) => v.field)).toEqual([
        "duplicate_policy",
        "caps.day",
      ]);
      await providers.setIntakeRules({ id: BigInt(p.id), rules: { caps: { month: 1 } } }, auth);
      const leads = connectClient(PublicLeadService, t.port, "grpc-web");
      await leads.createLead(request(), bearer(p.key));
      const full = await leads.createLead(request(), bearer(p.key)).catch((e: ConnectError) => e);
      expect((full as ConnectError).code).toBe(Code.ResourceExhausted);
      const detail = (full as ConnectError).findDetails(ErrorDetailSchema)[0];
      expect(detail).toMatchObject({ code: "cap_reached", window: "month" });
      expect(new Date(detail?.resetsAt ?? "").getUTCDate()).toBe(1);
    });
  });
});

describe.each(BACKENDS)("intake refusals over gRPC ($name): ErrorInfo reasons, metadata and RetryInfo", (backend) => {
  let t: TestApp;
  // Saturday 2026-11-28 20:30 in New York, so a weekday schedule is closed.
  const saturday = new Date("2026-11-29T01:30:00Z");
  beforeAll(async () => {
    t = await startTestApp(backend, {}, { now: () => saturday });
  });
  afterAll(async () => {
    await t?.stop();
  });
  const request = (overrides: Json = {}) => ({
    externalId: `grpc-refusal-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    firstName: "Ana",
    lastName: "Rivera",
    email: freshEmail(),
    phoneNumber: freshPhone(),
    originZip: "33101",
    estimatedShipDate: "2026-12-20",
    overseasType: OverseasType.DOMESTIC,
    shipVia: ShipVia.OPEN,
    vehicles: [{ year: 2019, make: "Honda", model: "Civic", type: VehicleType.CAR, tariff: 900n, deposit: 100n }],
    ...overrides,
  });
  const refusal = async (call: Promise<unknown>) => {
    const err = (await call.catch((e: unknown) => e)) as ConnectError;
    expect(err).toBeInstanceOf(ConnectError);
    return {
      code: err.code,
      info: err.findDetails(ErrorInfoSchema)[0],
      retry: err.findDetails(RetryInfoSchema)[0],
      detail: err.findDetails(ErrorDetailSchema)[0],
    };
  };

  it("paused: RESOURCE_EXHAUSTED, INTAKE_PAUSED with the reason, no RetryInfo", async () => {
    const p = await t.provider();
    await t.call("PUT", rulesPath(p.id), { auth: await t.token(), body: { paused: true, paused_reason: "Audit" } });
    const leads = connectClient(PublicLeadService, t.port, "grpc");
    const r = await refusal(leads.createLead(request(), bearer(p.key)));
    expect(r.code).toBe(Code.ResourceExhausted);
    expect(r.info).toMatchObject({
      reason: "INTAKE_PAUSED",
      metadata: { code: "intake_paused", paused_reason: "Audit" },
    });
    expect(r.detail?.pausedReason).toBe("Audit");
    expect(r.retry).toBeUndefined();
  });

  it("closed: INTAKE_CLOSED with opens_at and RetryInfo until Monday 08:00 New York", async () => {
    const p = await t.provider();
    const weekday = [{ open: "08:00", close: "20:00" }];
    await t.call("PUT", rulesPath(p.id), {
      auth: await t.token(),
      body: { schedule: { mon: weekday, tue: weekday, wed: weekday, thu: weekday, fri: weekday } },
    });
    const leads = connectClient(PublicLeadService, t.port, "grpc-web");
    const r = await refusal(leads.createLead(request(), bearer(p.key)));
    expect(r.code).toBe(Code.ResourceExhausted);
    expect(r.info).toMatchObject({
      reason: "INTAKE_CLOSED",
      metadata: { code: "intake_closed", opens_at: "2026-11-30T13:00:00.000Z" },
    });
    expect(Number(r.retry?.retryDelay?.seconds)).toBe((Date.parse("2026-11-30T13:00:00Z") - saturday.getTime()) / 1000);
    const published = await leads.getIntakeRules({}, bearer(p.key));
    expect(published.intakeRules?.open).toBe(false);
    expect(published.intakeRules?.rules?.schedule?.days.mon?.openings).toEqual([
      expect.objectContaining({ open: "08:00", close: "20:00" }),
    ]);
  });

  it("contact checks name the field; sub_id, source_url, consent, VIN and the disposable warning round-trip", async () => {
    const p = await t.provider();
    const leads = connectClient(PublicLeadService, t.port, "connect");
    const bad = await refusal(
      leads.createLead(
        request({ phoneNumber: "800-555-1234", consent: { jornayaLeadId: "nope" }, estimatedShipDate: "2026-11-20" }),
        bearer(p.key),
      ),
    );
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.detail?.violations.map((v) => [v.field, v.code])).toEqual([
      ["phone_number", "invalid_phone"],
      ["estimated_ship_date", "ship_date_in_past"],
      ["consent.jornaya_lead_id", "invalid_format"],
    ]);
    const ok = await leads.createLead(
      request({
        email: `x.${Date.now()}@mailinator.com`,
        subId: "aff-9",
        sourceUrl: "https://quotes.example.com/",
        consent: { trustedFormCertUrl: `https://cert.trustedform.com/${"ab".repeat(20)}` },
      }),
      bearer(p.key),
    );
    expect(ok.lead).toMatchObject({ subId: "aff-9", sourceUrl: "https://quotes.example.com/", billable: true });
    expect(ok.lead?.consent?.trustedFormCertUrl).toBe(`https://cert.trustedform.com/${"ab".repeat(20)}`);
    expect(ok.lead?.phoneE164).toMatch(/^\+1\d{10}$/);
    expect(ok.warnings.map((w) => w.code)).toEqual(["disposable_email"]);
  });
});

describe.each(BACKENDS)("intake schedule ($name, a Saturday evening in New York)", (backend) => {
  let t: TestApp;
  // Saturday 2026-11-28 20:30 in New York (EST, UTC−5).
  const saturday = new Date("2026-11-29T01:30:00Z");
  beforeAll(async () => {
    t = await startTestApp(backend, {}, { now: () => saturday });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it("intake_closed's Retry-After points at Monday 08:00 New York; the published rules say when it opens", async () => {
    const p = await t.provider();
    const weekday = [{ open: "08:00", close: "20:00" }];
    const res = await t.call("PUT", rulesPath(p.id), {
      auth: await t.token(),
      body: { schedule: { mon: weekday, tue: weekday, wed: weekday, thu: weekday, fri: weekday } },
    });
    expect(res.status).toBe(200);
    const refused = await t.call("POST", LEADS, { auth: p.key, body: fresh({ estimated_ship_date: "2026-12-20" }) });
    expect(refused.status).toBe(429);
    const problem = await j(refused);
    expect(problem).toMatchObject({ code: "intake_closed", opens_at: "2026-11-30T13:00:00.000Z" });
    const monday = Date.parse("2026-11-30T13:00:00Z");
    expect(Number(refused.headers.get("retry-after"))).toBe((monday - saturday.getTime()) / 1000);
    const published = await j(t.call("GET", RULES, { auth: p.key }));
    expect(published).toMatchObject({ open: false, opens_at: "2026-11-30T13:00:00.000Z", closes_at: null });
  });
});

describe.each(BACKENDS)(
  "intake judged in BUSINESS_TIMEZONE, at hours where New York and UTC disagree ($name)",
  (backend) => {
    let t: TestApp;
    let admin: string;
    // Tuesday 2026-12-01 02:00 UTC is Monday 21:00 in New York (EST, UTC−5); 06:00 UTC is Tuesday 01:00.
    const mondayEvening = new Date("2026-12-01T02:00:00Z");
    const tuesdayNight = new Date("2026-12-01T06:00:00Z");
    let clock = mondayEvening;
    beforeAll(async () => {
      t = await startTestApp(backend, { BUSINESS_TIMEZONE: "America/New_York" }, { now: () => clock });
      admin = await t.token();
    });
    afterAll(async () => {
      await t?.stop();
    });

    const lead = () => fresh({ estimated_ship_date: "2026-12-20" });
    const setRules = async (id: number, body: unknown) =>
      expect((await t.call("PUT", rulesPath(id), { auth: admin, body })).status).toBe(200);
    /** Creates a lead and files it at `at` (or, when `at` is null, a month back: outside every window here). */
    async function createAt(key: string, at: string | null): Promise<Response> {
      const res = await t.call("POST", LEADS, { auth: key, body: lead() });
      if (res.status === 201) {
        const { id } = (await res.clone().json()) as Json;
        await t.app.database.db
          .updateTable("leads")
          .set({ created_at: new Date(at ?? "2026-11-01T12:00:00Z") })
          .where("id", "=", id)
          .execute();
      }
      return res;
    }

    it("judges the weekly schedule by the clock in New York, not UTC", async () => {
      clock = mondayEvening;
      const monday = await t.provider();
      await setRules(monday.id, { schedule: { mon: [{ open: "20:00", close: "24:00" }] } });
      expect((await createAt(monday.key, null)).status).toBe(201); // Monday 21:00 there; Tuesday in UTC
      expect(await j(t.call("GET", RULES, { auth: monday.key }))).toMatchObject({
        open: true,
        closes_at: "2026-12-01T05:00:00.000Z",
      });
      const tuesday = await t.provider();
      await setRules(tuesday.id, { schedule: { tue: [{ open: "00:00", close: "06:00" }] } });
      const closed = await createAt(tuesday.key, null); // Tuesday 02:00 in UTC, but Monday there
      expect(closed.status).toBe(429);
      expect(await j(closed)).toMatchObject({ code: "intake_closed", opens_at: "2026-12-01T05:00:00.000Z" });
      expect(Number(closed.headers.get("retry-after"))).toBe(3 * 3600);
    });

    it("resets a day cap at midnight in New York, not at midnight UTC", async () => {
      // Monday 21:00 there: a lead of Monday 18:00 there (23:00 UTC, the day before in UTC) fills it.
      clock = mondayEvening;
      const p = await t.provider();
      await setRules(p.id, { caps: { day: 1 } });
      expect((await createAt(p.key, "2026-11-30T23:00:00Z")).status).toBe(201);
      const full = await createAt(p.key, null);
      expect(full.status).toBe(429);
      expect(await j(full)).toMatchObject({
        code: "cap_reached",
        window: "day",
        resets_at: "2026-12-01T05:00:00.000Z",
      });
      expect(await j(t.call("GET", RULES, { auth: p.key }))).toMatchObject({
        cap_usage: { day: { limit: 1, used: 1, remaining: 0, resets_at: "2026-12-01T05:00:00.000Z" } },
      });

      // Tuesday 01:00 there: Monday 22:00 there (03:00 UTC, the same day in UTC) no longer counts.
      clock = tuesdayNight;
      const q = await t.provider();
      await setRules(q.id, { caps: { day: 1 } });
      expect((await createAt(q.key, "2026-12-01T03:00:00Z")).status).toBe(201);
      expect((await createAt(q.key, "2026-12-01T05:30:00Z")).status).toBe(201);
      const next = await createAt(q.key, null);
      expect(next.status).toBe(429);
      expect(await j(next)).toMatchObject({
        code: "cap_reached",
        window: "day",
        resets_at: "2026-12-02T05:00:00.000Z",
      });
    });
  },
);

describe.each(BACKENDS.filter((b) => b.name === "postgres"))("intake on two instances sharing $name", () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    one = await startTestApp({ name: "postgres" });
    two = await startTestApp({ name: "postgres" }, { DATABASE_URL: one.databaseUrl as string });
  });
  afterAll(async () => {
    await two?.stop();
    await one?.stop();
  });

  it("caps: 50 creates at once over both instances against a remaining cap of 10 give exactly 10", async () => {
    const p = await one.provider(undefined, { rate_limit_per_minute: 10_000 });
    await one.call("PUT", rulesPath(p.id), { auth: await one.token(), body: { caps: { day: 10 } } });
    await new Promise((r) => setTimeout(r, 600)); // past the rules cache of either instance
    // Both instances read the key and the new rules first (then cached), so the creates really race.
    await Promise.all([one, two].map((x) => x.call("GET", RULES, { auth: p.key })));
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? one : two).call("POST", LEADS, { auth: p.key, body: fresh() })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(40);
  });

  it("a rule change on one instance is enforced on the other within a second, and its webhook arrives signed", async () => {
    const receiver = await startReceiver();
    try {
      const admin = await one.token();
      const p = await one.provider(undefined, { webhook_url: receiver.url });
      const hook = await j(one.call("GET", `/api/v1/lead_providers/${p.id}/webhook/`, { auth: admin }));
      // The other instance has read (and cached) the old rules.
      expect((await two.call("POST", LEADS, { auth: p.key, body: fresh({ origin_zip: "90210" }) })).status).toBe(201);
      const changed = await one.call("PUT", rulesPath(p.id), { auth: admin, body: { origin_states: ["TX"] } });
      expect(changed.status).toBe(200);
      const started = Date.now();
      let status = 0;
      while (Date.now() - started < 1000) {
        status = (await two.call("POST", LEADS, { auth: p.key, body: fresh({ origin_zip: "90210" }) })).status;
        if (status === 400) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(400);
      const published = await j(two.call("GET", RULES, { auth: p.key }));
      expect(published.origin_states).toEqual(["TX"]);

      await receiver.waitFor((all) => all.some((r) => r.body.includes("intake_rules.changed")), 10_000, "the event");
      const delivery = receiver.received.find((r) => r.body.includes("intake_rules.changed"));
      const event = new Webhook(hook.secret).verify(delivery?.body ?? "", delivery?.headers ?? {}) as Json;
      expect(event).toMatchObject({
        type: "intake_rules.changed",
        data: { intake_rules: { origin_states: ["TX"], version: 1 } },
      });
      const feed = await j(two.call("GET", "/api/v1/public/events/?type=intake_rules.changed", { auth: p.key }));
      expect(feed.results[0].data.intake_rules.origin_states).toEqual(["TX"]);
    } finally {
      await receiver.close();
    }
  });
});
