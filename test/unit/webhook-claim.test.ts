/**
 * Which due webhook deliveries a claim takes (src/webhooks/webhook.claim.ts), rule by rule, and
 * the claim itself (webhook.repository.ts claimDue) on a real in-memory PGlite with a backlog.
 * `make mutation` runs it.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../src/db/database.ts";
import {
  chooseDeliveries,
  type DueDelivery,
  endpointsWithoutRoom,
  scanSize,
  scansTestDeliveries,
} from "../../src/webhooks/webhook.claim.ts";
import { claimDue } from "../../src/webhooks/webhook.repository.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

/** `n` due deliveries of one provider, ids from `first`. */
const rows = (providerId: number, n: number, first: number, livemode = true): DueDelivery[] =>
  Array.from({ length: n }, (_, i) => ({ id: first + i, providerId, livemode }));
const room = (limit: number, perEndpoint = 4, testLimit = 4) => ({ limit, perEndpoint, testLimit });
const none = new Map<number, number>();

describe("the claim's scan", () => {
  it("looks at four rows per free slot, none for none", () => {
    expect(scanSize(16)).toBe(64);
    expect(scanSize(1)).toBe(4);
    expect(scanSize(0)).toBe(0);
    expect(scanSize(-2)).toBe(0);
  });

  it("reads test-mode deliveries only while a test slot is free", () => {
    expect(scansTestDeliveries(room(16, 4, 1))).toBe(true);
    expect(scansTestDeliveries(room(16, 4, 0))).toBe(false);
  });

  it("leaves out the endpoints whose in-flight deliveries fill their share", () => {
    const inFlight = new Map([
      [7, 4],
      [3, 3],
      [9, 5],
      [1, 0],
    ]);
    expect(endpointsWithoutRoom(inFlight, 4)).toEqual([7, 9]);
    expect(endpointsWithoutRoom(inFlight, 3)).toEqual([7, 3, 9]);
    expect(endpointsWithoutRoom(inFlight, 6)).toEqual([]);
    expect(endpointsWithoutRoom(none, 1)).toEqual([]);
  });
});

describe("the claim's choice", () => {
  it("takes due deliveries in due order up to the claim's limit", () => {
    const due = [1, 2, 3, 4, 5].map((p) => ({ id: p * 10, providerId: p, livemode: true }));
    expect(chooseDeliveries(due, none, room(3))).toEqual([10, 20, 30]);
    expect(chooseDeliveries(due, none, room(5))).toEqual([10, 20, 30, 40, 50]);
    expect(chooseDeliveries(due, none, room(9))).toEqual([10, 20, 30, 40, 50]);
    expect(chooseDeliveries(due, none, room(0))).toEqual([]);
    expect(chooseDeliveries([], none, room(4))).toEqual([]);
  });

  it("gives one endpoint at most its share, so the next provider's deliveries go in the same claim", () => {
    // A backlog of 64 at provider 1 ahead of provider 2's 20: the scan a claim of 16 reads.
    const due = [...rows(1, 64, 1), ...rows(2, 20, 101)];
    expect(chooseDeliveries(due, none, room(16))).toEqual([1, 2, 3, 4, 101, 102, 103, 104]);
    expect(chooseDeliveries(due, none, room(16, 1))).toEqual([1, 101]);
    expect(chooseDeliveries(due, none, room(16, 10))).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 101, 102, 103, 104, 105, 106,
    ]);
  });

  it("counts what each endpoint already has in flight, on any instance", () => {
    const due = [...rows(1, 6, 1), ...rows(2, 6, 11), ...rows(3, 2, 21)];
    const inFlight = new Map([
      [1, 3],
      [2, 4],
      [3, 5],
    ]);
    expect(chooseDeliveries(due, inFlight, room(16))).toEqual([1]);
    expect(chooseDeliveries(due, new Map([[1, 1]]), room(16))).toEqual([1, 2, 3, 11, 12, 13, 14, 21, 22]);
  });

  it("gives test-mode deliveries at most their share; a test delivery skipped takes no endpoint place", () => {
    const due: DueDelivery[] = [
      { id: 1, providerId: 1, livemode: false },
      { id: 2, providerId: 1, livemode: false },
      { id: 3, providerId: 2, livemode: false },
      { id: 4, providerId: 1, livemode: true },
      { id: 5, providerId: 3, livemode: true },
      { id: 6, providerId: 4, livemode: false },
    ];
    expect(chooseDeliveries(due, none, room(16, 2, 1))).toEqual([1, 4, 5]);
    expect(chooseDeliveries(due, none, room(16, 2, 2))).toEqual([1, 2, 5]);
    expect(chooseDeliveries(due, none, room(16, 3, 2))).toEqual([1, 2, 4, 5]);
    expect(chooseDeliveries(due, none, room(16, 4, 3))).toEqual([1, 2, 3, 4, 5]);
    expect(chooseDeliveries(due, none, room(16, 4, 0))).toEqual([4, 5]);
    // Live deliveries are never held back by the test share.
    expect(chooseDeliveries(rows(5, 3, 1), none, room(16, 4, 0))).toEqual([1, 2, 3]);
  });
});

describe("claimDue on PGlite: a backlog at a busy endpoint does not hide another provider's deliveries", () => {
  let handle: DatabaseHandle;
  const leaseMs = 60_000;

  /**
   * `n` due deliveries of `provider` (live or test) as old as `secondsAgo`: events of no lead (as
   * intake_rules.changed is), queued by the outbox's own trigger.
   */
  async function queue(provider: number, n: number, secondsAgo: number, livemode = true): Promise<void> {
    const data = { intakeRules: { rules: {}, version: 1, updatedAt: null } };
    await sql`insert into lead_events (event_id, provider_id, lead_id, type, created_at, livemode, data)
      select 'evt_' || md5(random()::text || g::text), ${provider}::bigint, null, 'intake_rules.changed',
             now() - make_interval(secs => ${secondsAgo}::double precision), ${livemode}::boolean,
             ${JSON.stringify(data)}::jsonb
      from generate_series(1, ${n}::int) g`.execute(handle.db);
    await sql`update webhook_deliveries set next_attempt_at = now() - make_interval(secs => ${secondsAgo}::double precision)
      where provider_id = ${provider}::bigint and attempts = 0 and lease_expires_at is null`.execute(handle.db);
  }

  beforeAll(async () => {
    handle = await openUnitDatabase();
    for (const name of ["slow", "fine", "sandbox"]) {
      const { rows } = await sql<{ id: number }>`insert into providers
          (name, rate_limit_per_minute, rate_limit_per_day, webhook_url, created_at, updated_at)
        values (${name}, 60, 2000, ${`https://${name}.example.com/hooks`}, now(), now()) returning id`.execute(
        handle.db,
      );
      await sql`insert into webhook_endpoints (provider_id, secret_ciphertext)
        values (${Number(rows[0]?.id)}::bigint, 'x')`.execute(handle.db);
    }
    await queue(1, 600, 120); // the slow endpoint's backlog, oldest first
    await queue(2, 20, 60);
    await queue(3, 10, 90, false);
  }, 180_000); // PGlite's start and migrations, on a busy machine
  afterAll(async () => {
    await handle?.close();
  });

  const claim = (limit: number, testLimit = 4) => claimDue(handle.db, { limit, testLimit, perEndpoint: 4, leaseMs });
  const providers = (claimed: { providerId: number }[]) => claimed.map((d) => d.providerId);

  it("leases the full endpoint's share, then scans past its backlog to the others", async () => {
    // The scan of a claim of 16 reads the 64 oldest due rows: all the slow endpoint's.
    const first = await claim(16, 0);
    expect(providers(first)).toEqual([1, 1, 1, 1]);
    expect(first.every((d) => d.attempt === 1 && d.livemode)).toBe(true);
    // Its share is taken: the worker's next claim leaves it out of the scan and reaches the others.
    const second = await claim(12, 0);
    expect(providers(second)).toEqual([2, 2, 2, 2]);
    // Test-mode deliveries, behind 600 rows, only while a test slot is free.
    expect(await claim(8, 0)).toEqual([]);
    const third = await claim(8, 2);
    expect(providers(third)).toEqual([3, 3]);
    expect(third.every((d) => !d.livemode)).toBe(true);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from webhook_deliveries
      where lease_expires_at > now()`.execute(handle.db);
    expect(rows[0]?.n).toBe(10);
  });
});
