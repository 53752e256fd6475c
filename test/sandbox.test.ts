/**
 * Test mode (the sandbox): `lp_test_` keys whose leads behave like live ones end to end, moved by
 * the service as their reserved note asks, and kept apart from live data everywhere.
 */
import { Code, type ConnectError } from "@connectrpc/connect";
import { sql } from "kysely";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LeadState, OverseasType, ShipVia, VehicleType } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { ApiKeyMode, ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { PublicLeadService } from "../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import { isWellFormedKey } from "../src/api-keys/api-key.ts";
import { type Json, leadBody, minuteClock, shipDate, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";

const LEADS = "/api/v1/public/leads/";
const PROVIDERS = "/api/v1/lead_providers/";

describe.each(BACKENDS)("test mode ($name)", (backend) => {
  let t: TestApp;
  let admin: string;
  let receiver: Receiver | undefined;
  const workflow = () => connectClient(LeadWorkflowService, t.port, "grpc");

  /** A provider with a live key and a test key. */
  async function provider(fields: Record<string, unknown> = {}) {
    const p = await t.provider(undefined, fields);
    const res = await t.call("POST", `${PROVIDERS}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } });
    expect(res.status).toBe(201);
    const issued = (await res.json()) as Json;
    expect(issued.mode).toBe("test");
    return { id: p.id, live: p.key, test: issued.api_key as string };
  }
  const create = async (key: string, overrides: Record<string, unknown> = {}) => {
    const res = await t.call("POST", LEADS, { body: leadBody(overrides), auth: key });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
  };
  const read = async (key: string, externalId: string) => {
    const res = await t.call("GET", `${LEADS}${encodeURIComponent(externalId)}/`, { auth: key });
    return { status: res.status, body: (await res.json()) as Json };
  };

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      { RATE_LIMIT_PER_MINUTE: "100000", WEBHOOK_RETRY_SCHEDULE: "0.05" },
      { now: minuteClock() },
    );
    admin = await t.token();
  });
  afterAll(() => t.stop());
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  it("issues an lp_test_ key next to the live one; GET shows both; each rotates and revokes on its own", async () => {
    const p = await provider();
    expect(p.test).toMatch(/^lp_test_[0-9A-Za-z]{49}$/);
    expect(isWellFormedKey(p.test)).toBe(true);
    expect(isWellFormedKey(`${p.test.slice(0, -1)}${p.test.endsWith("A") ? "B" : "A"}`)).toBe(false); // checksum
    const got = (await (await t.call("GET", `${PROVIDERS}${p.id}/`, { auth: admin })).json()) as Json;
    expect(got).toMatchObject({ api_key_value: p.live, test_api_key_value: p.test });
    expect(got.test_api_key.masked).toMatch(/^lp_test_/);
    expect(got.api_key.masked).toMatch(/^lp_live_/);

    // Rotating the test key stops the old test key only.
    const rotated = (await (
      await t.call("POST", `${PROVIDERS}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } })
    ).json()) as Json;
    expect((await create(p.test)).status).toBe(401);
    expect((await create(rotated.api_key)).status).toBe(201);
    expect((await create(p.live)).status).toBe(201);

    // Revoking the test key leaves the live key working.
    const revoked = await t.call("POST", `${PROVIDERS}${p.id}/revoke_api_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as Json).test_api_key).toBeNull();
    expect((await create(rotated.api_key)).status).toBe(401);
    expect((await create(p.live)).status).toBe(201);

    const bad = await t.call("POST", `${PROVIDERS}${p.id}/revoke_api_key/`, { auth: admin, body: { mode: "demo" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).errors[0]).toMatchObject({ field: "mode" });
    const badMode = await t.call("POST", `${PROVIDERS}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "x" } });
    expect(badMode.status).toBe(400);

    // The same over gRPC.
    const grpc = connectClient(ProviderService, t.port, "grpc");
    const issued = await grpc.generateApiKey({ id: BigInt(p.id), mode: ApiKeyMode.TEST }, bearer(admin));
    expect(issued.apiKey).toMatch(/^lp_test_/);
    expect(issued.mode).toBe(ApiKeyMode.TEST);
    const detail = await grpc.getProvider({ id: BigInt(p.id) }, bearer(admin));
    expect(detail.testApiKeyValue).toBe(issued.apiKey);
    expect(detail.provider?.testApiKey?.masked).toMatch(/^lp_test_/);
    const { provider: after } = await grpc.revokeApiKey({ id: BigInt(p.id), mode: ApiKeyMode.TEST }, bearer(admin));
    expect(after?.testApiKey).toBeUndefined();
    const missing = (await grpc
      .revokeApiKey({ id: BigInt(p.id) }, bearer(admin))
      .catch((e: unknown) => e)) as ConnectError;
    expect(missing.code).toBe(Code.InvalidArgument);
  });

  it("keeps test and live leads apart: neither key sees the other's, and an external_id exists once in each mode", async () => {
    const p = await provider();
    const externalId = `shared-${Date.now()}`;
    const test = await create(p.test, { external_id: externalId });
    expect(test.status).toBe(201);
    expect(test.body.livemode).toBe(false);
    expect((await read(p.live, externalId)).status).toBe(404);

    const live = await create(p.live, { external_id: externalId });
    expect(live.status).toBe(201);
    expect(live.body.livemode).toBe(true);
    expect(live.body.id).not.toBe(test.body.id);
    expect((await read(p.test, externalId)).body).toMatchObject({ id: test.body.id, livemode: false });
    expect((await read(p.live, externalId)).body).toMatchObject({ id: live.body.id, livemode: true });
    // A repeat is a duplicate within its own mode only.
    expect((await create(p.test, { external_id: externalId })).body.code).toBe("duplicate_external_id");

    const liveList = (await (await t.call("GET", LEADS, { auth: p.live })).json()) as Json;
    const testList = (await (await t.call("GET", LEADS, { auth: p.test })).json()) as Json;
    expect(liveList.results.map((l: Json) => l.id)).toEqual([live.body.id]);
    expect(testList.results.map((l: Json) => l.id)).toEqual([test.body.id]);
    const liveEvents = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.live })).json()) as Json;
    const testEvents = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.test })).json()) as Json;
    expect(liveEvents.results.map((e: Json) => e.data.lead.id)).toEqual([live.body.id]);
    expect(testEvents.results.map((e: Json) => e.data.lead)).toEqual([
      expect.objectContaining({ id: test.body.id, livemode: false }),
    ]);

    // gRPC says livemode too.
    const grpc = connectClient(PublicLeadService, t.port, "grpc");
    const { lead } = await grpc.getLead({ externalId }, bearer(p.test));
    expect(lead?.livemode).toBe(false);
    const created = await grpc.createLead(
      {
        externalId: `grpc-test-${Date.now()}`,
        firstName: "Ana",
        lastName: "Rivera",
        email: "ana@example.com",
        phoneNumber: "787-555-0100",
        originZip: "33101",
        estimatedShipDate: shipDate(25),
        overseasType: OverseasType.DOMESTIC,
        shipVia: ShipVia.OPEN,
        vehicles: [{ year: 2019, make: "Honda", model: "Civic", type: VehicleType.CAR, tariff: 1800n, deposit: 200n }],
      },
      bearer(p.test),
    );
    expect(created.lead?.livemode).toBe(false);
  });

  it("moves test leads as their reserved note asks, answers 429 when asked, and leaves live leads alone", async () => {
    const p = await provider();
    const [quote, order, status, plain] = await Promise.all(
      ["sandbox:quote", "sandbox:order", "sandbox:status", "just a note"].map((note) =>
        create(p.test, { note_from_shipper: note }),
      ),
    );
    const live = await create(p.live, { note_from_shipper: "sandbox:order" });
    const started = Date.now();
    const stateOf = async (key: string, lead: Json | undefined) =>
      (await read(key, (lead as Json).body.external_id)).body;
    await expect
      .poll(() => stateOf(p.test, order), { timeout: 12_000, interval: 200 })
      .toMatchObject({ state: "ORDER" });
    expect(Date.now() - started).toBeLessThan(10_000); // two steps, each within 5 s
    await expect.poll(() => stateOf(p.test, quote), { timeout: 5000 }).toMatchObject({ state: "QUOTE" });
    await expect
      .poll(() => stateOf(p.test, status), { timeout: 5000 })
      .toMatchObject({ state: "QUOTE", lead_status: "NEGOTIATING" });
    const moved = await stateOf(p.test, order);
    expect(moved.history.map((h: Json) => [h.to_state, h.actor])).toEqual([
      ["LEAD", "provider"],
      ["QUOTE", "sandbox"],
      ["ORDER", "sandbox"],
    ]);
    expect(await stateOf(p.test, plain)).toMatchObject({ state: "LEAD" });
    expect(await stateOf(p.live, live)).toMatchObject({ state: "LEAD" }); // a live lead is never moved

    const limitedId = `limited-${Date.now()}`;
    const limited = await create(p.test, { external_id: limitedId, note_from_shipper: "sandbox:rate_limited" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(limited.body).toMatchObject({ code: "rate_limited", retry_after: 7 });
    expect((await read(p.test, limitedId)).status).toBe(404); // nothing stored
    const liveNote = await create(p.live, { note_from_shipper: "sandbox:rate_limited" });
    expect(liveNote.status).toBe(201); // only test mode reserves it

    // The normal validation errors, in test mode too.
    const invalid = await create(p.test, { origin_zip: "00000" });
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe("invalid_zip");
  });

  it("moves a new sandbox:quote lead within 5 s however many finished test leads are older", async () => {
    const p = await provider();
    // More finished leads than the mover takes at once (100): they must never fill its batch.
    const finished = await Promise.all(
      Array.from({ length: 110 }, () => create(p.test, { note_from_shipper: "sandbox:quote" })),
    );
    const last = finished.at(-1)?.body.external_id as string;
    await expect.poll(async () => (await read(p.test, last)).body.state, { timeout: 15_000 }).toBe("QUOTE");
    await expect
      .poll(
        async () =>
          (
            await sql<{
              n: number;
            }>`select count(*)::int as n from leads where provider_id = ${p.id} and state = 'LEAD'`.execute(
              t.app.database.db,
            )
          ).rows[0]?.n,
        { timeout: 15_000 },
      )
      .toBe(0);
    const fresh = await create(p.test, { note_from_shipper: "sandbox:quote" });
    const started = Date.now();
    await expect
      .poll(async () => (await read(p.test, fresh.body.external_id)).body.state, { timeout: 8000, interval: 200 })
      .toBe("QUOTE");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("sends the sandbox's moves as signed webhooks marked as test", async () => {
    receiver = await startReceiver();
    const p = await provider({ webhook_url: receiver.url });
    const { secret } = (await (await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: admin })).json()) as Json;
    const lead = await create(p.test, { note_from_shipper: "sandbox:order" });
    await receiver.waitFor((all) => all.length >= 3, 15_000, "created, quoted and ordered");
    const events = receiver.received.map((r) => new Webhook(secret).verify(r.body, r.headers) as Json);
    expect(events.map((e) => [e.type, e.livemode, e.data.lead.livemode, e.data.lead.id])).toEqual([
      ["lead.created", false, false, lead.body.id],
      ["lead.quoted", false, false, lead.body.id],
      ["lead.ordered", false, false, lead.body.id],
    ]);
    const live = await create(p.live);
    await receiver.waitFor((all) => all.length >= 4);
    expect(JSON.parse(receiver.received[3]?.body ?? "{}")).toMatchObject({
      livemode: true,
      data: { lead: { id: live.body.id, livemode: true } },
    });
  });

  it("hides test leads from the workflow service's list, find and watch unless asked", async () => {
    const p = await provider();
    const live = await create(p.live);
    const test = await create(p.test);
    const auth = bearer(admin);
    const listed = async (includeTest: boolean) => {
      const ids: bigint[] = [];
      let pageToken = "";
      do {
        const page = await workflow().listLeads({ state: LeadState.LEAD, pageSize: 500, pageToken, includeTest }, auth);
        ids.push(...page.records.map((r) => r.lead?.id ?? 0n));
        pageToken = page.nextPageToken;
      } while (pageToken !== "");
      return ids;
    };
    expect(await listed(false)).toContain(BigInt(live.body.id));
    expect(await listed(false)).not.toContain(BigInt(test.body.id));
    expect(await listed(true)).toContain(BigInt(test.body.id));

    const hidden = (await workflow()
      .findLead({ key: { case: "id", value: BigInt(test.body.id) } }, auth)
      .catch((e: unknown) => e)) as ConnectError;
    expect(hidden.code).toBe(Code.NotFound);
    const found = await workflow().findLead(
      { key: { case: "id", value: BigInt(test.body.id) }, includeTest: true },
      auth,
    );
    expect(found.record?.lead?.livemode).toBe(false);
    const byExternal = await workflow()
      .findLead(
        {
          key: {
            case: "providerExternalId",
            value: { providerId: BigInt(p.id), externalId: test.body.external_id },
          },
        },
        auth,
      )
      .catch((e: unknown) => e);
    expect((byExternal as ConnectError).code).toBe(Code.NotFound);

    // Watch: a default watcher sees the live move only; an include_test watcher sees both.
    const seen = { plain: [] as bigint[], all: [] as bigint[] };
    const abort = new AbortController();
    const watch = async (includeTest: boolean, into: bigint[]) => {
      try {
        for await (const c of workflow().watchLeadChanges(
          { providerId: BigInt(p.id), includeTest },
          { ...auth, signal: abort.signal },
        )) {
          into.push(c.leadId);
        }
      } catch (err) {
        // Only our own abort at the end of the test ends a stream; anything else fails the test.
        if (!(abort.signal.aborted && (err as ConnectError).code === Code.Canceled)) throw err;
      }
    };
    const streams = [watch(false, seen.plain), watch(true, seen.all)];
    await new Promise((r) => setTimeout(r, 300));
    await workflow().transitionLead({ leadId: BigInt(test.body.id), toState: LeadState.QUOTE }, auth);
    await workflow().transitionLead({ leadId: BigInt(live.body.id), toState: LeadState.QUOTE }, auth);
    await expect.poll(() => seen.all.length).toBe(2);
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    await Promise.all(streams);
    expect(seen.plain).toEqual([BigInt(live.body.id)]);
    expect(seen.all).toEqual([BigInt(test.body.id), BigInt(live.body.id)]);
  });

  it("counts test leads apart from live ones in the metrics", async () => {
    const p = await provider();
    const value = async (name: string) =>
      (await t.app.metrics.registry.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
    const [live0, test0] = [
      await value("lead_provider_leads_created_total"),
      await value("lead_provider_test_leads_created_total"),
    ];
    await create(p.test);
    await create(p.test);
    await create(p.live);
    expect(await value("lead_provider_leads_created_total")).toBe(live0 + 1);
    expect(await value("lead_provider_test_leads_created_total")).toBe(test0 + 2);
  });

  it("purges a provider's test data only, and deletes test leads past their retention", async () => {
    receiver = await startReceiver();
    const p = await provider({ webhook_url: receiver.url });
    const other = await provider();
    const tests = [await create(p.test), await create(p.test, { note_from_shipper: "sandbox:quote" })];
    const live = await create(p.live);
    const othersTest = await create(other.test);
    await receiver.waitFor((all) => all.length >= 3);

    const purged = await t.call("POST", `${PROVIDERS}${p.id}/purge_test_data/`, { auth: admin });
    expect(purged.status).toBe(200);
    expect(await purged.json()).toEqual({ deleted_leads: 2 });
    for (const lead of tests) expect((await read(p.test, lead.body.external_id)).status).toBe(404);
    expect((await read(p.live, live.body.external_id)).status).toBe(200);
    expect((await read(other.test, othersTest.body.external_id)).status).toBe(200); // another provider's
    const testEvents = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.test })).json()) as Json;
    expect(testEvents.results).toEqual([]);
    const liveEvents = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.live })).json()) as Json;
    expect(liveEvents.results).toHaveLength(1);
    const deliveries = (await (
      await t.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/`, { auth: admin })
    ).json()) as Json;
    expect(deliveries.results.map((d: Json) => d.lead_id)).toEqual([live.body.id]);

    // gRPC, for another provider.
    const grpc = connectClient(ProviderService, t.port, "grpc");
    expect((await grpc.purgeTestData({ id: BigInt(other.id) }, bearer(admin))).deletedLeads).toBe(1n);
    expect((await t.call("POST", `${PROVIDERS}999999999/purge_test_data/`, { auth: admin })).status).toBe(404);

    // Retention: a test lead older than SANDBOX_RETENTION_DAYS (30) goes; a live lead as old stays.
    const old = await create(p.test);
    const oldLive = await create(p.live);
    await sql`update leads set created_at = now() - interval '31 days' where id in (${old.body.id}, ${oldLive.body.id})`.execute(
      t.app.database.db,
    );
    const fresh = await create(p.test);
    expect(await t.app.sandbox.expire()).toBe(1);
    expect((await read(p.test, old.body.external_id)).status).toBe(404);
    expect((await read(p.test, fresh.body.external_id)).status).toBe(200);
    expect((await read(p.live, oldLive.body.external_id)).status).toBe(200);

    // Each run is in the metrics: rows deleted per job, and whether the last run fell behind.
    const metric = async (name: string, job: string) =>
      (await t.app.metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.job === job)?.value;
    expect(await metric("lead_provider_job_rows_total", "test_data_purge")).toBe(3);
    expect(await metric("lead_provider_job_rows_total", "sandbox_retention")).toBe(1);
    expect(await metric("lead_provider_job_behind", "sandbox_retention")).toBe(0);
  });
});

describe("test-mode rate limits", () => {
  it("counts test requests apart, so a load test cannot use up the live quota", async () => {
    const clock = minuteClock();
    const t = await startTestApp(BACKENDS[0] ?? { name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "5" }, { now: clock });
    try {
      const admin = await t.token();
      const p = await t.provider();
      const issued = (await (
        await t.call("POST", `${PROVIDERS}${p.id}/generate_api_key/`, { auth: admin, body: { mode: "test" } })
      ).json()) as Json;
      clock.nextMinute(); // the six requests and the live one in one minute, however long the start took
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await t.call("GET", `${LEADS}nope/`, { auth: issued.api_key })).status);
      expect(statuses).toEqual([404, 404, 404, 404, 404, 429]);
      const live = await t.call("GET", `${LEADS}nope/`, { auth: p.key });
      expect(live.status).toBe(404);
      expect(live.headers.get("ratelimit")).toMatch(/"minute";r=4;/);
    } finally {
      await t.stop();
    }
  }, 150_000);
});
