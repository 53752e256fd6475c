import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/database.ts";
import { BIG_TABLE_INDEXES, buildBigTableIndexes } from "../src/db/indexes.ts";
import { createMigrator, MIGRATION_NAMES, migrateToLatest, migrationsApplied } from "../src/db/migrator.ts";
import type { Database } from "../src/db/schema.ts";
import { US_STATES } from "../src/states/states.ts";
import { BACKENDS, createTestDatabase } from "./helpers/database.ts";

const TABLES = [
  "api_keys",
  "audit_log",
  "form_challenges_used",
  "form_settings",
  "lead_events",
  "lead_returns",
  "lead_state_history",
  "lead_stats_daily",
  "lead_stats_periods",
  "lead_stats_rollup",
  "lead_stats_running",
  "leads",
  "ledger_accounts",
  "ledger_entries",
  "ledger_settlement_queue",
  "ledger_transactions",
  "portal_sessions",
  "portal_users",
  "provider_terms",
  "providers",
  "publishable_keys",
  "request_log",
  "request_log_tallies",
  "request_outcomes_daily",
  "states",
  "vehicles",
  "webhook_attempts",
  "webhook_deliveries",
  "webhook_endpoints",
];

/** Every migration from an empty database: over 30 s on PGlite on a busy 2-core machine. */
const MIGRATING_MS = 120_000;
describe.each(BACKENDS)("migrations ($name)", (backend) => {
  it(
    "apply once, create every table and seed the states; a second run applies nothing",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handles = await Promise.all(
        // Three instances starting at once: the advisory lock lets exactly one apply each migration.
        Array.from({ length: backend.name === "postgres" ? 3 : 1 }, () =>
          openDatabase({ databaseUrl: target.url, dataDir: "memory://", poolSize: 2, timeoutMs: 5000 }),
        ),
      );
      try {
        const applied = await Promise.all(handles.map((h) => migrateToLatest(h.db)));
        expect(applied.flat()).toEqual(MIGRATION_NAMES);
        const db = handles[0]?.db;
        if (!db) throw new Error("no handle");
        expect(await migrationsApplied(db)).toBe(true);
        expect(await migrateToLatest(db)).toEqual([]);
        const tables = await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_name not like 'kysely%' order by table_name`.execute(db);
        expect(tables.rows.map((r) => r.table_name)).toEqual(TABLES);
        const states = await db.selectFrom("states").select(["id", "code"]).orderBy("id").execute();
        expect(states).toHaveLength(55);
        expect(states[4]).toEqual({ id: 5, code: "CA" });
        // The migration's frozen copy of the seed agrees with today's reference data.
        expect(states).toEqual(US_STATES.map(({ id, code }) => ({ id, code })));

        // Every foreign key's referencing columns lead an index, so deleting a referenced row never
        // scans the referencing table; the only exception is `states`, which nothing deletes.
        const unindexed = await sql<{ fk: string; referenced: string }>`
        select c.conrelid::regclass::text || '(' || (
            select string_agg(a.attname, ', ' order by k.ord) from unnest(c.conkey) with ordinality k(attnum, ord)
            join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum) || ')' as fk,
          c.confrelid::regclass::text as referenced
        from pg_constraint c
        where c.contype = 'f' and not exists (
          select 1 from pg_index i
          where i.indrelid = c.conrelid
            and (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] @> c.conkey
            and (i.indkey::int2[])[0:array_length(c.conkey, 1) - 1] <@ c.conkey)
        order by 1`.execute(db);
        expect(unindexed.rows).toEqual([
          { fk: "leads(destination_state_id)", referenced: "states" },
          { fk: "leads(origin_state_id)", referenced: "states" },
        ]);
      } finally {
        await Promise.all(handles.map((h) => h.close()));
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "turns the rollup's hours into histograms in place, keeping every count (0013)",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handle = await openDatabase({
        databaseUrl: target.url,
        dataDir: "memory://",
        poolSize: 1,
        timeoutMs: 5000,
      });
      try {
        const migrator = createMigrator(handle.db);
        expect((await migrator.migrateTo("0012-vacuum-leads")).error).toBeUndefined();
        await sql`
        insert into lead_stats_daily (provider_id, livemode, day, sub_id, accepted, duplicates, quoted, ordered,
                                      hours_to_quote, hours_to_order)
        values (7, true, '2026-01-02', '', 9, 0, 6, 2, '{0.001, 2, 2.01, 2, 500, 0.5}', '{1, 1}'),
               (7, true, '2026-01-03', '', 1, 0, 0, 0, '{}', '{}')`.execute(handle.db);
        expect(await migrateToLatest(handle.db)).toEqual(
          MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf("0013-stats-histograms")),
        );
        const { rows } = await sql<{ day: string; qk: number[]; qn: number[]; ok: number[]; on: number[] }>`
        select day::text as day, quote_keys as qk, quote_counts as qn, order_keys as ok, order_counts as on
        from lead_stats_daily order by day`.execute(handle.db);
        const bucket = (h: number) => (h <= 0.01 ? 0 : Math.ceil(Math.log(h / 0.01) / Math.log(1.02)));
        expect(rows).toEqual([
          // 2 and 2.01 share a bucket (2 % wide); the counts add up to the quoted and ordered leads.
          {
            day: "2026-01-02",
            qk: [0, bucket(0.5), bucket(2), bucket(500)],
            qn: [1, 1, 3, 1],
            ok: [bucket(1)],
            on: [2],
          },
          { day: "2026-01-03", qk: [], qn: [], ok: [], on: [] },
        ]);
      } finally {
        await handle.close();
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "makes each provider's earliest active portal user its admin, everyone else a member (0023)",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handle = await openDatabase({
        databaseUrl: target.url,
        dataDir: "memory://",
        poolSize: 1,
        timeoutMs: 5000,
      });
      try {
        const migrator = createMigrator(handle.db);
        expect((await migrator.migrateTo("0022-stats-periods")).error).toBeUndefined();
        const { rows: providers } = await sql<{ id: number }>`
        insert into providers (name, rate_limit_per_minute, rate_limit_per_day, created_at, updated_at)
        values ('Two Actives', 60, 1000, now(), now()), ('Invited Only', 60, 1000, now(), now())
        returning id`.execute(handle.db);
        const [a, b] = providers.map((p) => Number(p.id));
        // In Two Actives, the earliest person was disabled and the next is still invited: the
        // earliest *active* one (created third) becomes admin; on a tie of created_at, the lower id.
        await sql`
        insert into portal_users (provider_id, email, name, status, created_at)
        values (${a}, 'old@x.example', 'Old', 'disabled', '2026-01-01'),
               (${a}, 'inv@x.example', 'Inv', 'invited', '2026-01-02'),
               (${a}, 'first@x.example', 'First', 'active', '2026-01-03'),
               (${a}, 'tie@x.example', 'Tie', 'active', '2026-01-03'),
               (${a}, 'later@x.example', 'Later', 'active', '2026-01-04'),
               (${b}, 'only@y.example', 'Only', 'invited', '2026-01-01')`.execute(handle.db);
        expect((await migrator.migrateTo("0023-portal-team-and-reset")).error).toBeUndefined();
        const { rows } = await sql<{ email: string; role: string }>`
        select email, role from portal_users order by id`.execute(handle.db);
        expect(rows).toEqual([
          { email: "old@x.example", role: "member" },
          { email: "inv@x.example", role: "member" },
          { email: "first@x.example", role: "admin" },
          { email: "tie@x.example", role: "member" },
          { email: "later@x.example", role: "member" },
          { email: "only@y.example", role: "member" },
        ]);
      } finally {
        await handle.close();
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "keeps every existing endpoint on every event type, and queues only subscribed types after (0024)",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handle = await openDatabase({
        databaseUrl: target.url,
        dataDir: "memory://",
        poolSize: 1,
        timeoutMs: 5000,
      });
      try {
        const db = handle.db;
        expect((await createMigrator(db).migrateTo("0023-portal-team-and-reset")).error).toBeUndefined();
        const { rows } = await sql<{ id: number }>`
        insert into providers (name, rate_limit_per_minute, rate_limit_per_day, webhook_url)
        values ('Hooked', 60, 2000, 'https://hooks.example.com/a') returning id`.execute(db);
        const id = rows[0]?.id ?? 0;
        await sql`insert into webhook_endpoints (provider_id, secret_ciphertext) values (${id}, 'x')`.execute(db);
        let n = 0;
        const event = async (type: string) => {
          n += 1;
          await sql`
          insert into lead_events (event_id, provider_id, livemode, type, data)
          values (${`evt_${n}`}, ${id}, true, ${type}, '{}')`.execute(db);
        };
        const queued = async () =>
          (
            await sql<{ type: string }>`
            select e.type from webhook_deliveries d join lead_events e on e.id = d.event_sequence
            where d.provider_id = ${id} order by d.id`.execute(db)
          ).rows.map((r) => r.type);
        await event("terms.changed");
        expect(await migrateToLatest(db)).toEqual(
          MIGRATION_NAMES.slice(MIGRATION_NAMES.indexOf("0024-webhook-event-types")),
        );
        const after = await sql<{
          t: string[] | null;
        }>`select webhook_event_types as t from providers where id = ${id}`.execute(db);
        expect(after.rows[0]?.t).toBeNull();
        await event("payout.created"); // every type, still
        await sql`update providers set webhook_event_types = '{terms.changed}' where id = ${id}`.execute(db);
        await event("payout.created"); // not subscribed: no delivery
        await event("terms.changed");
        expect(await queued()).toEqual(["terms.changed", "payout.created", "terms.changed"]);
        // An empty list is not a subscription: null means every type.
        await expect(
          sql`update providers set webhook_event_types = '{}' where id = ${id}`.execute(db),
        ).rejects.toThrow();
      } finally {
        await handle.close();
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "runs migrations and index builds without the requests' time-out, which a big table outlasts",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      // Requests give up after 100 ms (+1 s on the client); maintenance work may take longer.
      const handle = await openDatabase({ databaseUrl: target.url, dataDir: "memory://", poolSize: 1, timeoutMs: 100 });
      try {
        const slow = (db: Kysely<Database>) => sql`select pg_sleep(1.5)`.execute(db);
        if (backend.name === "postgres") await expect(slow(handle.db)).rejects.toThrow(/timeout/i);
        await handle.maintenance(slow);
        expect(await handle.maintenance((db) => migrateToLatest(db))).toEqual(MIGRATION_NAMES);
        // The requests' pool still works (a timed-out query discards only its own connection).
        expect((await sql<{ one: number }>`select 1 as one`.execute(handle.db)).rows).toEqual([{ one: 1 }]);
      } finally {
        await handle.close();
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "builds the big tables' indexes after the migrations, once, and rebuilds one left invalid",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handles = await Promise.all(
        Array.from({ length: backend.name === "postgres" ? 3 : 1 }, () =>
          openDatabase({ databaseUrl: target.url, dataDir: "memory://", poolSize: 2, timeoutMs: 5000 }),
        ),
      );
      const names = BIG_TABLE_INDEXES.map((i) => i.name);
      const valid = async (db: Kysely<Database>) =>
        (
          await sql<{ relname: string }>`
          select c.relname from pg_class c join pg_index i on i.indexrelid = c.oid
          where i.indisvalid and c.relname in (${sql.join(names)}) order by 1`.execute(db)
        ).rows.map((r) => r.relname);
      try {
        const [first] = handles;
        if (!first) throw new Error("no handle");
        await migrateToLatest(first.db);
        // An index a big-table index replaces serves its queries until that one is built, then goes.
        const replaced = BIG_TABLE_INDEXES.flatMap((i) => (i.replaces ? [i.replaces] : []));
        const present = async (db: Kysely<Database>) =>
          (
            await sql<{ relname: string }>`
            select relname from pg_class where relkind = 'i' and relname in (${sql.join([...replaced, "-"])}) order by 1`.execute(
              db,
            )
          ).rows.map((r) => r.relname);
        expect(replaced).toContain("leads_search_idx");
        expect(await present(first.db)).toEqual([...replaced].sort());
        // Instances starting together: the session lock lets each index be built exactly once.
        const built = await Promise.all(handles.map((h) => buildBigTableIndexes(h.db, h.kind)));
        expect(built.flat().sort()).toEqual([...names].sort());
        expect(await valid(first.db)).toEqual([...names].sort());
        expect(await present(first.db)).toEqual([]);
        expect(await buildBigTableIndexes(first.db, first.kind)).toEqual([]);
        if (backend.name === "postgres") {
          // A concurrent build that was interrupted leaves its index invalid: the next start rebuilds it.
          await sql`update pg_index set indisvalid = false where indexrelid = 'leads_provider_updated_idx'::regclass`.execute(
            first.db,
          );
          expect(await buildBigTableIndexes(first.db, first.kind)).toEqual(["leads_provider_updated_idx"]);
          expect(await valid(first.db)).toEqual([...names].sort());
        }
      } finally {
        await Promise.all(handles.map((h) => h.close()));
        await target.drop();
      }
    },
    MIGRATING_MS,
  );

  it(
    "has autovacuum visit the tables that churn long before a fifth of them has changed",
    async () => {
      const target = await createTestDatabase(backend, { empty: true });
      const handle = await openDatabase({
        databaseUrl: target.url,
        dataDir: "memory://",
        poolSize: 1,
        timeoutMs: 5000,
      });
      try {
        await migrateToLatest(handle.db);
        const { rows } = await sql<{ relname: string; reloptions: string[] | null }>`
          select relname, reloptions from pg_class
          where relname in ('leads', 'lead_stats_daily') and relkind = 'r' order by relname`.execute(handle.db);
        // lead_stats_daily: today's rows rewritten every minute; leads: mostly inserted.
        expect(rows.map((r) => [r.relname, [...(r.reloptions ?? [])].sort()])).toEqual([
          ["lead_stats_daily", ["autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=20000"]],
          ["leads", ["autovacuum_vacuum_insert_scale_factor=0", "autovacuum_vacuum_insert_threshold=10000"]],
        ]);
      } finally {
        await handle.close();
        await target.drop();
      }
    },
    MIGRATING_MS,
  );
});

describe("reference data", () => {
  it("is never deleted by the service, so its foreign keys need no index on the referencing side", () => {
    const deletesStates = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const path = join(dir, e.name);
        if (e.isDirectory()) return path.endsWith("migrations") ? [] : deletesStates(path);
        const text = readFileSync(path, "utf8");
        return /deleteFrom\(\s*"states"|delete\s+from\s+states\b|truncate[^;]*\bstates\b/i.test(text) ? [path] : [];
      });
    expect(deletesStates(join(import.meta.dirname, "..", "src"))).toEqual([]);
  });
});

describe("embedded database", () => {
  it(
    "keeps data in DATA_DIR across restarts",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "lp-pglite-"));
      try {
        const first = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, timeoutMs: 5000 });
        await migrateToLatest(first.db);
        await first.db
          .insertInto("providers")
          .values({ name: "Persisted", rate_limit_per_minute: 60, rate_limit_per_day: 2000 })
          .execute();
        await first.close();
        const second = await openDatabase({ databaseUrl: undefined, dataDir: dir, poolSize: 1, timeoutMs: 5000 });
        expect(await migrateToLatest(second.db)).toEqual([]);
        const rows = await second.db.selectFrom("providers").select("name").execute();
        expect(rows).toEqual([{ name: "Persisted" }]);
        await second.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    MIGRATING_MS,
  );
});
