import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient, grpcLead, rejection } from "./helpers/grpc.ts";

const LEADS = "/api/v1/public/leads/";

// The specification's table (§2.2), written out here rather than read from the code under test.
const SPEC_SHIP_VIA = {
  DOMESTIC: ["OPEN", "ENCLOSED", "DRIVE_AWAY"],
  FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],
} as const;
const VALID_PAIRS = Object.entries(SPEC_SHIP_VIA).flatMap(([o, list]) => list.map((s) => [o, s] as const));
const CROSS_PAIRS = [
  ...SPEC_SHIP_VIA.FOREIGN.map((s) => ["DOMESTIC", s] as const),
  ...SPEC_SHIP_VIA.DOMESTIC.map((s) => ["FOREIGN", s] as const),
];

describe.each(BACKENDS)("Public Lead API over REST ($name)", (backend) => {
  let t: TestApp;
  let key: string;
  const create = (body: unknown, auth = key) => t.call("POST", "/api/v1/public/leads/", { body, auth });
  const errorsOf = async (res: Response) => ((await res.json()) as Json).errors as Json[];

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  it("creates a lead: 201, Location, LEAD state, detected places, readable with GET", async () => {
    const body = leadBody({ company_name: "Doe Motors", note_from_shipper: "Call after 5pm" });
    const res = await create(body);
    expect(res.status).toBe(201);
    const lead = (await res.json()) as Json;
    expect(res.headers.get("location")).toBe(`/api/v1/public/leads/${body.external_id}/`);
    expect(lead).toMatchObject({
      state: "LEAD",
      lead_status: "LEAD",
      external_id: body.external_id,
      origin: { zip: "90210", city: "Beverly Hills", state: "CA", state_id: 5 },
      destination: { zip: "10001", city: "New York", state: "NY", state_id: 33 },
      warnings: [],
    });
    expect(lead.order_number).toMatch(/^LP-[0-9A-HJKMNP-TV-Z]{10}$/);
    expect(Date.parse(lead.created_at)).not.toBeNaN();

    const got = await t.call("GET", res.headers.get("location") as string, { auth: key });
    expect(got.status).toBe(200);
    const read = (await got.json()) as Json;
    expect(read).toMatchObject({
      id: lead.id,
      order_number: lead.order_number,
      email: body.email,
      company_name: "Doe Motors",
      note_from_shipper: "Call after 5pm",
      vehicles: [
        { year: 2021, make: "Toyota", model: "Camry", type: "CAR", tariff: 950, deposit: 150, vehicle_run: null },
      ],
      history: [{ from_state: null, to_state: "LEAD", lead_status: "LEAD" }],
    });
  });

  it.each(VALID_PAIRS)("accepts overseas_type %s with ship_via %s", async (overseas_type, ship_via) => {
    const res = await create(leadBody({ overseas_type, ship_via }));
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ overseas_type, ship_via });
  });

  it.each(CROSS_PAIRS)("rejects overseas_type %s with ship_via %s in a sentence", async (overseas_type, ship_via) => {
    const res = await create(leadBody({ overseas_type, ship_via }));
    expect(res.status).toBe(400);
    const allowed = SPEC_SHIP_VIA[overseas_type as keyof typeof SPEC_SHIP_VIA].join(", ");
    expect(await errorsOf(res)).toEqual([
      {
        field: "ship_via",
        code: "invalid_ship_via",
        message: `ship_via ${ship_via} is not allowed for overseas_type ${overseas_type}; allowed: ${allowed}`,
      },
    ]);
  });

  it.each([
    ["overseas_type", "domestic"],
    ["ship_via", "open"],
    ["overseas_type", "OVERSEAS"],
  ])("is case-sensitive: rejects %s %s", async (field, value) => {
    const res = await create(leadBody({ [field]: value }));
    expect(res.status).toBe(400);
    expect((await errorsOf(res)).map((e) => e.field)).toEqual([field]);
  });

  it.each([
    "external_id",
    "first_name",
    "last_name",
    "email",
    "phone_number",
    "origin_zip",
    "estimated_ship_date",
    "overseas_type",
    "ship_via",
    "vehicles",
  ])("requires %s", async (field) => {
    const body = leadBody();
    delete body[field];
    const res = await create(body);
    expect(res.status).toBe(400);
    const errors = await errorsOf(res);
    expect(errors).toContainEqual({ field, code: "required", message: `${field} is required` });
  });

  it.each(["year", "make", "model", "type", "tariff", "deposit"])("requires vehicles[0].%s", async (field) => {
    const vehicle: Json = { year: 2020, make: "Ford", model: "F-150", type: "PICKUP", tariff: 1, deposit: 0 };
    delete vehicle[field];
    const res = await create(leadBody({ vehicles: [vehicle] }));
    expect(res.status).toBe(400);
    expect((await errorsOf(res)).map((e) => e.field)).toEqual([`vehicles[0].${field}`]);
  });

  const max = new Date().getUTCFullYear() + 2;
  const car = { year: 2020, make: "Ford", model: "Focus", type: "CAR", tariff: 100, deposit: 10 };
  it.each([
    ["no vehicles", { vehicles: [] }, "vehicles", "too_few_items"],
    ["21 vehicles", { vehicles: Array.from({ length: 21 }, () => car) }, "vehicles", "too_many_items"],
    ["year 1899", { vehicles: [{ ...car, year: 1899 }] }, "vehicles[0].year", "out_of_range"],
    [`year ${max + 1}`, { vehicles: [{ ...car, year: max + 1 }] }, "vehicles[0].year", "out_of_range"],
    ["a fractional tariff", { vehicles: [{ ...car, tariff: 10.5 }] }, "vehicles[0].tariff", "invalid_type"],
    ["a tariff as text", { vehicles: [{ ...car, tariff: "100" }] }, "vehicles[0].tariff", "invalid_type"],
    ["a negative deposit", { vehicles: [{ ...car, deposit: -1 }] }, "vehicles[0].deposit", "out_of_range"],
    ["an unknown vehicle type", { vehicles: [{ ...car, type: "SPACESHIP" }] }, "vehicles[0].type", "invalid_enum"],
    ["vehicle_run as text", { vehicles: [{ ...car, vehicle_run: "yes" }] }, "vehicles[0].vehicle_run", "invalid_type"],
    ["a 101-character first_name", { first_name: "x".repeat(101) }, "first_name", "too_long"],
    ["a malformed email", { email: "jane@" }, "email", "invalid_email"],
    ["a 255-character email", { email: `${"a".repeat(243)}@example.com` }, "email", "too_long"],
    ["a 6-digit phone", { phone_number: "555-010" }, "phone_number", "invalid_phone"],
    ["a 16-digit phone", { phone_number: "+1234567890123456" }, "phone_number", "invalid_phone"],
    ["a phone with letters", { phone_number: "555-CALL-NOW" }, "phone_number", "invalid_phone"],
    ["a 2001-character note", { note_from_shipper: "n".repeat(2001) }, "note_from_shipper", "too_long"],
    ["a 129-character external_id", { external_id: "e".repeat(129) }, "external_id", "too_long"],
    ["an external_id with a newline", { external_id: "abc\ndef" }, "external_id", "invalid_characters"],
    ["February 30th", { estimated_ship_date: "2026-02-30" }, "estimated_ship_date", "invalid_date"],
    ["a US-style date", { estimated_ship_date: "12/01/2026" }, "estimated_ship_date", "invalid_date"],
  ])("rejects %s", async (_name, overrides, field, code) => {
    const res = await create(leadBody(overrides));
    expect(res.status).toBe(400);
    const problem = (await res.json()) as Json;
    expect(problem).toMatchObject({ status: 400, code: "validation_error" });
    expect(problem.errors).toEqual([expect.objectContaining({ field, code })]);
  });

  it("accepts the bounds themselves: 20 vehicles, year 1900 and next year + 1; a foreign number with its +", async () => {
    const vehicles = Array.from({ length: 20 }, (_, i) => ({
      ...car,
      year: i % 2 ? 1900 : max,
      tariff: 0,
      deposit: 0,
    }));
    expect((await create(leadBody({ vehicles }))).status).toBe(201);
    const uk = await create(leadBody({ phone_number: "+44 20 7946 0958" }));
    expect(uk.status).toBe(201);
    expect(((await uk.json()) as Json).phone_e164).toBe("+442079460958");
  });

  it("treats null in an optional field as not sent", async () => {
    const body = leadBody({ destination_zip: null, origin_city: null, company_name: null, note_from_shipper: null });
    (body.vehicles as Json[])[0] = { ...car, vehicle_run: null };
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      destination: null,
      company_name: null,
      origin: { city: "Beverly Hills" },
    });
  });

  it("reports every bad field of one request", async () => {
    const res = await create(leadBody({ email: "nope", origin_zip: "00000", vehicles: [{ ...car, year: 1800 }] }));
    expect(res.status).toBe(400);
    expect((await errorsOf(res)).map((e) => e.field).sort()).toEqual(["email", "origin_zip", "vehicles[0].year"]);
  });

  it("normalises ZIP+4 to five digits and detects the place", async () => {
    const res = await create(leadBody({ origin_zip: "10001-6789", destination_zip: "00901" }));
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      origin: { zip: "10001", city: "New York", state: "NY" },
      destination: { zip: "00901", city: "San Juan", state: "PR", state_id: 52 },
    });
  });

  it("keeps a provider-given city and leaves destination null when no destination ZIP is sent", async () => {
    const body = leadBody({ origin_city: "Beverly Hills Flats" });
    delete body.destination_zip;
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      origin: { zip: "90210", city: "Beverly Hills Flats", state: "CA" },
      destination: null,
    });
  });

  it.each([
    ["origin_zip", "00000"],
    ["origin_zip", "99999"],
    ["origin_zip", "1234"],
    ["origin_zip", "ABCDE"],
    ["destination_zip", "00000"],
    ["destination_zip", "123456"],
  ])("rejects %s %s with invalid_zip naming the field", async (field, zip) => {
    const res = await create(leadBody({ [field]: zip }));
    expect(res.status).toBe(400);
    const problem = (await res.json()) as Json;
    expect(problem.code).toBe("invalid_zip");
    expect(problem.errors).toEqual([expect.objectContaining({ field, code: "invalid_zip" })]);
  });

  it("ignores deprecated and unknown fields, lists them in warnings and never stores them", async () => {
    const body = leadBody({ origin_state: 12, destination_state: 7, destination_zipcode: "10001", promo: { a: 1 } });
    (body.vehicles as Json[])[0] = { ...car, color: "red" };
    const res = await create(body);
    expect(res.status).toBe(201);
    const lead = (await res.json()) as Json;
    expect(lead.warnings.map((w: Json) => [w.field, w.code])).toEqual([
      ["origin_state", "deprecated_field"],
      ["destination_state", "deprecated_field"],
      ["destination_zipcode", "unknown_field"],
      ["promo", "unknown_field"],
      ["vehicles[0].color", "unknown_field"],
    ]);
    const read = (await (
      await t.call("GET", `/api/v1/public/leads/${body.external_id}/`, { auth: key })
    ).json()) as Json;
    expect(read).not.toHaveProperty("origin_state");
    expect(read).not.toHaveProperty("promo");
    expect(read.origin.state_id).toBe(5);
  });

  it("caps the warnings at 20 and counts the rest (fast path and Express alike)", async () => {
    const p = await t.provider();
    for (const contentType of ["application/json", "application/json;charset=utf-8"]) {
      const body: Json = leadBody();
      for (let i = 0; i < 5000; i++) body[`u${i}`] = 1;
      const res = await t.call("POST", LEADS, {
        auth: p.key,
        body: JSON.stringify(body),
        headers: { "content-type": contentType },
      });
      expect(res.status, contentType).toBe(201);
      const text = await res.text();
      const created = JSON.parse(text) as Json;
      expect(created.warnings).toHaveLength(20);
      expect(created.warnings_truncated).toBe(4980);
      expect(text.length).toBeLessThan(8000);
    }
    const plain = (await (
      await t.call("POST", LEADS, { auth: p.key, body: { ...leadBody(), extra: 1 } })
    ).json()) as Json;
    expect(plain.warnings).toHaveLength(1);
    expect(plain).not.toHaveProperty("warnings_truncated");
  });

  it("stores SQL-looking and unicode strings verbatim", async () => {
    const sneaky = "Robert'); DROP TABLE leads;-- 🚗 Ünïcødé";
    const body = leadBody({ last_name: sneaky, external_id: `x'; select 1;-- ${Date.now()}` });
    expect((await create(body)).status).toBe(201);
    const read = await t.call("GET", `/api/v1/public/leads/${encodeURIComponent(body.external_id as string)}/`, {
      auth: key,
    });
    expect(((await read.json()) as Json).last_name).toBe(sneaky);
  });

  it("admits exactly one of 100 concurrent creates with the same external_id", async () => {
    const body = leadBody();
    const results = await Promise.all(Array.from({ length: 100 }, () => create(body)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(99);
    const winner = (await results[statuses.indexOf(201)]?.json()) as Json;
    const loser = (await results[statuses.indexOf(400)]?.json()) as Json;
    expect(loser).toMatchObject({
      code: "duplicate_external_id",
      existing_lead: { id: winner.id, order_number: winner.order_number },
    });
    const { rows } = await sqlCount(t, body.external_id as string);
    expect(rows).toBe(1);
  });

  it("refuses . and .. as external_id (REST and gRPC)", async () => {
    const p = await t.provider();
    for (const externalId of [".", ".."]) {
      const res = await t.call("POST", LEADS, { auth: p.key, body: leadBody({ external_id: externalId }) });
      expect(res.status, externalId).toBe(400);
      expect(((await res.json()) as Json).errors[0]).toMatchObject({ field: "external_id", code: "invalid_format" });
      const err = await rejection(
        connectClient(PublicLeadService, t.port, "grpc").createLead(grpcLead({ externalId }), bearer(p.key)),
      );
      expect(err.code, externalId).toBe(Code.InvalidArgument);
    }
    const ok = await t.call("POST", LEADS, { auth: p.key, body: leadBody({ external_id: "a/b?c" }) });
    expect(ok.headers.get("location")).toBe(`${LEADS}a%2Fb%3Fc/`);
  });

  it("keeps providers apart: same external_id allowed for two, another's lead is 404", async () => {
    const other = await t.provider();
    const body = leadBody();
    expect((await create(body)).status).toBe(201);
    expect((await create(body, other.key)).status).toBe(201);
    const mine = leadBody();
    expect((await create(mine)).status).toBe(201);
    const peek = await t.call("GET", `/api/v1/public/leads/${mine.external_id}/`, { auth: other.key });
    expect(peek.status).toBe(404);
    const unknown = await t.call("GET", "/api/v1/public/leads/never-sent/", { auth: other.key });
    expect(unknown.status).toBe(404);
    expect(await peek.json()).toMatchObject({ code: "lead_not_found" });
    expect(((await unknown.json()) as Json).detail).toBe("no lead with external_id never-sent");
  });

  it("answers malformed JSON with 400, an oversized body with 413 and a non-JSON body with 415", async () => {
    const malformed = await create("{not json");
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: "malformed_json" });
    const huge = await create(leadBody({ note_from_shipper: "x".repeat(70 * 1024) }));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ code: "payload_too_large" });
    const text = await t.call("POST", "/api/v1/public/leads/", {
      auth: key,
      headers: { "content-type": "text/plain" },
    });
    expect(text.status).toBe(415);
  });

  it("refuses a missing or malformed key with 401 problem+json", async () => {
    for (const auth of [undefined, "lp_live_short", "not-a-key"]) {
      const res = await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), ...(auth && { auth }) });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "invalid_api_key" });
    }
  });
});

async function sqlCount(t: TestApp, externalId: string): Promise<{ rows: number }> {
  const rows = await t.app.database.db.selectFrom("leads").select("id").where("external_id", "=", externalId).execute();
  return { rows: rows.length };
}
