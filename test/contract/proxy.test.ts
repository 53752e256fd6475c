/**
 * Contract test: the real service runs behind `prism proxy --errors`, and every operation is
 * driven through it on its success and error paths. Prism checks each response (status, headers,
 * body) against openapi.yaml and answers 500 with the violations when the service drifts from it,
 * so any response the spec does not describe fails here.
 *
 * `--validate-request=false`: Prism forwards requests that break the schema instead of answering
 * 422 itself, so the service's own 400s for them are checked too. Prism still answers a request
 * without an Authorization header itself (401), so these tests send a wrong credential instead;
 * the service's answer to a missing header is checked in-process by `validateResponses`, which
 * startTestApp turns on for every test. A body that is not JSON is never sent: Prism hangs on it.
 *
 * Prism accepts any status that an operation's `default` response covers; these tests also
 * require every status to be listed explicitly, and every problem document to look like the
 * documented example with the same `code` (title, members, field-error codes), so a client built
 * against `make mock` meets the same shapes here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "../helpers/app.ts";
import { type Prism, SPEC_FILE, startPrism } from "../helpers/prism.ts";
import { startReceiver } from "../helpers/receiver.ts";

// The most production-like backend available: Postgres and Redis when the environment has them.
const BACKEND = process.env.TEST_DATABASE_URL ? ({ name: "postgres" } as const) : ({ name: "pglite" } as const);
const REDIS: Record<string, string> = process.env.REDIS_URL
  ? { REDIS_URL: process.env.REDIS_URL, REDIS_NAMESPACE: `contract-${process.pid}-${Date.now()}` }
  : {};

/** The proxy's flags; the canary below proves that with them a drift does fail. */
const PROXY_FLAGS = ["--errors", "--validate-request=false"];

const spec = YAML.parse(readFileSync(SPEC_FILE, "utf8")) as Json;
const deref = (node: Json): Json =>
  typeof node.$ref === "string"
    ? deref(
        node.$ref
          .slice(2)
          .split("/")
          .reduce((n: Json, part: string) => n[part.replaceAll("~1", "/").replaceAll("~0", "~")], spec),
      )
    : node;
const OPERATIONS = new Map<string, Json>(
  Object.values(spec.paths as Record<string, Json>).flatMap((item) =>
    Object.values(item)
      .filter((op): op is Json => typeof op === "object" && op !== null && "operationId" in op)
      .map((op) => [op.operationId as string, op]),
  ),
);
/** The field-error codes that FieldError.code documents. */
const FIELD_CODES = [
  ...String(spec.components.schemas.FieldError.properties.code.description).matchAll(/`([a-z_]+)`/g),
].map((m) => m[1]);
const sortedKeys = (o: Json) => Object.keys(o).sort().join(", ");

const LEADS = "/api/v1/public/leads/";
const EVENTS = "/api/v1/public/events/";
const PROVIDERS = "/api/v1/lead_providers/";
const car = { year: 2020, make: "Ford", model: "Focus", type: "CAR", tariff: 100, deposit: 10 };

interface CallOptions {
  readonly body?: unknown;
  readonly auth?: string;
  readonly headers?: Record<string, string>;
}

describe(`the service (${BACKEND.name}${REDIS.REDIS_URL ? ", Redis" : ""}) behind prism proxy --errors answers only what openapi.yaml describes`, () => {
  let t: TestApp;
  let prism: Prism;
  let canary: Prism;
  let canaryDir: string;
  /** The service's clock: the rate-limit tests count in a minute of their own. */
  const clock = minuteClock();
  let admin: string;
  let agent: string;
  let provider: { id: number; key: string };

  beforeAll(async () => {
    t = await startTestApp(
      BACKEND,
      {
        RATE_LIMIT_PER_MINUTE: "100000",
        RATE_LIMIT_PER_DAY: "1000000",
        // The last test exhausts it; the others stay well below (about 20 failures).
        AUTH_FAILURES_PER_MINUTE: "30",
        ...REDIS,
      },
      { now: clock },
    );
    [admin, agent, provider] = await Promise.all([t.token(), t.token({ position: "AGENT" }), t.provider()]);
    // The canary proxies the same service with a copy of the spec in which /healthz drifts.
    canaryDir = mkdtempSync(join(tmpdir(), "contract-canary-"));
    const drifted = readFileSync(SPEC_FILE, "utf8").replace(/(\n {4}Health:\n(?:.*\n)*? {10}enum: )\[ok\]/, "$1[fine]");
    expect(drifted).toContain("enum: [fine]");
    writeFileSync(join(canaryDir, "openapi.yaml"), drifted);
    [prism, canary] = await Promise.all([
      startPrism(["proxy", SPEC_FILE, t.url, ...PROXY_FLAGS]),
      startPrism(["proxy", join(canaryDir, "openapi.yaml"), t.url, ...PROXY_FLAGS]),
    ]);
  }, 390_000);
  afterAll(async () => {
    await Promise.all([prism?.stop(), canary?.stop()]);
    if (canaryDir) rmSync(canaryDir, { recursive: true, force: true });
    await t?.stop();
  });

  const call = (method: string, path: string, options: CallOptions = {}) =>
    fetch(`${prism.url}${path}`, {
      method,
      headers: {
        ...(options.body !== undefined && { "content-type": "application/json" }),
        ...(options.auth && { authorization: `Bearer ${options.auth}` }),
        ...options.headers,
      },
      ...(options.body !== undefined && {
        body: typeof options.body === "string" ? options.body : JSON.stringify(options.body),
      }),
    });

  /**
   * Expects `status` (and the problem `code`) through the proxy from the operation named first in
   * `label`. A 500 from Prism means the service's response broke the contract; the message then
   * carries Prism's violations.
   */
  const expectAnswer = async (label: string, res: Response, status: number, code?: string): Promise<Json> => {
    const text = await res.text();
    let body: Json = {};
    try {
      body = JSON.parse(text) as Json;
    } catch {
      // not JSON: reported below
    }
    const prismSays = String(body.type ?? "").startsWith("https://stoplight.io/prism/")
      ? `Prism: ${body.title}: ${body.detail}\n${JSON.stringify(body.validation ?? [], null, 2)}`
      : `the service answered: ${text.slice(0, 2000)}`;
    expect(res.status, `${label}: expected ${status}, got ${res.status}\n${prismSays}`).toBe(status);
    expect(res.headers.get("sl-violations"), `${label}: Prism reports violations`).toBeNull();
    if (code !== undefined) expect(body.code, `${label}: problem code`).toBe(code);

    const operationId = label.split(" ")[0] as string;
    const op = OPERATIONS.get(operationId);
    expect(op, `${operationId} is an operation of openapi.yaml`).toBeDefined();
    const documented = op?.responses?.[String(status)];
    expect(
      documented,
      `${label}: ${status} is listed in the operation's responses (not only as default)`,
    ).toBeDefined();
    if (res.headers.get("content-type")?.startsWith("application/problem+json")) {
      const examples = Object.values(
        (deref(documented).content?.["application/problem+json"]?.examples ?? {}) as Record<string, Json>,
      ).map((e) => e.value as Json);
      const sameCode = examples.filter((e) => e.code === body.code);
      expect(sameCode.length, `${label}: a documented ${status} example with code ${body.code}`).toBeGreaterThan(0);
      const alike = sameCode.filter(
        (e) => e.type === body.type && e.title === body.title && sortedKeys(e) === sortedKeys(body),
      );
      expect(
        alike.length,
        `${label}: the ${body.code} example's type, title and members match the answer\n` +
          `answer:   ${body.type} | ${body.title} | ${sortedKeys(body)}\n` +
          sameCode.map((e) => `example:  ${e.type} | ${e.title} | ${sortedKeys(e)}`).join("\n"),
      ).toBeGreaterThan(0);
      for (const e of (body.errors ?? []) as Json[]) {
        expect(FIELD_CODES, `${label}: field-error code ${e.code} (${e.field}) is documented`).toContain(e.code);
      }
    }
    return body;
  };

  describe("Public Lead API", () => {
    it("createLead answers 201 with Location, and getLead reads the lead back with 200", async () => {
      const body = leadBody({ company_name: "Doe Motors", destination_zip: "00901" });
      const created = await call("POST", LEADS, { body, auth: provider.key });
      const location = created.headers.get("location");
      expect(await expectAnswer("createLead", created, 201)).toMatchObject({ state: "LEAD", warnings: [] });
      expect(location).toBe(`${LEADS}${body.external_id}/`);
      const read = await expectAnswer("getLead", await call("GET", location as string, { auth: provider.key }), 200);
      expect(read).toMatchObject({ external_id: body.external_id, destination: { state: "PR" } });
    });

    it("listLeads answers 200 with a page and a next token, and 400 for a token it did not issue", async () => {
      for (let i = 0; i < 2; i++) await call("POST", LEADS, { body: leadBody(), auth: provider.key });
      const page = await expectAnswer(
        "listLeads",
        await call("GET", `${LEADS}?page_size=1`, { auth: provider.key }),
        200,
      );
      expect(page.results).toHaveLength(1);
      expect(page.next_page_token).toEqual(expect.any(String));
      const bad = await call("GET", `${LEADS}?page_token=bm9wZQ`, { auth: provider.key });
      await expectAnswer("listLeads", bad, 400, "validation_error");
    });

    it("listEvents answers 200 with the provider's lead.created events, and 400 for an unknown type", async () => {
      await call("POST", LEADS, { body: leadBody(), auth: provider.key });
      const page = await expectAnswer(
        "listEvents",
        await call("GET", `${EVENTS}?page_size=1`, { auth: provider.key }),
        200,
      );
      expect(page.results[0]).toMatchObject({ type: "lead.created" });
      await expectAnswer(
        "listEvents",
        await call("GET", `${EVENTS}?type=nope`, { auth: provider.key }),
        400,
        "validation_error",
      );
    });

    it("the request log and stats answer what the contract describes, as the provider and as an administrator", async () => {
      const refused = await call("POST", LEADS, { body: leadBody({ origin_zip: "00000" }), auth: provider.key });
      const problem = await expectAnswer("createLead", refused, 400, "invalid_zip");
      const one = `/api/v1/public/requests/${problem.request_id}/`;
      let entry = await call("GET", one, { auth: provider.key });
      for (let i = 0; i < 100 && entry.status === 404; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        entry = await call("GET", one, { auth: provider.key });
      }
      expect(await expectAnswer("getRequest", entry, 200)).toMatchObject({ code: "invalid_zip", status: 400 });
      await expectAnswer(
        "getRequest",
        await call("GET", "/api/v1/public/requests/no-such-request/", { auth: provider.key }),
        404,
        "request_not_found",
      );
      const page = await expectAnswer(
        "listRequests",
        await call("GET", "/api/v1/public/requests/?outcome=rejected&page_size=1", { auth: provider.key }),
        200,
      );
      expect(page.results).toHaveLength(1);
      await expectAnswer(
        "listRequests",
        await call("GET", "/api/v1/public/requests/?outcome=maybe", { auth: provider.key }),
        400,
        "validation_error",
      );
      const stats = await expectAnswer(
        "getStats",
        await call("GET", "/api/v1/public/stats/?granularity=week&group_by=sub_id", { auth: provider.key }),
        200,
      );
      expect(stats.totals.submitted).toBeGreaterThan(0);
      const csv = await call("GET", "/api/v1/public/stats/", { auth: provider.key, headers: { accept: "text/csv" } });
      expect(csv.status).toBe(200);
      expect(csv.headers.get("sl-violations")).toBeNull();
      expect((await csv.text()).split("\r\n")[0]).toMatch(/^period,submitted,accepted,rejected,/);
      await expectAnswer(
        "getStats",
        await call("GET", "/api/v1/public/stats/?from=2026-02-30", { auth: provider.key }),
        400,
        "validation_error",
      );

      await expectAnswer(
        "searchRequests",
        await call("GET", `/api/v1/admin/requests/?request_id=${problem.request_id}`, { auth: admin }),
        200,
      );
      await expectAnswer(
        "getAdminRequest",
        await call("GET", `/api/v1/admin/requests/${problem.request_id}/`, { auth: admin }),
        200,
      );
      await expectAnswer(
        "getAdminRequest",
        await call("GET", "/api/v1/admin/requests/no-such-request/", { auth: admin }),
        404,
        "request_not_found",
      );
      await expectAnswer(
        "getAdminStats",
        await call("GET", "/api/v1/admin/stats/?group_by=provider", { auth: admin }),
        200,
      );
      for (const [operationId, path] of [
        ["searchRequests", "/api/v1/admin/requests/"],
        ["getAdminStats", "/api/v1/admin/stats/"],
      ] as const) {
        await expectAnswer(operationId, await call("GET", path, { auth: agent }), 403, "forbidden");
      }
    });

    it("createLead answers 201 with warnings for unknown and deprecated fields and nulls in optional ones", async () => {
      const body = leadBody({
        origin_state: 5,
        destination_zipcode: "10001",
        destination_zip: null,
        note_from_shipper: null,
        vehicles: [{ ...car, vehicle_run: null, color: "red" }],
      });
      const lead = await expectAnswer("createLead", await call("POST", LEADS, { body, auth: provider.key }), 201);
      expect(lead.warnings.map((w: Json) => w.code)).toEqual(["deprecated_field", "unknown_field", "unknown_field"]);
      expect(lead.destination).toBeNull();
    });

    it.each([
      ["a cross pair and a missing email (schema)", { overseas_type: "FOREIGN", ship_via: "OPEN", email: undefined }],
      [
        "a fractional tariff and a bad date (schema)",
        { vehicles: [{ ...car, tariff: 1.5 }], estimated_ship_date: "2026-02-30" },
      ],
      ["a phone number with letters (service rule)", { phone_number: "555-CALL-NOW" }],
      [
        "a model year after next year + 1 (service rule)",
        { vehicles: [{ ...car, year: new Date().getUTCFullYear() + 3 }] },
      ],
    ])("createLead answers 400 validation_error for %s", async (_name, overrides) => {
      const res = await call("POST", LEADS, { body: leadBody(overrides), auth: provider.key });
      const problem = await expectAnswer("createLead", res, 400, "validation_error");
      expect(problem.errors.length).toBeGreaterThan(0);
    });

    it("createLead answers 400 invalid_zip for a ZIP that does not exist", async () => {
      const res = await call("POST", LEADS, { body: leadBody({ destination_zip: "00000" }), auth: provider.key });
      await expectAnswer("createLead", res, 400, "invalid_zip");
    });

    it("createLead answers 400 duplicate_external_id naming the existing lead", async () => {
      const body = leadBody();
      const first = await expectAnswer("createLead", await call("POST", LEADS, { body, auth: provider.key }), 201);
      const again = await call("POST", LEADS, { body, auth: provider.key });
      const problem = await expectAnswer("createLead repeat", again, 400, "duplicate_external_id");
      expect(problem.existing_lead).toEqual({ id: first.id, order_number: first.order_number });
    });

    it("createLead and getLead answer 401 for a malformed, an unknown and a replaced key", async () => {
      const other = await t.provider();
      const replaced = other.key;
      await expectAnswer(
        "generateApiKey",
        await call("POST", `${PROVIDERS}${other.id}/generate_api_key/`, { auth: admin }),
        201,
      );
      for (const key of ["not-a-key", `lp_live_${"A".repeat(49)}`, replaced]) {
        await expectAnswer(
          "createLead",
          await call("POST", LEADS, { body: leadBody(), auth: key }),
          401,
          "invalid_api_key",
        );
        await expectAnswer("getLead", await call("GET", `${LEADS}x/`, { auth: key }), 401, "invalid_api_key");
      }
    });

    it("createLead answers 413 for a body over 64 KiB and 415 for a body that is not JSON", async () => {
      const huge = leadBody({ padding: "x".repeat(70 * 1024) });
      await expectAnswer(
        "createLead",
        await call("POST", LEADS, { body: huge, auth: provider.key }),
        413,
        "payload_too_large",
      );
      const text = await call("POST", LEADS, {
        body: "external_id=1",
        auth: provider.key,
        headers: { "content-type": "text/plain" },
      });
      await expectAnswer("createLead", text, 415, "unsupported_media_type");
    });

    it("createLead and getLead answer 429 rate_limited with Retry-After once the provider's minute is used", async () => {
      const limited = await t.provider(undefined, { rate_limit_per_minute: 1 });
      // A minute of the service's clock of its own: the first create is served, the next refused.
      clock.nextMinute();
      await expectAnswer("createLead", await call("POST", LEADS, { body: leadBody(), auth: limited.key }), 201);
      const create = await call("POST", LEADS, { body: leadBody(), auth: limited.key });
      const problem = await expectAnswer("createLead", create, 429, "rate_limited");
      expect(Number(create.headers.get("retry-after"))).toBe(problem.retry_after);
      const get = await call("GET", `${LEADS}none/`, { auth: limited.key });
      await expectAnswer("getLead", get, 429, "rate_limited");
    });

    it("getLead answers 404 lead_not_found for an unknown external_id and 400 for one of 129 characters", async () => {
      await expectAnswer(
        "getLead",
        await call("GET", `${LEADS}never-sent/`, { auth: provider.key }),
        404,
        "lead_not_found",
      );
      const long = await call("GET", `${LEADS}${"e".repeat(129)}/`, { auth: provider.key });
      await expectAnswer("getLead", long, 400, "validation_error");
    });
  });

  describe("Management API and states", () => {
    it("createProvider answers 201 with every field, getProvider 200 without and then with a key", async () => {
      const created = await expectAnswer(
        "createProvider",
        await call("POST", `${PROVIDERS}create/`, {
          auth: admin,
          body: {
            name: `Acme ${Date.now()}`,
            contact_email: "ops@acme.example.com",
            is_active: true,
            rate_limit_per_minute: 120,
            rate_limit_per_day: 5000,
            webhook_url: "https://hooks.acme.example.com/leads",
            notes: "Contract renewed yearly.",
          },
        }),
        201,
      );
      const path = `${PROVIDERS}${created.id}/`;
      expect(await expectAnswer("getProvider", await call("GET", path, { auth: admin }), 200)).toMatchObject({
        api_key: null,
        api_key_value: null,
      });
      await expectAnswer("generateApiKey", await call("POST", `${path}generate_api_key/`, { auth: admin }), 201);
      const withKey = await expectAnswer("getProvider", await call("GET", path, { auth: admin }), 200);
      expect(withKey.api_key_value).toMatch(/^lp_live_/);
      expect(withKey.api_key.masked).toMatch(/^lp_live_/);
    });

    it("test mode: a test key, its leads (livemode false), the reserved 429, revokeApiKey and purgeTestData", async () => {
      const created = await expectAnswer(
        "createProvider",
        await call("POST", `${PROVIDERS}create/`, {
          auth: admin,
          body: { name: `Sandboxed ${Date.now()}`, rate_limit_per_minute: 1000 },
        }),
        201,
      );
      const path = `${PROVIDERS}${created.id}/`;
      const issued = await expectAnswer(
        "generateApiKey",
        await call("POST", `${path}generate_api_key/`, { auth: admin, body: { mode: "test" } }),
        201,
      );
      expect(issued).toMatchObject({ mode: "test", api_key: expect.stringMatching(/^lp_test_/) });
      const lead = await expectAnswer(
        "createLead",
        await call("POST", "/api/v1/public/leads/", {
          auth: issued.api_key,
          body: { ...leadBody(), note_from_shipper: "sandbox:quote" },
        }),
        201,
      );
      expect(lead.livemode).toBe(false);
      await expectAnswer(
        "getLead",
        await call("GET", `/api/v1/public/leads/${lead.external_id}/`, { auth: issued.api_key }),
        200,
      );
      await expectAnswer(
        "createLead",
        await call("POST", "/api/v1/public/leads/", {
          auth: issued.api_key,
          body: { ...leadBody(), note_from_shipper: "sandbox:rate_limited" },
        }),
        429,
        "rate_limited",
      );
      const detail = await expectAnswer("getProvider", await call("GET", path, { auth: admin }), 200);
      expect(detail.test_api_key_value).toBe(issued.api_key);
      await expectAnswer("purgeTestData", await call("POST", `${path}purge_test_data/`, { auth: admin }), 200);
      await expectAnswer(
        "revokeApiKey",
        await call("POST", `${path}revoke_api_key/`, { auth: admin, body: { mode: "test" } }),
        200,
      );
      await expectAnswer(
        "revokeApiKey",
        await call("POST", `${path}revoke_api_key/`, { auth: admin, body: {} }),
        400,
        "validation_error",
      );
    });

    it("the webhook operations answer what the contract describes", async () => {
      const receiver = await startReceiver();
      try {
        const created = await expectAnswer(
          "createProvider",
          await call("POST", `${PROVIDERS}create/`, {
            auth: admin,
            body: { name: `Hooked ${Date.now()}`, webhook_url: receiver.url },
          }),
          201,
        );
        const path = `${PROVIDERS}${created.id}/`;
        const endpoint = await expectAnswer("getWebhook", await call("GET", `${path}webhook/`, { auth: admin }), 200);
        expect(endpoint.secret).toMatch(/^whsec_/);
        await expectAnswer(
          "rotateWebhookSecret",
          await call("POST", `${path}webhook/rotate_secret/`, { auth: admin, body: { overlap_seconds: 60 } }),
          200,
        );
        await expectAnswer(
          "rotateWebhookSecret",
          await call("POST", `${path}webhook/rotate_secret/`, { auth: admin, body: { overlap_seconds: -1 } }),
          400,
          "validation_error",
        );
        const test = await expectAnswer(
          "sendWebhookTest",
          await call("POST", `${path}webhook/test/`, { auth: admin }),
          200,
        );
        expect(test).toMatchObject({ delivered: true, status_code: 204 });
        await expectAnswer(
          "listWebhookDeliveries",
          await call("GET", `${path}webhook_deliveries/?page_size=5`, { auth: admin }),
          200,
        );
        await expectAnswer(
          "replayWebhookDelivery",
          await call("POST", `${path}webhook_deliveries/999999/replay/`, { auth: admin }),
          404,
          "delivery_not_found",
        );
        await expectAnswer(
          "getWebhookDelivery",
          await call("GET", `${path}webhook_deliveries/999999/`, { auth: admin }),
          404,
          "delivery_not_found",
        );
        const bare = await expectAnswer(
          "createProvider",
          await call("POST", `${PROVIDERS}create/`, { auth: admin, body: { name: `Unhooked ${Date.now()}` } }),
          201,
        );
        await expectAnswer(
          "sendWebhookTest",
          await call("POST", `${PROVIDERS}${bare.id}/webhook/test/`, { auth: admin }),
          409,
          "webhook_not_configured",
        );
        await expectAnswer(
          "getWebhook",
          await call("GET", `${PROVIDERS}${bare.id}/webhook/`, { auth: agent }),
          403,
          "forbidden",
        );
      } finally {
        await receiver.close();
      }
    });

    it("createProvider answers 400 validation_error, 400 duplicate_provider_name and 415", async () => {
      const name = `Taken ${Date.now()}`;
      await expectAnswer(
        "createProvider",
        await call("POST", `${PROVIDERS}create/`, { auth: admin, body: { name } }),
        201,
      );
      const invalid = await call("POST", `${PROVIDERS}create/`, {
        auth: admin,
        body: { name: "", webhook_url: "ftp://x", rate_limit: 5 },
      });
      await expectAnswer("createProvider", invalid, 400, "validation_error");
      const taken = await call("POST", `${PROVIDERS}create/`, { auth: admin, body: { name: name.toUpperCase() } });
      await expectAnswer("createProvider", taken, 400, "duplicate_provider_name");
      const text = await call("POST", `${PROVIDERS}create/`, {
        auth: admin,
        body: "name=x",
        headers: { "content-type": "text/plain" },
      });
      await expectAnswer("createProvider", text, 415, "unsupported_media_type");
    });

    it("listProviders answers 200 with page links and filters, and 400 for bad query parameters", async () => {
      await t.provider(`Searchable ${Date.now()}`);
      const page = await expectAnswer(
        "listProviders",
        await call("GET", `${PROVIDERS}?page=2&page_size=1`, { auth: admin }),
        200,
      );
      expect(page.count).toBeGreaterThan(2);
      expect(page.results).toHaveLength(1);
      expect(page.next).toContain("page=3");
      expect(page.previous).toContain("page=1");
      const filtered = await call("GET", `${PROVIDERS}?search=searchable&is_active=true`, { auth: admin });
      expect((await expectAnswer("listProviders", filtered, 200)).results.length).toBeGreaterThan(0);
      for (const query of ["page_size=500", "page=0", "is_active=maybe", "colour=red"]) {
        await expectAnswer(
          `listProviders ?${query}`,
          await call("GET", `${PROVIDERS}?${query}`, { auth: admin }),
          400,
          "validation_error",
        );
      }
    });

    it("updateProvider answers 200 for JSON and merge-patch, 400 for a taken name or an empty patch, 404", async () => {
      const other = await t.provider();
      const mine = await t.provider();
      const path = `${PROVIDERS}${mine.id}/`;
      const raised = await call("PATCH", path, { auth: admin, body: { rate_limit_per_minute: 120, notes: "vip" } });
      expect(await expectAnswer("updateProvider", raised, 200)).toMatchObject({ rate_limit_per_minute: 120 });
      const cleared = await call("PATCH", path, {
        auth: admin,
        body: { notes: null, is_active: false },
        headers: { "content-type": "application/merge-patch+json" },
      });
      expect(await expectAnswer("updateProvider", cleared, 200)).toMatchObject({ notes: null, is_active: false });
      const otherName = ((await (await t.call("GET", `${PROVIDERS}${other.id}/`, { auth: admin })).json()) as Json)
        .name;
      await expectAnswer(
        "updateProvider",
        await call("PATCH", path, { auth: admin, body: { name: otherName } }),
        400,
        "duplicate_provider_name",
      );
      await expectAnswer(
        "updateProvider",
        await call("PATCH", path, { auth: admin, body: {} }),
        400,
        "validation_error",
      );
      await expectAnswer(
        "updateProvider",
        await call("PATCH", `${PROVIDERS}999999/`, { auth: admin, body: { notes: "x" } }),
        404,
        "provider_not_found",
      );
    });

    it("getProvider answers 404 for an unknown id and 400 for a non-numeric one", async () => {
      await expectAnswer(
        "getProvider",
        await call("GET", `${PROVIDERS}999999/`, { auth: admin }),
        404,
        "provider_not_found",
      );
      await expectAnswer(
        "getProvider",
        await call("GET", `${PROVIDERS}abc/`, { auth: admin }),
        400,
        "validation_error",
      );
    });

    it("generateApiKey answers 201 for a roll with grace and expiry, 400 for a past expiry, 404", async () => {
      const p = await t.provider();
      const path = `${PROVIDERS}${p.id}/generate_api_key/`;
      const expires = new Date(Date.now() + 86_400_000).toISOString();
      const rolled = await call("POST", path, {
        auth: admin,
        body: { expires_at: expires, previous_key_grace_seconds: 60 },
      });
      const key = await expectAnswer("generateApiKey", rolled, 201);
      expect(key.previous_key_expires_at).not.toBeNull();
      const past = await call("POST", path, { auth: admin, body: { expires_at: "2020-01-01T00:00:00Z" } });
      await expectAnswer("generateApiKey", past, 400, "validation_error");
      await expectAnswer(
        "generateApiKey",
        await call("POST", `${PROVIDERS}999999/generate_api_key/`, { auth: admin }),
        404,
        "provider_not_found",
      );
    });

    it("every management operation answers 401 without a valid JWT and 403 without the admin position", async () => {
      const operations: [string, string, string, unknown][] = [
        ["listProviders", "GET", PROVIDERS, undefined],
        ["createProvider", "POST", `${PROVIDERS}create/`, { name: "Nobody" }],
        ["getProvider", "GET", `${PROVIDERS}${provider.id}/`, undefined],
        ["updateProvider", "PATCH", `${PROVIDERS}${provider.id}/`, { notes: "x" }],
        ["generateApiKey", "POST", `${PROVIDERS}${provider.id}/generate_api_key/`, undefined],
      ];
      for (const [operationId, method, path, body] of operations) {
        const label = `${operationId} ${method} ${path}`;
        for (const auth of ["not.a.jwt", provider.key]) {
          await expectAnswer(label, await call(method, path, { auth, body }), 401, "invalid_token");
        }
        await expectAnswer(label, await call(method, path, { auth: agent, body }), 403, "forbidden");
      }
    });

    it("listStates answers 200 for any valid JWT and 401 for a provider API key", async () => {
      for (const auth of [admin, agent]) {
        const states = (await expectAnswer(
          "listStates",
          await call("GET", "/api/v1/common/states/", { auth }),
          200,
        )) as unknown as Json[];
        expect(states.length).toBeGreaterThanOrEqual(52);
      }
      await expectAnswer(
        "listStates",
        await call("GET", "/api/v1/common/states/", { auth: provider.key }),
        401,
        "invalid_token",
      );
    });
  });

  it("fails a response that drifts from the spec: the canary's /healthz answer breaks its copy", async () => {
    const res = await fetch(`${canary.url}/healthz`);
    expect(res.status).toBe(500);
    const problem = (await res.json()) as Json;
    expect(problem.type).toBe("https://stoplight.io/prism/errors#VIOLATIONS");
    expect(problem.validation).toEqual([
      expect.objectContaining({ location: ["response", "body", "status"], code: "enum", severity: "Error" }),
    ]);
  });

  describe("operations", () => {
    it("healthz and readyz answer 200", async () => {
      expect(await expectAnswer("healthz", await call("GET", "/healthz"), 200)).toEqual({ status: "ok" });
      const ready = await expectAnswer("readyz", await call("GET", "/readyz"), 200);
      expect(ready).toMatchObject({ status: "ready", checks: { database: { ok: true } } });
      if (REDIS.REDIS_URL) expect(ready.checks.redis).toEqual({ ok: true });
    });
  });
  // Runs last: afterwards this address is refused until the minute ends.
  describe("once this address has failed authentication too often", () => {
    it("every secured operation answers 429 rate_limited with Retry-After to a failed credential, never to a valid one", async () => {
      // The failures are counted per minute of the service's clock: in a minute of its own, 30
      // failed authentications are answered 401 and the next failed credential is refused.
      const block = async () => {
        clock.nextMinute();
        for (let i = 0; i < 30; i += 1) {
          const res = await call("GET", PROVIDERS, { auth: "not.a.jwt" });
          await expectAnswer("listProviders", res, 401, "invalid_token");
        }
      };
      const badKey = "lp_live_guessed";
      const operations: [string, string, string, unknown, string, string, number][] = [
        ["createLead", "POST", LEADS, leadBody(), badKey, provider.key, 201],
        ["getLead", "GET", `${LEADS}anything/`, undefined, badKey, provider.key, 404],
        ["listProviders", "GET", PROVIDERS, undefined, "not.a.jwt", admin, 200],
        ["createProvider", "POST", `${PROVIDERS}create/`, { name: `Late ${Date.now()}` }, "not.a.jwt", admin, 201],
        ["getProvider", "GET", `${PROVIDERS}${provider.id}/`, undefined, "not.a.jwt", admin, 200],
        ["updateProvider", "PATCH", `${PROVIDERS}${provider.id}/`, { notes: "late" }, "not.a.jwt", admin, 200],
        ["generateApiKey", "POST", `${PROVIDERS}999999/generate_api_key/`, undefined, "not.a.jwt", admin, 404],
        ["listStates", "GET", "/api/v1/common/states/", undefined, "not.a.jwt", agent, 200],
      ];
      for (const [operationId, method, path, body, failed, valid, status] of operations) {
        await block();
        const res = await call(method, path, { body, auth: failed });
        const problem = await expectAnswer(`${operationId} ${method} ${path}`, res, 429, "rate_limited");
        expect(problem.window).toBe("minute");
        // The same address with valid credentials is served as usual.
        await expectAnswer(`${operationId} ${method} ${path}`, await call(method, path, { body, auth: valid }), status);
        expect(Number(res.headers.get("retry-after"))).toBe(problem.retry_after);
      }
    });
  });
});
