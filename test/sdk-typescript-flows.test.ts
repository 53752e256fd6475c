/**
 * The TypeScript SDK (sdks/typescript) against the real service on port 0, on PGlite and (with
 * TEST_DATABASE_URL) Postgres: a create whose answer a real TCP proxy loses after the service
 * stored the lead (the connection reset before a byte of the answer) is answered with that lead and
 * leaves exactly one stored, and without retries is a ConnectionError whose request id the request
 * log knows; a retried create meeting a different stored lead is a DuplicateLeadError; listAll
 * pages through 250 leads; a webhook the service signed and sent to a real receiver verifies, and an
 * altered one does not; a sandbox key makes test leads the sandbox moves.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  ConnectionError,
  DuplicateLeadError,
  type LeadCreate,
  LeadProvider,
  type LeadProviderOptions,
  NotFoundError,
  RateLimitError,
  type RetryEvent,
  WebhookVerificationError,
} from "../sdks/typescript/src/index.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { freshLead } from "./helpers/money.ts";
import { startReceiver } from "./helpers/receiver.ts";
import { startResetProxy } from "./helpers/reset-proxy.ts";
import { PROVIDERS, refusal as refused, ruledProvider, storedWith as stored, testKeyOf } from "./helpers/sdk.ts";
import { pollUntil } from "./helpers/timing.ts";

const lead = (overrides: Json = {}) => freshLead(overrides) as LeadCreate;

describe.each(BACKENDS)("the TypeScript SDK's lost answers, paging, webhooks and sandbox ($name)", (backend) => {
  let t: TestApp;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp(backend, { RATE_LIMIT_PER_MINUTE: "100000", RATE_LIMIT_PER_DAY: "10000000" });
    admin = await t.token();
  });
  afterAll(async () => {
    await t?.stop();
  });

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

  it("returns the stored lead when the answer to a create is lost, and stores exactly one", async () => {
    const p = await provider();
    const proxy = await startResetProxy({ host: "127.0.0.1", port: t.port }, ({ line }) => {
      return line === "POST /api/v1/public/leads/" && proxy.resets === 0;
    });
    try {
      const retries: RetryEvent[] = [];
      const c = new LeadProvider({ apiKey: p.key, baseUrl: proxy.url, onRetry: (e) => retries.push(e) });
      const body = lead();
      const created = await c.leads.create(body);
      expect(proxy.resets).toBe(1);
      expect(retries).toEqual([expect.objectContaining({ attempt: 1, reason: "network", status: undefined })]);
      expect(created).toMatchObject({ external_id: body.external_id, state: "LEAD", warnings: [] });
      expect((await client(p.key).leads.get(body.external_id)).id).toBe(created.id);
      expect(await storedWith(body.external_id)).toBe(1);
      // The attempts the proxy saw: the create, the create again, and the read of the stored lead.
      expect(proxy.requests).toEqual([
        "POST /api/v1/public/leads/",
        "POST /api/v1/public/leads/",
        `GET /api/v1/public/leads/${body.external_id}/`,
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("throws a lost answer without retries as ConnectionError whose request id the log knows", async () => {
    const p = await provider();
    let lose = 1; // answers of creates to lose
    const proxy = await startResetProxy(
      { host: "127.0.0.1", port: t.port },
      ({ line }) => line.startsWith("POST ") && proxy.resets < lose,
    );
    try {
      const body = lead();
      const lost = await refusal(
        new LeadProvider({ apiKey: p.key, baseUrl: proxy.url, maxRetries: 0 }).leads.create(body),
      );
      expect(lost).toBeInstanceOf(ConnectionError);
      expect(lost).toMatchObject({ status: 0, code: "connection_error" });
      // The lead was stored: the request id the SDK sent finds it in the request log.
      expect(await storedWith(body.external_id)).toBe(1);
      await t.app.requestLog?.flush();
      expect(await client(p.key).requests.get(lost.requestId)).toMatchObject({
        outcome: "accepted",
        external_id: body.external_id,
      });

      // A retried create told duplicate_external_id for a different stored lead is not taken for it.
      const other = lead({ external_id: body.external_id, first_name: "Someone", last_name: "Else" });
      lose = 2;
      const retried = new LeadProvider({ apiKey: p.key, baseUrl: proxy.url, maxRetries: 1 });
      const duplicate = await refusal(retried.leads.create(other));
      expect(duplicate).toBeInstanceOf(DuplicateLeadError);
      expect(duplicate.code).toBe("duplicate_external_id");
      expect(proxy.resets).toBe(2);
      expect(await storedWith(body.external_id)).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("pages through 250 leads with listAll", async () => {
    const p = await provider();
    const c = client(p.key);
    const ids: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const made = await Promise.all(Array.from({ length: 25 }, () => c.leads.create(lead())));
      ids.push(...made.map((l) => l.id));
    }
    const pages: string[] = [];
    const counted = client(p.key, {
      fetch: (request) => {
        pages.push(new URL(request.url).search);
        return fetch(request);
      },
    });
    const seen: number[] = [];
    for await (const l of counted.leads.listAll({ page_size: 100 })) seen.push(l.id);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toEqual([...seen].sort((a, b) => b - a)); // newest first
    // Three pages: the first without a token, the next two with the token the one before gave.
    expect(pages).toHaveLength(3);
    expect(pages[0]).toBe("?page_size=100");
    expect(pages.slice(1).every((q) => /^\?page_size=100&page_token=[^&]+$/.test(q))).toBe(true);
    // The filters travel with every page.
    let quoted = 0;
    for await (const _ of c.leads.listAll({ state: "QUOTE", page_size: 100 })) quoted += 1;
    expect(quoted).toBe(0);
  });

  it("verifies a webhook the service signed and refuses one that was altered", async () => {
    const receiver = await startReceiver();
    try {
      const p = await provider({ webhook_url: receiver.url });
      const endpoint = (await (await t.call("GET", `${PROVIDERS}${p.id}/webhook/`, { auth: admin })).json()) as Json;
      const c = client(p.key);
      const created = await c.leads.create(lead());
      await receiver.waitFor((all) => all.length > 0, 20_000, "the lead.created webhook");
      const [delivery] = receiver.received;
      if (!delivery) throw new Error("no delivery");
      const event = c.webhooks.verify(delivery.body, delivery.headers, endpoint.secret);
      expect(event.type).toBe("lead.created");
      if (event.type !== "lead.created") throw new Error("narrowed above");
      expect(event.data.lead.id).toBe(created.id);
      // Raw bytes as a Node server reads them verify too.
      expect(c.webhooks.verify(Buffer.from(delivery.body), delivery.headers, endpoint.secret)).toEqual(event);

      const altered = delivery.body.replace(created.external_id, "crm-forged");
      expect(() => c.webhooks.verify(altered, delivery.headers, endpoint.secret)).toThrow(WebhookVerificationError);
      const otherSecret = `whsec_${Buffer.from("another secret of 32 bytes......").toString("base64")}`;
      expect(() => c.webhooks.verify(delivery.body, delivery.headers, otherSecret)).toThrow(WebhookVerificationError);
      expect(() => c.webhooks.verify(delivery.body, {}, endpoint.secret)).toThrow(WebhookVerificationError);
    } finally {
      await receiver.close();
    }
  });

  it("works in test mode with a sandbox key", async () => {
    const p = await provider();
    const testKey = await testKeyOf(t, p.id);
    const sandbox = client(testKey);
    expect(sandbox.livemode).toBe(false);
    const created = await sandbox.leads.create(lead({ note_from_shipper: "sandbox:quote" }));
    expect(created.livemode).toBe(false);
    await pollUntil(
      "the sandbox to quote the test lead",
      async () => {
        const now = await sandbox.leads.get(created.external_id);
        return { ok: now.state === "QUOTE", seen: now.state };
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    // The live key does not see test leads.
    await expect(client(p.key).leads.get(created.external_id)).rejects.toBeInstanceOf(NotFoundError);
    // The sandbox's 429 (Retry-After 7) is longer than this client waits: thrown at once.
    const started = Date.now();
    const limited = await refusal(
      client(testKey, { maxRetryWaitMs: 5_000 }).leads.create(lead({ note_from_shipper: "sandbox:rate_limited" })),
    );
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited.retryAfter).toBe(7);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
