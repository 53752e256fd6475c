/**
 * What a signed-in portal user may do (src/portal/portal.service.ts) on its own, over the real
 * services on an in-memory PGlite: a user who must still set up a second factor is refused by
 * every use case but `me`, and everything else reads and writes the principal's own provider, in
 * the mode asked for (live by default). `make mutation` runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyCrypto } from "../../src/api-keys/api-key.ts";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { DomainError } from "../../src/errors.ts";
import { createEventService } from "../../src/events/event.service.ts";
import { DEFAULT_BUSINESS_TIMEZONE } from "../../src/intake/business-time.ts";
import { createIntakeService } from "../../src/intake/intake.service.ts";
import { createLeadService } from "../../src/leads/lead.service.ts";
import { createLogger } from "../../src/logger.ts";
import { createLedgerService } from "../../src/money/ledger.service.ts";
import { createTermsService } from "../../src/money/terms.service.ts";
import {
  createPortalService,
  type PortalService,
  TEST_KEY_ROTATION_GRACE_SECONDS,
} from "../../src/portal/portal.service.ts";
import { createPortalUserService } from "../../src/portal/portal-user.service.ts";
import { hashPassword, type PasswordHashing, type PortalPrincipal } from "../../src/portal/portal-user.ts";
import { createProviderService, type ProviderService } from "../../src/providers/provider.service.ts";
import { createRateLimiter, type RateLimiter } from "../../src/rate-limit/rate-limiter.ts";
import { createRequestLogService } from "../../src/request-log/request-log.service.ts";
import { SANDBOX_VALUES } from "../../src/sandbox/sandbox.ts";
import { createStatsService } from "../../src/stats/stats.service.ts";
import { createWebhookTransport } from "../../src/webhooks/webhook.http.ts";
import { createWebhookService } from "../../src/webhooks/webhook.service.ts";
import { loadZipDirectory } from "../../src/zip/zip-directory.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

const crypto = createKeyCrypto("unit-test-master-secret-0123456789abcdef");
const PASSWORD = "violet tundra harbor 87 quay";
const zone = DEFAULT_BUSINESS_TIMEZONE;
/** Argon2id at the least @node-rs/argon2 accepts (production's cost is pinned in portal-users.test.ts). */
const CHEAP: PasswordHashing = { memoryCost: 8, timeCost: 1, parallelism: 1 };

/** The DomainError a call throws or rejects with (some use cases refuse before any promise). */
async function refusal(call: () => unknown): Promise<DomainError> {
  const err = await Promise.resolve()
    .then(call)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

let counter = 0;
const leadBody = () => {
  counter += 1;
  return {
    external_id: `unit-portal-${Date.now()}-${counter}`,
    first_name: "Jane",
    last_name: "Doe",
    email: `jane${counter}.${Date.now()}@example.com`,
    phone_number: `+1 (310) 555-${String(1000 + counter).slice(-4)}`,
    origin_zip: "90210",
    destination_zip: "10001",
    estimated_ship_date: new Date(Date.now() + 20 * 86_400_000).toISOString().slice(0, 10),
    overseas_type: "DOMESTIC",
    ship_via: "OPEN",
    vehicles: [{ year: 2021, make: "Toyota", model: "Camry", type: "CAR", tariff: 950, deposit: 150 }],
  };
};

describe("the portal's use cases", () => {
  let handle: DatabaseHandle;
  let limiter: RateLimiter;
  let providers: ProviderService;
  let leads: ReturnType<typeof createLeadService>;
  let portal: PortalService;
  let mine: { id: number; principal: PortalPrincipal };
  let theirs: { id: number; principal: PortalPrincipal };

  beforeAll(async () => {
    handle = await openUnitDatabase();
    const db = handle.db;
    limiter = await createRateLimiter({ logger: createLogger("silent") });
    const users = createPortalUserService({ db, crypto, throttle: limiter, passwordHashing: CHEAP });
    providers = createProviderService({ db, crypto, defaults: { perMinute: 60, perDay: 2000 } });
    const intake = createIntakeService({
      db,
      settings: { zone, duplicateWindowDays: 30, duplicateMatch: ["phone", "email"] },
      cacheMs: 0,
    });
    leads = createLeadService({ db, zips: loadZipDirectory(), intake, zone });
    const transport = createWebhookTransport({ timeoutMs: 5000, allowPrivateTargets: true, production: false });
    portal = createPortalService({
      users,
      providers,
      leads,
      events: createEventService(db, zone),
      requestLog: createRequestLogService(db),
      stats: createStatsService({ db, zone }),
      intake,
      webhooks: createWebhookService({ db, crypto, transport }),
      ledger: createLedgerService({ db, currency: "USD", zone }),
      terms: createTermsService({ db, currency: "USD", zips: loadZipDirectory(), zone }),
    });
    const person = async (name: string) => {
      const provider = await providers.create("admin", { name });
      await providers.generateKey("admin", provider.id, {});
      const email = `${name.toLowerCase().replace(/\W+/g, ".")}@unit-portal.example`;
      const invite = await users.invite("admin", provider.id, { email, name: "Dana Ruiz" }, "https://svc.example");
      // The password set as accepting the invite would, without starting the password judge.
      await db
        .updateTable("portal_users")
        .set({ password_hash: await hashPassword(PASSWORD, CHEAP), status: "active", invite_digest: null })
        .where("id", "=", invite.user.id)
        .execute();
      const session = await users.signIn({ email, password: PASSWORD }, "ip", undefined);
      return { id: provider.id, principal: await users.authenticate(session.token) };
    };
    mine = await person("Mine Leads");
    theirs = await person("Theirs Leads");
  });
  afterAll(async () => {
    await limiter.close();
    await handle.close();
  });

  it("refuses a user who must set up a second factor everywhere but me, and changes nothing", async () => {
    const p = { ...mine.principal, mustEnrolSecondFactor: true };
    const calls: [string, () => unknown][] = [
      ["listLeads", () => portal.listLeads(p, undefined, {})],
      ["getLead", () => portal.getLead(p, undefined, "x")],
      ["listEvents", () => portal.listEvents(p, undefined, {})],
      ["listRequests", () => portal.listRequests(p, undefined, {})],
      ["getRequest", () => portal.getRequest(p, undefined, "00000000-0000-4000-8000-000000000000")],
      ["stats", () => portal.stats(p, undefined, {})],
      ["intakeRules", () => portal.intakeRules(p, undefined)],
      ["webhook", () => portal.webhook(p)],
      ["setWebhookUrl", () => portal.setWebhookUrl(p, "https://hooks.example.com/x")],
      ["rotateWebhookSecret", () => portal.rotateWebhookSecret(p, 60)],
      ["sendWebhookTest", () => portal.sendWebhookTest(p)],
      ["listDeliveries", () => portal.listDeliveries(p, {})],
      ["getDelivery", () => portal.getDelivery(p, "1")],
      ["replayDelivery", () => portal.replayDelivery(p, "1")],
      ["keys", () => portal.keys(p)],
      ["revealTestKey", () => portal.revealTestKey(p)],
      ["issueTestKey", () => portal.issueTestKey(p)],
      ["balance", () => portal.balance(p, undefined)],
      ["lines", () => portal.lines(p, undefined, {})],
      ["statements", () => portal.statements(p, undefined, {})],
      ["statementBook", () => portal.statementBook(p, undefined)],
      ["earnings", () => portal.earnings(p, undefined, undefined)],
      ["terms", () => portal.terms(p)],
      ["quote", () => portal.quote(p, undefined, leadBody())],
    ];
    for (const [name, call] of calls) {
      const err = await refusal(call);
      expect(err, name).toMatchObject({
        kind: "permission_denied",
        code: "second_factor_required",
        message: "set up a second factor (TOTP) first: this portal requires one",
      });
    }
    const provider = await providers.summary(mine.id);
    expect(provider.webhookUrl).toBeNull();
    expect(provider.testApiKey).toBeNull();
    const me = await portal.me(p);
    expect(me.user).toMatchObject({ id: p.userId, email: p.email, status: "active" });
    expect(me.provider).toMatchObject({ id: mine.id, name: "Mine Leads", rateLimitPerMinute: 60 });
    expect(me.secondFactorRequired).toBe(false);
  });

  it("sets, reads, rotates and clears the principal's own webhook, audited as the person", async () => {
    const p = mine.principal;
    const receiver = await startReceiver();
    try {
      const set = await portal.setWebhookUrl(p, receiver.url);
      expect(set).toMatchObject({ providerId: mine.id, url: receiver.url, enabled: true });
      expect(set.secret).toMatch(/^whsec_/);
      expect(await portal.webhook(p)).toMatchObject({ providerId: mine.id, url: receiver.url, secret: set.secret });
      expect((await providers.summary(theirs.id)).webhookUrl).toBeNull();
      const rotated = await portal.rotateWebhookSecret(p, 60);
      expect(rotated.secret).not.toBe(set.secret);
      const sent = await portal.sendWebhookTest(p);
      expect(sent).toMatchObject({ statusCode: 204, error: null });
      expect(sent.eventId).toMatch(/^evt_/);
      expect(receiver.ofType("webhook.test")).toHaveLength(1);
      expect((await portal.listDeliveries(p, {})).items).toEqual([]);
      expect((await refusal(() => portal.getDelivery(p, "999999"))).code).toBe("delivery_not_found");
      expect((await refusal(() => portal.replayDelivery(p, "999999"))).code).toBe("delivery_not_found");
      const audit = await handle.db
        .selectFrom("audit_log")
        .select(["actor", "action", "target_id"])
        .where("actor", "=", `portal:${p.email}`)
        .execute();
      expect(audit.map((a) => a.action)).toEqual(
        expect.arrayContaining(["provider.updated", "webhook_secret.rotated"]),
      );
      expect(new Set(audit.map((a) => a.target_id))).toEqual(new Set([String(mine.id)]));
      // Cleared with no value as well as with null.
      expect((await portal.setWebhookUrl(p, undefined)).url).toBeNull();
      expect((await providers.summary(mine.id)).webhookUrl).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it("shows the live key as a mask and issues, shows and rotates the test key with an hour's grace", async () => {
    const p = mine.principal;
    const keys = await portal.keys(p);
    expect(keys.live?.masked).toMatch(/^lp_live_/);
    expect(keys.test).toBeNull();
    expect(keys.sandboxValues).toBe(SANDBOX_VALUES);
    expect(await portal.revealTestKey(p)).toEqual({ apiKey: null, createdAt: null, previousKeyExpiresAt: null });
    const first = await portal.issueTestKey(p);
    expect(first.apiKey).toMatch(/^lp_test_/);
    expect(first.previousKeyExpiresAt).toBeNull();
    const shown = await portal.revealTestKey(p);
    expect(shown).toEqual({ apiKey: first.apiKey, createdAt: first.createdAt, previousKeyExpiresAt: null });
    const before = Date.now();
    const second = await portal.issueTestKey(p);
    expect(TEST_KEY_ROTATION_GRACE_SECONDS).toBe(3600);
    const grace = (second.previousKeyExpiresAt?.getTime() ?? 0) - before;
    expect(grace).toBeGreaterThan(3600_000 - 60_000);
    expect(grace).toBeLessThanOrEqual(3600_000 + 60_000);
    expect((await portal.revealTestKey(p)).previousKeyExpiresAt).toEqual(second.previousKeyExpiresAt);
    expect((await portal.keys(p)).test?.masked).toMatch(/^lp_test_/);
    expect((await providers.summary(theirs.id)).testApiKey).toBeNull();
  });

  it("reads live data by default and test data when asked, of the principal's provider only", async () => {
    const p = mine.principal;
    const live = leadBody();
    const test = leadBody();
    const other = leadBody();
    await leads.create({ providerId: mine.id, livemode: true }, live);
    await leads.create({ providerId: mine.id, livemode: false }, test);
    await leads.create({ providerId: theirs.id, livemode: true }, other);
    const ids = async (livemode: boolean | undefined) =>
      (await portal.listLeads(p, livemode, {})).items.map((l) => l.externalId);
    expect(await ids(undefined)).toEqual([live.external_id]);
    expect(await ids(true)).toEqual([live.external_id]);
    expect(await ids(false)).toEqual([test.external_id]);
    expect((await portal.getLead(p, undefined, live.external_id)).livemode).toBe(true);
    expect((await portal.getLead(p, false, test.external_id)).livemode).toBe(false);
    expect((await refusal(() => portal.getLead(p, undefined, test.external_id))).code).toBe("lead_not_found");
    expect((await refusal(() => portal.getLead(p, undefined, other.external_id))).code).toBe("lead_not_found");
    const events = await portal.listEvents(p, undefined, {});
    expect(events.items.map((e) => [e.type, e.livemode])).toEqual([["lead.created", true]]);
    expect((await portal.listEvents(p, false, {})).items.every((e) => !e.livemode)).toBe(true);
    expect((await portal.stats(p, undefined, {})).livemode).toBe(true);
    expect((await portal.stats(p, false, {})).livemode).toBe(false);
    expect((await portal.stats(p, undefined, {})).totals.submitted).toBe(1);
    expect((await portal.listRequests(p, undefined, {})).items).toEqual([]);
    expect((await refusal(() => portal.getRequest(p, undefined, "00000000-0000-4000-8000-000000000000"))).code).toBe(
      "request_not_found",
    );
    expect(await portal.balance(p, undefined)).toMatchObject({ livemode: true, pendingCents: 0 });
    expect((await portal.balance(p, false)).livemode).toBe(false);
    expect(portal.statementBook(p, false)).toEqual({ providerId: mine.id, livemode: false });
    expect((await portal.earnings(p, false, 7)).days).toHaveLength(7);
    const rules = await portal.intakeRules(p, undefined);
    expect(rules).toMatchObject({ livemode: true });
    expect(await portal.intakeRules(p, false)).toMatchObject({ livemode: false });
  });
});
