/**
 * Retention of the outbox: lead events past EVENT_RETENTION_DAYS and finished webhook
 * deliveries and test sends past DELIVERY_RETENTION_DAYS are deleted; leads, newer rows and
 * pending deliveries stay.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";

const PROVIDERS = "/api/v1/lead_providers/";

describe.each(BACKENDS)("outbox retention ($name)", (backend) => {
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp(backend, {
      EVENT_RETENTION_DAYS: "60",
      DELIVERY_RETENTION_DAYS: "30",
    });
  });
  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  it("deletes events and finished deliveries past their retention, and nothing else", async () => {
    const admin = await t.token();
    const p = await t.provider(undefined, { webhook_url: receiver.url });
    const create = async (externalId: string) => {
      const r = await t.call("POST", "/api/v1/public/leads/", {
        auth: p.key,
        body: leadBody({ external_id: externalId }),
      });
      expect(r.status).toBe(201);
      return (await r.json()) as Json;
    };
    // Oldest first, as time makes them: two leads of 90 days ago (one with a replay pending), one
    // of 45, one of 40 (its delivery pending), one of today.
    const ancient = await create("ret-ancient");
    const ancientPending = await create("ret-ancient-pending");
    const older = await create("ret-45-days");
    const pendingOne = await create("ret-40-days-pending");
    const fresh = await create("ret-today");
    await receiver.waitFor((all) => all.length >= 5);
    const sent = await t.call("POST", `${PROVIDERS}${p.id}/webhook/test/`, { auth: admin });
    expect(sent.status).toBe(200);
    const db = t.app.database.db;
    const age = async (leadId: number, days: number) => {
      await sql`update lead_events set created_at = now() - make_interval(days => ${days}) where lead_id = ${leadId}`.execute(
        db,
      );
      await sql`update webhook_deliveries set created_at = now() - make_interval(days => ${days}) where lead_id = ${leadId}`.execute(
        db,
      );
    };
    await age(ancient.id, 90);
    await age(ancientPending.id, 90);
    await age(older.id, 45);
    await age(pendingOne.id, 40);
    await sql`update webhook_deliveries set state = 'pending', next_attempt_at = now() + interval '1 day' where lead_id in (${pendingOne.id}, ${ancientPending.id})`.execute(
      db,
    );
    await sql`update webhook_attempts set at = now() - interval '31 days' where delivery_id is null`.execute(db);

    expect(await t.app.outboxRetention.runOnce()).toEqual({ events: 1, deliveries: 3, behind: false });

    // The events feed: the 90-day-old lead's event is gone; the other one of 90 days stays while
    // its delivery is pending.
    const feed = (await (await t.call("GET", "/api/v1/public/events/", { auth: p.key })).json()) as Json;
    expect(feed.results.map((e: Json) => e.data.lead.external_id)).toEqual([
      "ret-today",
      "ret-40-days-pending",
      "ret-45-days",
      "ret-ancient-pending",
    ]);
    // Deliveries: the delivered ones of 90 and 45 days are gone; the pending ones and today's stay.
    const deliveries = (await (
      await t.call("GET", `${PROVIDERS}${p.id}/webhook_deliveries/`, { auth: admin })
    ).json()) as Json;
    expect(deliveries.results.map((d: Json) => [d.lead_id, d.state])).toEqual([
      [fresh.id, "delivered"],
      [pendingOne.id, "pending"],
      [ancientPending.id, "pending"],
    ]);
    expect(deliveries.test_events).toEqual([]);
    const attempts = await sql<{ n: number }>`select count(*)::int as n from webhook_attempts`.execute(db);
    expect(attempts.rows[0]?.n).toBe(3); // today's delivery's and the pending ones' first attempts
    // Leads are kept whatever their age.
    for (const lead of [ancient, older]) {
      expect((await t.call("GET", `/api/v1/public/leads/${lead.external_id}/`, { auth: p.key })).status).toBe(200);
    }
    // Each job's run is in the metrics; a second run finds nothing.
    const metric = async (name: string, job: string) =>
      (await t.app.metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.job === job)?.value;
    expect(await metric("lead_provider_job_rows_total", "event_retention")).toBe(1);
    expect(await metric("lead_provider_job_rows_total", "delivery_retention")).toBe(3);
    expect(await metric("lead_provider_job_behind", "event_retention")).toBe(0);
    expect(await t.app.outboxRetention.runOnce()).toEqual({ events: 0, deliveries: 0, behind: false });
  });
});
