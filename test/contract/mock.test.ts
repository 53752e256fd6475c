/**
 * `make mock` (a Prism mock of openapi.yaml) as an integrator uses it: every operation answers
 * with its documented example, a client picks an outcome per request with `Prefer`, and the mock
 * accepts and rejects the same lead bodies as the real service, except for the rules a schema
 * cannot express, which the createLead description lists.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type Json, leadBody, startTestApp, type TestApp } from "../helpers/app.ts";
import { BACKENDS } from "../helpers/database.ts";
import { type Prism, SPEC_FILE, startMakeMock } from "../helpers/prism.ts";

const spec = YAML.parse(readFileSync(SPEC_FILE, "utf8")) as Json;
const LEADS = "/api/v1/public/leads/";
const createLead = spec.paths[LEADS].post as Json;
const ref = (node: Json): Json =>
  typeof node.$ref === "string"
    ? ref(
        node.$ref
          .slice(2)
          .split("/")
          .reduce((n: Json, p: string) => n[p.replaceAll("~1", "/")], spec),
      )
    : node;
const firstExample = (media: Json): unknown => (Object.values(media.examples ?? {})[0] as Json | undefined)?.value;

/** Each operation, called with its parameter and request-body examples. */
const OPERATIONS = Object.entries(spec.paths as Record<string, Json>).flatMap(([path, item]) =>
  ["get", "post", "patch", "put", "delete"]
    .filter((m) => item[m])
    .map((method) => {
      const op = item[method] as Json;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(ref);
      const pathOnly = params
        .filter((p) => p.in === "path")
        .reduce((u: string, p) => u.replace(`{${p.name}}`, String(firstExample(p))), path);
      // Required query parameters (e.g. revealApiKey's mode) with their examples.
      const query = params
        .filter((p) => p.in === "query" && p.required)
        .map((p) => `${p.name}=${encodeURIComponent(String(firstExample(p)))}`);
      const url = query.length > 0 ? `${pathOnly}?${query.join("&")}` : pathOnly;
      const body = op.requestBody ? firstExample(ref(op.requestBody).content["application/json"]) : undefined;
      const success = Object.keys(op.responses)
        .filter((s) => /^2\d\d$/.test(s))
        .sort()[0] as string;
      const media = Object.values(ref(op.responses[success]).content ?? {})[0] as Json | undefined;
      const security = (op.security ?? spec.security ?? []) as Json[];
      return {
        id: op.operationId as string,
        method: method.toUpperCase(),
        url,
        body,
        secured: security.length > 0,
        // The provider portal's session is a cookie, not a bearer credential.
        byCookie: security.some((s) => "PortalSession" in s),
        // The drop-in form's publishable key travels in its own header.
        byPublishableKey: security.some((s) => "PublishableKey" in s),
        status: Number(success),
        example: media === undefined ? undefined : firstExample(media),
      };
    }),
);

type Verdict = "accepts" | "rejects";
interface Case {
  readonly name: string;
  readonly body: Json | unknown[];
  readonly verdict: Verdict;
}

const car = { year: 2020, make: "Ford", model: "Focus", type: "CAR", tariff: 100, deposit: 10 };
const lead = (overrides: Json = {}) => leadBody(overrides);
const without = (field: string) => {
  const body = lead();
  delete body[field];
  return body;
};
const withVehicle = (vehicle: Json) => lead({ vehicles: [vehicle] });
const vehicleWithout = (field: string) => {
  const v: Json = { ...car };
  delete v[field];
  return withVehicle(v);
};
// The specification's table (§2.2), written out here rather than read from the code under test.
const SPEC_SHIP_VIA = {
  DOMESTIC: ["OPEN", "ENCLOSED", "DRIVE_AWAY"],
  FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],
} as const;
const VALID_PAIRS = Object.entries(SPEC_SHIP_VIA).flatMap(([o, list]) => list.map((s) => [o, s]));
const CROSS_PAIRS = [
  ...SPEC_SHIP_VIA.FOREIGN.map((s) => ["DOMESTIC", s]),
  ...SPEC_SHIP_VIA.DOMESTIC.map((s) => ["FOREIGN", s]),
];
const REQUIRED = spec.components.schemas.LeadCreateBase.required as string[];
const VEHICLE_REQUIRED = spec.components.schemas.VehicleInput.required as string[];

/**
 * Bodies whose verdict both the schema (hence the mock) and the service can express. Built
 * lazily: each case needs a fresh external_id, since the service (not the mock) rejects a repeat.
 *
 * Left out, because a schema cannot express them (SERVICE_ONLY below shows the mock accepting what
 * the service rejects): a ZIP's existence (needs the ZIP directory), the model year's upper bound
 * (moves with today's date), the phone number's digit count (left to the service; the schema has
 * only a length), an external_id already used (needs the provider's stored leads) and the 64 KiB
 * body limit (a byte size, not a JSON shape).
 */
const PARITY: (() => Case)[] = [
  ...VALID_PAIRS.map(([o, s]) => () => ({
    name: `${o} with ${s}`,
    body: lead({ overseas_type: o, ship_via: s }),
    verdict: "accepts" as const,
  })),
  ...CROSS_PAIRS.map(([o, s]) => () => ({
    name: `${o} with ${s}`,
    body: lead({ overseas_type: o, ship_via: s }),
    verdict: "rejects" as const,
  })),
  ...REQUIRED.map((f) => () => ({ name: `no ${f}`, body: without(f), verdict: "rejects" as const })),
  ...VEHICLE_REQUIRED.map((f) => () => ({
    name: `no vehicles[0].${f}`,
    body: vehicleWithout(f),
    verdict: "rejects" as const,
  })),
  ...(
    [
      ["the required fields only", () => without("destination_zip")],
      ["a ZIP+4 origin", () => lead({ origin_zip: "10001-6789" })],
      ["a Puerto Rico destination", () => lead({ destination_zip: "00901" })],
      [
        "null in every optional field",
        () =>
          lead({
            destination_zip: null,
            origin_city: null,
            destination_city: null,
            company_name: null,
            note_from_shipper: null,
            vehicles: [{ ...car, vehicle_run: null }],
          }),
      ],
      ["an empty company_name and note_from_shipper", () => lead({ company_name: "", note_from_shipper: "" })],
      ["deprecated origin_state and destination_state", () => lead({ origin_state: 5, destination_state: "NY" })],
      [
        "unknown fields in the lead and in a vehicle",
        () => lead({ promo: { a: 1 }, vehicles: [{ ...car, color: "red" }] }),
      ],
      ["20 vehicles", () => lead({ vehicles: Array.from({ length: 20 }, () => car) })],
      ["model year 1900", () => withVehicle({ ...car, year: 1900 })],
      ["tariff and deposit 0", () => withVehicle({ ...car, tariff: 0, deposit: 0, vehicle_run: false })],
      [
        "the last day of next month",
        () => {
          const d = new Date();
          return lead({
            estimated_ship_date: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 2, 0))
              .toISOString()
              .slice(0, 10),
          });
        },
      ],
      ["a 100-character first_name", () => lead({ first_name: "f".repeat(100) })],
      ["a 128-character external_id", () => lead({ external_id: `${Date.now()}`.padEnd(128, "x") })],
      ["an email with a plus tag", () => lead({ email: "jane+leads@mail.example.com" })],
    ] as const
  ).map(([name, body]) => () => ({ name, body: body(), verdict: "accepts" as const })),
  ...(
    [
      ["a JSON array instead of an object", () => [lead()]],
      ["null first_name", () => lead({ first_name: null })],
      ["an empty first_name", () => lead({ first_name: "" })],
      ["a 101-character first_name", () => lead({ first_name: "f".repeat(101) })],
      ["a 101-character last_name", () => lead({ last_name: "l".repeat(101) })],
      ["a 101-character company_name", () => lead({ company_name: "c".repeat(101) })],
      ["an empty origin_city", () => lead({ origin_city: "" })],
      ["a 2001-character note_from_shipper", () => lead({ note_from_shipper: "n".repeat(2001) })],
      ["an empty external_id", () => lead({ external_id: "" })],
      ["a 129-character external_id", () => lead({ external_id: "e".repeat(129) })],
      ["an external_id with a newline", () => lead({ external_id: `a\nb-${Date.now()}` })],
      ["a numeric external_id", () => lead({ external_id: 48213 })],
      ["an email without a domain", () => lead({ email: "jane@" })],
      ["an email without a dot in the domain", () => lead({ email: "jane@localhost" })],
      ["an email with two dots in a row", () => lead({ email: "jane..doe@example.com" })],
      ["a 255-character email", () => lead({ email: `${"a".repeat(243)}@example.com` })],
      ["an empty phone_number", () => lead({ phone_number: "" })],
      ["a 33-character phone_number", () => lead({ phone_number: "1".repeat(33) })],
      ["a numeric phone_number", () => lead({ phone_number: 3105550100 })],
      ["a 4-digit origin_zip", () => lead({ origin_zip: "1234" })],
      ["a 6-digit destination_zip", () => lead({ destination_zip: "123456" })],
      ["letters in origin_zip", () => lead({ origin_zip: "ABCDE" })],
      ["a short ZIP+4", () => lead({ origin_zip: "90210-12" })],
      ["a numeric origin_zip", () => lead({ origin_zip: 90210 })],
      ["a US-style date", () => lead({ estimated_ship_date: "12/01/2026" })],
      ["February 30th", () => lead({ estimated_ship_date: "2026-02-30" })],
      ["February 29th of a common year", () => lead({ estimated_ship_date: "2027-02-29" })],
      ["month 13", () => lead({ estimated_ship_date: "2026-13-01" })],
      ["a date-time instead of a date", () => lead({ estimated_ship_date: "2026-12-15T00:00:00Z" })],
      ["overseas_type in lower case", () => lead({ overseas_type: "domestic" })],
      ["an unknown overseas_type", () => lead({ overseas_type: "OVERSEAS" })],
      ["ship_via in lower case", () => lead({ ship_via: "open" })],
      ["an unknown ship_via", () => lead({ ship_via: "AIR_FREIGHT" })],
      ["an empty vehicles list", () => lead({ vehicles: [] })],
      ["21 vehicles", () => lead({ vehicles: Array.from({ length: 21 }, () => car) })],
      ["vehicles as an object", () => lead({ vehicles: car })],
      ["a vehicle that is a string", () => lead({ vehicles: ["Ford Focus"] })],
      ["model year 1899", () => withVehicle({ ...car, year: 1899 })],
      ["model year as text", () => withVehicle({ ...car, year: "2020" })],
      ["a fractional model year", () => withVehicle({ ...car, year: 2020.5 })],
      ["tariff as text", () => withVehicle({ ...car, tariff: "100" })],
      ["a fractional tariff", () => withVehicle({ ...car, tariff: 10.5 })],
      ["a tariff over 10,000,000", () => withVehicle({ ...car, tariff: 10_000_001 })],
      ["a negative deposit", () => withVehicle({ ...car, deposit: -1 })],
      ["an unknown vehicle type", () => withVehicle({ ...car, type: "SPACESHIP" })],
      ["a vehicle type in lower case", () => withVehicle({ ...car, type: "car" })],
      ["an empty make", () => withVehicle({ ...car, make: "" })],
      ["vehicle_run as text", () => withVehicle({ ...car, vehicle_run: "yes" })],
    ] as const
  ).map(([name, body]) => () => ({ name, body: body(), verdict: "rejects" as const })),
];

/**
 * Rules only the service can check: the mock accepts these bodies and the service rejects them.
 * Each must be listed in the createLead description (`documented` is quoted from it).
 */
const maxYear = new Date().getUTCFullYear() + 2;
const SERVICE_ONLY = [
  {
    rule: "an origin ZIP exists",
    body: () => lead({ origin_zip: "00000" }),
    status: 400,
    code: "invalid_zip",
    documented: "must exist in the US ZIP directory",
  },
  {
    rule: "a destination ZIP exists",
    body: () => lead({ destination_zip: "99999" }),
    status: 400,
    code: "invalid_zip",
    documented: "must exist in the US ZIP directory",
  },
  {
    rule: `a model year is at most next year + 1 (${maxYear})`,
    body: () => withVehicle({ ...car, year: maxYear + 1 }),
    status: 400,
    code: "validation_error",
    documented: "must not exceed next year + 1",
  },
  {
    rule: "a phone number has 7 to 15 digits",
    body: () => lead({ phone_number: "555-010" }),
    status: 400,
    code: "validation_error",
    documented: "7–15 digits",
  },
  {
    rule: "a phone number has no letters",
    body: () => lead({ phone_number: "555-CALL-NOW" }),
    status: 400,
    code: "validation_error",
    documented: "7–15 digits",
  },
  {
    rule: "the body is at most 64 KiB",
    body: () => lead({ padding: "x".repeat(70 * 1024) }),
    status: 413,
    code: "payload_too_large",
    documented: "64 KiB",
  },
] as const;

describe("make mock (Prism mock of openapi.yaml)", () => {
  let mock: Prism;
  const send = (method: string, url: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    fetch(`${mock.url}${url}`, {
      method,
      headers: {
        ...(options.body !== undefined && { "content-type": "application/json" }),
        ...options.headers,
      },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
  const withKey = { authorization: "Bearer lp_live_AnyKeyWorksWithTheMock" };
  const withCookie = { cookie: "__Host-portal=AnySessionWorksWithTheMock" };
  const withPublishableKey = { "x-publishable-key": "lp_pub_live_AnyKeyWorksWithTheMock0000000000" };

  // The service (for the verdict comparison) starts while Prism does.
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    await Promise.all([
      startMakeMock().then((m) => {
        mock = m;
      }),
      startTestApp(BACKENDS[0] ?? { name: "pglite" }, {
        RATE_LIMIT_PER_MINUTE: "100000",
        RATE_LIMIT_PER_DAY: "1000000",
      }).then(async (app) => {
        t = app;
        ({ key } = await app.provider());
      }),
    ]);
  }, 270_000);
  afterAll(async () => {
    await Promise.all([mock?.stop(), t?.stop()]);
  });

  describe("serves the documented examples", () => {
    it.each(OPERATIONS)("$id ($method $url) answers $status with its first example", async (op) => {
      const headers = op.byCookie ? withCookie : op.byPublishableKey ? withPublishableKey : op.secured ? withKey : {};
      const res = await send(op.method, op.url, { body: op.body, headers });
      expect(res.status, `${await res.clone().text()}\n${res.headers.get("sl-violations") ?? ""}`).toBe(op.status);
      if (op.example === undefined) expect(await res.text()).toBe("");
      else expect(await res.json()).toEqual(op.example);
    });

    it("answers a secured operation called without Authorization with 401, as the service does", async () => {
      const lead = await send("POST", LEADS, { body: leadBody() });
      expect(lead.status).toBe(401);
      expect(lead.headers.get("www-authenticate")).toMatch(/^Bearer /);
      expect(await lead.json()).toMatchObject({ status: 401, code: "invalid_api_key" });
      const providers = await send("GET", "/api/v1/lead_providers/");
      expect(providers.status).toBe(401);
      expect(await providers.json()).toMatchObject({ code: "invalid_token" });
    });
  });

  describe("lets a client choose the createLead outcome with Prefer", () => {
    const responses = createLead.responses as Json;
    const outcomes = [
      [201, "created"],
      [201, "created_with_warnings"],
      [201, "test_lead"],
      [400, "validation_error"],
      [400, "invalid_zip"],
      [400, "duplicate_external_id"],
      [401, "invalid_api_key"],
      [401, "expired_api_key"],
      [429, "rate_limited"],
      [429, "auth_failures"],
      [429, "sandbox_rate_limited"],
    ] as const;

    it.each(outcomes)("Prefer: code=%i, example=%s", async (code, example) => {
      const res = await send("POST", LEADS, {
        body: leadBody(),
        headers: { ...withKey, prefer: `code=${code}, example=${example}` },
      });
      expect(res.status).toBe(code);
      const documented = ref(responses[code]);
      const type = Object.keys(documented.content)[0] as string;
      expect(res.headers.get("content-type")).toContain(type);
      expect(await res.json()).toEqual(documented.content[type].examples[example].value);
      for (const [name, header] of Object.entries(documented.headers as Record<string, Json>)) {
        if (ref(header).required) expect(res.headers.get(name), `${name} header`).toBeTruthy();
      }
    });

    it("answers an invalid lead with the documented validation example, whatever the client prefers", async () => {
      const res = await send("POST", LEADS, {
        body: leadBody({ overseas_type: "FOREIGN", ship_via: "DRIVE_AWAY" }),
        headers: { ...withKey, prefer: "code=201" },
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: "validation_error" });
    });
  });

  describe("accepts and rejects the same lead bodies as the service", () => {
    const verdictOf = async (label: string, res: Response): Promise<Verdict> => {
      if (res.status === 201) return "accepts";
      if (res.status === 400) return "rejects";
      throw new Error(`${label} answered ${res.status}: ${await res.text()}`);
    };
    const why = async (mockRes: Response, serviceRes: Response) =>
      `mock violations: ${mockRes.headers.get("sl-violations") ?? "none"}\nservice: ${await serviceRes.clone().text()}`;

    it.each(
      PARITY.map(
        (make) => [`${make().verdict === "accepts" ? "both accept" : "both reject"} ${make().name}`, make] as const,
      ),
    )("%s", async (_name, make) => {
      const c = make();
      const [m, s] = await Promise.all([
        send("POST", LEADS, { body: c.body, headers: withKey }),
        t.call("POST", LEADS, { body: c.body, auth: key }),
      ]);
      const message = await why(m, s);
      expect(await verdictOf("mock", m), message).toBe(c.verdict);
      expect(await verdictOf("service", s), message).toBe(c.verdict);
    });

    it.each(SERVICE_ONLY)(
      "only the service checks that $rule: the mock accepts, the service answers $status $code",
      async ({ body, status, code, documented }) => {
        const b = body();
        const [m, s] = await Promise.all([
          send("POST", LEADS, { body: b, headers: withKey }),
          t.call("POST", LEADS, { body: b, auth: key }),
        ]);
        expect(m.status, "the mock accepts it").toBe(201);
        expect(s.status).toBe(status);
        expect(((await s.json()) as Json).code).toBe(code);
        expect(createLead.description).toContain(documented);
      },
    );

    it("only the service checks that an external_id is new for the provider: the mock accepts, the service answers 400 duplicate_external_id", async () => {
      const b = leadBody();
      expect((await t.call("POST", LEADS, { body: b, auth: key })).status).toBe(201);
      const [m, s] = await Promise.all([
        send("POST", LEADS, { body: b, headers: withKey }),
        t.call("POST", LEADS, { body: b, auth: key }),
      ]);
      expect(m.status, "the mock accepts it").toBe(201);
      expect(s.status).toBe(400);
      expect(((await s.json()) as Json).code).toBe("duplicate_external_id");
      expect(createLead.description).toContain("not be used already");
    });
  });
});
