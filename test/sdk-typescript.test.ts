/**
 * The TypeScript SDK (sdks/typescript) against the real service on port 0, on PGlite and (with
 * TEST_DATABASE_URL) Postgres: create and read; each refusal thrown as its class with the problem
 * and the request id (validation, duplicate, cap, closed, paused, rate limit, authentication, not
 * found); a 429's Retry-After waited out and the create then taken; a cap waited out only when
 * asked; bad arguments. Lost answers, paging, webhooks and the sandbox:
 * test/sdk-typescript-flows.test.ts; the reads, money and returns: test/sdk-typescript-reads.test.ts.
 */
import { DateTime } from "luxon";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  AuthenticationError,
  CapReachedError,
  DuplicateLeadError,
  IntakeClosedError,
  IntakePausedError,
  type LeadCreate,
  LeadProvider,
  type LeadProviderOptions,
  NotFoundError,
  RateLimitError,
  type RetryEvent,
  ValidationError,
} from "../sdks/typescript/src/index.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { freshLead, movableClock } from "./helpers/money.ts";
import { refusal as refused, ruledProvider, storedWith as stored } from "./helpers/sdk.ts";

const ZONE = "America/New_York";
const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
const lead = (overrides: Json = {}) => freshLead(overrides) as LeadCreate;

describe.each(BACKENDS)("the TypeScript SDK against the service ($name)", (backend) => {
  let t: TestApp;
  const clock = movableClock();

  beforeAll(async () => {
    t = await startTestApp(
      backend,
      { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" },
      { now: clock.now },
    );
  });
  afterAll(async () => {
    await t?.stop();
  });
  afterEach(() => clock.reset());

  const client = (apiKey: string, options: Partial<LeadProviderOptions> = {}) =>
    new LeadProvider({ apiKey, baseUrl: t.url, ...options });
  const provider = (fields: Json = {}, rules?: Json) => ruledProvider(t, fields, rules);
  /** The API error a call throws (fails the test when it succeeds). */
  async function refusal(call: Promise<unknown>): Promise<ApiError> {
    const error = await refused(call);
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  const storedWith = (externalId: string) => stored(t, externalId);

  it("creates a lead and reads it back; livemode comes from the key", async () => {
    const p = await provider();
    const c = client(p.key);
    expect(c.livemode).toBe(true);
    const body = lead({ destination_zipcode: "10001" } as Json);
    const created = await c.leads.create(body);
    expect(created).toMatchObject({ external_id: body.external_id, state: "LEAD", livemode: true });
    expect(created.warnings).toEqual([
      expect.objectContaining({ field: "destination_zipcode", code: "unknown_field" }),
    ]);
    const read = await c.leads.get(body.external_id);
    expect(read.id).toBe(created.id);
    expect(read.origin?.city).toBe("Beverly Hills");
    expect(await storedWith(body.external_id)).toBe(1);
  });

  it("throws a refused lead as ValidationError naming every bad field, with the request id the log knows", async () => {
    const p = await provider();
    const c = client(p.key);
    const error = await refusal(
      c.leads.create(lead({ origin_zip: "00000", overseas_type: "FOREIGN", ship_via: "OPEN" })),
    );
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ status: 400, code: "validation_error" });
    expect((error as ValidationError).errors.map((e) => e.field).sort()).toEqual(["origin_zip", "ship_via"]);
    expect(error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.request_id).toBe(error.requestId);
    expect(error.problem?.request_id).toBe(error.requestId);
    expect(error.message).toContain(error.requestId);
    expect(error.message).not.toContain(p.key);
    await t.app.requestLog?.flush();
    const logged = await c.requests.get(error.requestId);
    expect(logged).toMatchObject({ request_id: error.requestId, outcome: "rejected", code: "validation_error" });
  });

  it("throws duplicates, authentication failures and unknown leads as their classes, without retrying them", async () => {
    const p = await provider({}, { duplicate_policy: "reject" });
    const retries: RetryEvent[] = [];
    const c = client(p.key, { onRetry: (e) => retries.push(e) });
    const first = await c.leads.create(lead());
    const again = await refusal(c.leads.create({ ...lead(), external_id: first.external_id }));
    expect(again).toBeInstanceOf(DuplicateLeadError);
    expect(again.code).toBe("duplicate_external_id");
    expect((again as DuplicateLeadError).existingLead).toEqual({ id: first.id, order_number: first.order_number });
    const twin = await refusal(c.leads.create(lead({ phone_number: first.phone_number })));
    expect(twin).toBeInstanceOf(DuplicateLeadError);
    expect(twin.code).toBe("duplicate_lead");
    expect((twin as DuplicateLeadError).duplicate?.matched_on).toContain("phone_number");

    const wrongKey = `${p.key.slice(0, -4)}abcd`;
    const denied = await refusal(client(wrongKey, { onRetry: (e) => retries.push(e) }).leads.get(first.external_id));
    expect(denied).toBeInstanceOf(AuthenticationError);
    expect(denied).toMatchObject({ status: 401, code: "invalid_api_key" });
    expect(denied.message).not.toContain(wrongKey);

    const missing = await refusal(c.leads.get("no-such-lead"));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.code).toBe("lead_not_found");
    expect(retries).toEqual([]);
  });

  it("throws a full cap, a closed schedule and a pause as their classes, at once", async () => {
    const retries: RetryEvent[] = [];
    const capped = await provider({}, { caps: { day: 1 } });
    const c = client(capped.key, { onRetry: (e) => retries.push(e) });
    await c.leads.create(lead());
    const full = await refusal(c.leads.create(lead()));
    expect(full).toBeInstanceOf(CapReachedError);
    expect((full as CapReachedError).window).toBe("day");
    const midnight = DateTime.fromJSDate(clock.now()).setZone(ZONE).plus({ days: 1 }).startOf("day");
    expect((full as CapReachedError).resetsAt?.toISOString()).toBe(midnight.toUTC().toISO());
    expect(full.retryAfter).toBeGreaterThan(0);

    // Open only on the day three days from today (New York): closed now.
    const openDay = DAYS[DateTime.fromJSDate(clock.now()).setZone(ZONE).plus({ days: 3 }).weekday - 1] as string;
    const closed = await provider({}, { schedule: { [openDay]: [{ open: "09:00", close: "17:00" }] } });
    const shut = await refusal(client(closed.key, { onRetry: (e) => retries.push(e) }).leads.create(lead()));
    expect(shut).toBeInstanceOf(IntakeClosedError);
    expect((shut as IntakeClosedError).opensAt?.getTime()).toBeGreaterThan(clock.now().getTime());

    const paused = await provider({}, { paused: true, paused_reason: "Holiday week" });
    const held = await refusal(client(paused.key, { onRetry: (e) => retries.push(e) }).leads.create(lead()));
    expect(held).toBeInstanceOf(IntakePausedError);
    expect((held as IntakePausedError).pausedReason).toBe("Holiday week");
    expect(held.retryAfter).toBeUndefined();
    expect(retries).toEqual([]);
  });

  it("waits a 429's Retry-After and then creates the lead", async () => {
    const p = await provider({ rate_limit_per_minute: 1 });
    // 2.5 s before the end of a minute: the retry falls in the next one.
    const now = clock.now().getTime();
    clock.set(new Date(now - (now % 60_000) + 60_000 - 2_500));
    const retries: RetryEvent[] = [];
    const c = client(p.key, { onRetry: (e) => retries.push(e) });
    await c.leads.create(lead());
    const started = Date.now();
    const created = await c.leads.create(lead());
    const waited = Date.now() - started;
    expect(created.state).toBe("LEAD");
    expect(retries).toHaveLength(1);
    const [retry] = retries as [RetryEvent];
    expect(retry).toMatchObject({ attempt: 1, reason: "rate_limited", status: 429 });
    // Retry-After was 3 (seconds to the minute's end, rounded up): the SDK slept at least that.
    expect(retry.delayMs).toBeGreaterThanOrEqual(3_000);
    expect(retry.delayMs).toBeLessThan(3_250);
    expect(waited).toBeGreaterThanOrEqual(retry.delayMs);

    // Without retries, the limit is a RateLimitError saying how long to wait.
    const limited = await refusal(client(p.key, { maxRetries: 0 }).leads.create(lead()));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as RateLimitError).window).toBe("minute");
    expect(limited.retryAfter).toBeGreaterThan(0);
  });

  it("waits out a cap's reset only when asked to", async () => {
    const p = await provider({}, { caps: { day: 1 } });
    // 2 s before midnight in New York: the day cap resets in 2 s.
    const midnight = DateTime.fromJSDate(clock.now()).setZone(ZONE).plus({ days: 1 }).startOf("day").toJSDate();
    clock.set(new Date(midnight.getTime() - 2_000));
    const retries: RetryEvent[] = [];
    await client(p.key).leads.create(lead());
    await expect(client(p.key).leads.create(lead())).rejects.toBeInstanceOf(CapReachedError);
    const created = await client(p.key, { retryIntakeRefusals: true, onRetry: (e) => retries.push(e) }).leads.create(
      lead(),
    );
    expect(created.state).toBe("LEAD");
    expect(retries).toEqual([expect.objectContaining({ reason: "cap_reached", status: 429 })]);
  });

  it("refuses bad arguments with a clear error, never echoing the key", async () => {
    expect(() => new LeadProvider({ apiKey: "sk_live_123" })).toThrow(/apiKey must be a provider API key/);
    expect(() => new LeadProvider({ apiKey: "lp_live_abc", baseUrl: "localhost:8080" })).toThrow(/baseUrl/);
    expect(() => new LeadProvider({ apiKey: "lp_live_abc", maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => new LeadProvider({ apiKey: "lp_live_abc", timeoutMs: 0 })).toThrow(/timeoutMs/);
    try {
      new LeadProvider({ apiKey: "lp_live_secret value" });
    } catch (err) {
      expect((err as Error).message).not.toContain("secret value");
    }
    const c = new LeadProvider({ apiKey: "lp_live_abc", baseUrl: t.url });
    await expect(c.leads.get("")).rejects.toThrow(/externalId/);
    await expect(c.statements.get("2026-13")).rejects.toThrow(/YYYY-MM/);
    await expect(c.leads.create(null as unknown as LeadCreate)).rejects.toThrow(/lead as an object/);
    expect(JSON.stringify(c)).not.toContain("lp_live_abc");
  });
});
