/**
 * Contract test of the Money operations, as test/contract/proxy.test.ts does for the others: the
 * real service behind `prism proxy --errors`, every operation driven on its success and error
 * paths. Prism fails any response openapi.yaml does not describe (status, headers, body), and each
 * problem must look like the documented example with its code.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type Json, startTestApp, type TestApp } from "../helpers/app.ts";
import { freshLead, ISSUE_TERMS } from "../helpers/money.ts";
import { type Prism, SPEC_FILE, startPrism } from "../helpers/prism.ts";

const BACKEND = process.env.TEST_DATABASE_URL ? ({ name: "postgres" } as const) : ({ name: "pglite" } as const);

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
const FIELD_CODES = [
  ...String(spec.components.schemas.FieldError.properties.code.description).matchAll(/`([a-z_]+)`/g),
].map((m) => m[1]);
const sortedKeys = (o: Json) => Object.keys(o).sort().join(", ");

describe(`Money operations of the service (${BACKEND.name}) behind prism proxy --errors`, () => {
  let t: TestApp;
  let prism: Prism;
  let admin: string;
  let p: { id: number; key: string };

  beforeAll(async () => {
    t = await startTestApp(BACKEND, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "1000000" });
    [admin, p] = await Promise.all([t.token(), t.provider()]);
    prism = await startPrism(["proxy", SPEC_FILE, t.url, "--errors", "--validate-request=false"]);
  });
  afterAll(async () => {
    await prism?.stop();
    await t?.stop();
  });

  const call = (method: string, path: string, options: { body?: unknown; auth?: string; headers?: Json } = {}) =>
    fetch(`${prism.url}${path}`, {
      method,
      headers: {
        ...(options.body !== undefined && { "content-type": "application/json" }),
        ...(options.auth && { authorization: `Bearer ${options.auth}` }),
        ...options.headers,
      },
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });

  /** `status` (and `code`) from the operation named first in `label`, as the contract documents it. */
  const expectAnswer = async (label: string, res: Response, status: number, code?: string): Promise<Json> => {
    const type = res.headers.get("content-type") ?? "";
    const text = type.startsWith("application/pdf") ? "" : await res.text();
    let body: Json = {};
    try {
      body = JSON.parse(text) as Json;
    } catch {
      // CSV, PDF or an empty 304
    }
    const prismSays = String(body.type ?? "").startsWith("https://stoplight.io/prism/")
      ? `Prism: ${body.title}: ${body.detail}\n${JSON.stringify(body.validation ?? [], null, 2)}`
      : `the service answered: ${text.slice(0, 2000)}`;
    expect(res.status, `${label}: expected ${status}, got ${res.status}\n${prismSays}`).toBe(status);
    expect(res.headers.get("sl-violations"), `${label}: Prism reports violations`).toBeNull();
    if (code !== undefined) expect(body.code, `${label}: problem code`).toBe(code);
    const op = OPERATIONS.get(label.split(" ")[0] as string);
    const documented = op?.responses?.[String(status)];
    expect(documented, `${label}: ${status} is listed in the operation's responses`).toBeDefined();
    if (type.startsWith("application/problem+json")) {
      const examples = Object.values(
        (deref(documented).content?.["application/problem+json"]?.examples ?? {}) as Record<string, Json>,
      ).map((e) => e.value as Json);
      const alike = examples.filter(
        (e) =>
          e.code === body.code && e.type === body.type && e.title === body.title && sortedKeys(e) === sortedKeys(body),
      );
      expect(alike.length, `${label}: a documented ${status} example like ${JSON.stringify(body)}`).toBeGreaterThan(0);
      for (const e of (body.errors ?? []) as Json[]) expect(FIELD_CODES, `${label}: ${e.code}`).toContain(e.code);
    }
    return body;
  };

  it("terms: set, read, published with an ETag and 304, quoted; bad terms and bad leads named", async () => {
    const terms = `/api/v1/lead_providers/${p.id}/terms/`;
    await expectAnswer(
      "setTerms",
      await call("PUT", terms, { auth: admin, body: { ...ISSUE_TERMS, settlement_days: 0 } }),
      200,
    );
    await expectAnswer(
      "setTerms",
      await call("PUT", terms, {
        auth: admin,
        body: { price_rules: [{ when: { origin_states: ["XX"], colour: "red" }, price_cents: 19.99 }] },
      }),
      400,
      "validation_error",
    );
    await expectAnswer("getTerms", await call("GET", terms, { auth: admin }), 200);
    await expectAnswer(
      "getTerms",
      await call("GET", "/api/v1/lead_providers/999999/terms/", { auth: admin }),
      404,
      "provider_not_found",
    );
    const preview = `/api/v1/lead_providers/${p.id}/terms/quote/`;
    await expectAnswer(
      "quoteProviderLead",
      await call("POST", preview, { auth: admin, body: { lead: freshLead() } }),
      200,
    );
    await expectAnswer(
      "quoteProviderLead",
      await call("POST", preview, { auth: admin, body: { lead: freshLead(), terms: { default_price_cents: 900 } } }),
      200,
    );
    await expectAnswer(
      "quoteProviderLead",
      await call("POST", preview, {
        auth: admin,
        body: { lead: freshLead(), terms: { price_rules: [{ when: { origin_states: ["XX"] }, price_cents: 1 }] } },
      }),
      400,
      "validation_error",
    );
    await expectAnswer(
      "quoteProviderLead",
      await call("POST", "/api/v1/lead_providers/999999/terms/quote/", { auth: admin, body: { lead: freshLead() } }),
      404,
      "provider_not_found",
    );
    const published = await call("GET", "/api/v1/public/terms/", { auth: p.key });
    const tag = published.headers.get("etag") as string;
    await expectAnswer("getPublishedTerms", published, 200);
    await expectAnswer(
      "getPublishedTerms",
      await call("GET", "/api/v1/public/terms/", { auth: p.key, headers: { "if-none-match": tag } }),
      304,
    );
    await expectAnswer(
      "quoteLead",
      await call("POST", "/api/v1/public/terms/quote/", { auth: p.key, body: freshLead() }),
      200,
    );
    await expectAnswer(
      "quoteLead",
      await call("POST", "/api/v1/public/terms/quote/", { auth: p.key, body: freshLead({ origin_zip: "00000" }) }),
      400,
      "invalid_zip",
    );
  });

  it("the ledger: balance, lines, statements (JSON, CSV, PDF), payouts, adjustments, payables, trial balance", async () => {
    for (let i = 0; i < 2; i++) {
      expect((await t.call("POST", "/api/v1/public/leads/", { auth: p.key, body: freshLead() })).status).toBe(201);
    }
    await t.app.settlement.runOnce();
    await expectAnswer("getBalance", await call("GET", "/api/v1/public/balance/", { auth: p.key }), 200);
    await expectAnswer(
      "listBalanceTransactions",
      await call("GET", "/api/v1/public/balance_transactions/?page_size=1&type=settlement", { auth: p.key }),
      200,
    );
    await expectAnswer(
      "listBalanceTransactions",
      await call("GET", "/api/v1/public/balance_transactions/?type=refund", { auth: p.key }),
      400,
      "validation_error",
    );
    await expectAnswer("listStatements", await call("GET", "/api/v1/public/statements/", { auth: p.key }), 200);
    await expectAnswer(
      "listStatements",
      await call("GET", "/api/v1/public/statements/?page_token=bm9wZQ", { auth: p.key }),
      400,
      "validation_error",
    );
    const month = new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York", year: "numeric", month: "2-digit" })
      .format(new Date())
      .slice(0, 7);
    for (const format of ["", "?format=json", "?format=csv", "?format=pdf"]) {
      await expectAnswer(
        "getStatement",
        await call("GET", `/api/v1/public/statements/${month}/${format}`, { auth: p.key }),
        200,
      );
    }
    await expectAnswer(
      "getStatement",
      await call("GET", "/api/v1/public/statements/2999-01/", { auth: p.key }),
      400,
      "validation_error",
    );
    await expectAnswer(
      "getProviderBalance",
      await call("GET", `/api/v1/lead_providers/${p.id}/balance/?mode=test`, { auth: admin }),
      200,
    );
    await expectAnswer(
      "listProviderBalanceTransactions",
      await call("GET", `/api/v1/lead_providers/${p.id}/balance_transactions/`, { auth: admin }),
      200,
    );

    const payouts = `/api/v1/lead_providers/${p.id}/payouts/`;
    const paidAt = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
    await expectAnswer(
      "createPayout",
      await call("POST", payouts, {
        auth: admin,
        body: { amount_cents: 10_000_000, reference: "P-1", paid_at: paidAt },
      }),
      409,
      "insufficient_balance",
    );
    const payout = { amount_cents: 1000, reference: "P-1", paid_at: paidAt };
    await expectAnswer("createPayout", await call("POST", payouts, { auth: admin, body: payout }), 201);
    await expectAnswer("createPayout", await call("POST", payouts, { auth: admin, body: payout }), 200);
    await expectAnswer(
      "createPayout",
      await call("POST", payouts, { auth: admin, body: { ...payout, amount_cents: 1001 } }),
      409,
      "reference_reused",
    );
    await expectAnswer(
      "createPayout",
      await call("POST", payouts, { auth: admin, body: { ...payout, amount_cents: 10.5 } }),
      400,
      "validation_error",
    );
    const adjustments = `/api/v1/lead_providers/${p.id}/adjustments/`;
    const adjustment = { amount_cents: -250, reason: "Double-counted lead", reference: "A-1" };
    await expectAnswer("createAdjustment", await call("POST", adjustments, { auth: admin, body: adjustment }), 201);
    await expectAnswer("createAdjustment", await call("POST", adjustments, { auth: admin, body: adjustment }), 200);
    await expectAnswer(
      "createAdjustment",
      await call("POST", adjustments, { auth: admin, body: { amount_cents: 5 } }),
      400,
      "validation_error",
    );
    await expectAnswer("listPayables", await call("GET", "/api/v1/admin/payables/", { auth: admin }), 200);
    await expectAnswer("listPayables", await call("GET", "/api/v1/admin/payables/?format=csv", { auth: admin }), 200);
    await expectAnswer("getLedgerSpend", await call("GET", "/api/v1/admin/ledger/spend/?days=7", { auth: admin }), 200);
    await expectAnswer(
      "getLedgerSpend",
      await call("GET", "/api/v1/admin/ledger/spend/?days=0", { auth: admin }),
      400,
      "validation_error",
    );
    const trial = await expectAnswer(
      "getTrialBalance",
      await call("GET", "/api/v1/admin/ledger/trial_balance/", { auth: admin }),
      200,
    );
    expect(trial.total_cents).toBe(0);
  });
});
