/**
 * The bench database: created fresh on the server of BENCH_DATABASE_URL, dropped at the end,
 * and seeded with plain SQL shaped like the service's own writes (lead, 1–3 vehicles, one
 * history entry; see src/leads/lead.repository.ts insertLead).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { FIRST_NAMES, LAST_NAMES, VEHICLES, ZIPS } from "./leads.ts";

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `lp_bench_${randomBytes(5).toString("hex")}`;
  await withClient(adminUrl, (c) => c.query(`create database ${name}`));
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let dropped = false;
  return {
    name,
    url,
    async query<T extends pg.QueryResultRow>(text: string, values?: unknown[]) {
      return (await pool.query<T>(text, values)).rows;
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      await withClient(adminUrl, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function serverVersion(db: BenchDatabase): Promise<string> {
  const [row] = await db.query<{ v: string }>("select current_setting('server_version') as v");
  return row?.v ?? "unknown";
}

const sqlArray = (values: readonly (string | number)[]) =>
  `array[${values.map((v) => (typeof v === "number" ? String(v) : `'${v.replaceAll("'", "''")}'`)).join(", ")}]`;

/** Picks element `expr` (an integer ≥ 0) of a SQL array literal built from `values`. */
const at = (values: readonly (string | number)[], expr: string) =>
  `(${sqlArray(values)})[1 + (${expr}) % ${values.length}]`;

/**
 * Inserts `perProvider` leads for each provider, external ids `${prefix}1` … `${prefix}N`, rows
 * interleaved across providers (so one provider's leads are spread over the whole table, as
 * they would be in production), then their vehicles and history. Returns the number of leads.
 */
export async function seedLeads(
  db: BenchDatabase,
  providerIds: readonly number[],
  perProvider: number,
  prefix: string,
): Promise<number> {
  const [{ max } = { max: 0 }] = await db.query<{ max: string | null }>("select max(id) as max from leads");
  const after = Number(max ?? 0);
  const zipField = (field: "zip" | "city" | "stateCode" | "stateId", i: string) =>
    at(
      ZIPS.map((x) => x[field]),
      i,
    );
  const o = "(g * 7 + p.ord)";
  const d = `(${o} + 1 + g % ${ZIPS.length - 1})`;
  await db.query("set synchronous_commit = off");
  // Ids are given here: the service's own default (creation millisecond and 12 random bits,
  // migration 0006) collides within one statement inserting thousands of rows per millisecond.
  const [{ base } = { base: "0" }] = await db.query<{ base: string }>(
    `select greatest((floor(extract(epoch from clock_timestamp()) * 1000)::bigint - 1704067200000) << 12,
       coalesce(max(id), 0) + 1) as base from leads`,
  );
  await db.query(
    `insert into leads (
       id, provider_id, external_id, state, lead_status, first_name, last_name, email, phone_number,
       phone_e164, email_match,
       company_name, note_from_shipper, estimated_ship_date, overseas_type, ship_via,
       origin_zip, origin_city, origin_state_id, origin_state_code,
       destination_zip, destination_city, destination_state_id, destination_state_code,
       created_at, updated_at, state_changed_at)
     select $4::bigint + (g - 1) * cardinality($1::bigint[]) + p.ord - 1, p.id, $2 || g, 'LEAD', 'LEAD',
       ${at(FIRST_NAMES, "g")}, ${at(LAST_NAMES, "g / 8")},
       lower(${at(FIRST_NAMES, "g")} || '.' || ${at(LAST_NAMES, "g / 8")} || '.' || g || '@example.com'),
       '+1 (310) 555-' || lpad((g % 10000)::text, 4, '0'), '+1310555' || lpad((g % 10000)::text, 4, '0'),
       lower(${at(FIRST_NAMES, "g")} || '.' || ${at(LAST_NAMES, "g / 8")} || '.' || g || '@example.com'),
       case when g % 4 = 0 then ${at(LAST_NAMES, "g / 8")} || ' Logistics LLC' end, null,
       (date '2026-01-01' + (g % 700))::date, 'DOMESTIC', ${at(["OPEN", "ENCLOSED", "DRIVE_AWAY"], "g")},
       ${zipField("zip", o)}, ${zipField("city", o)}, ${zipField("stateId", o)}, ${zipField("stateCode", o)},
       ${zipField("zip", d)}, ${zipField("city", d)}, ${zipField("stateId", d)}, ${zipField("stateCode", d)},
       ts, ts, ts
     from generate_series(1, $3::integer) as g
     cross join unnest($1::bigint[]) with ordinality as p(id, ord)
     cross join lateral (select now() - ((g * 37 + p.ord) % 525600) * interval '1 minute' as ts) as t`,
    [providerIds, prefix, perProvider, base],
  );
  await db.query(
    `insert into vehicles (lead_id, position, year, make, model, type, tariff, deposit, vehicle_run)
     select l.id, v.pos, 2008 + (l.id + v.pos) % 18,
       ${at(
         VEHICLES.map((x) => x.make),
         "l.id + v.pos",
       )}, ${at(
         VEHICLES.map((x) => x.model),
         "l.id + v.pos",
       )}, ${at(
         VEHICLES.map((x) => x.type),
         "l.id + v.pos",
       )},
       600 + (l.id * 13 + v.pos) % 1400, 90 + (l.id * 13 + v.pos) % 210, (l.id + v.pos) % 10 <> 0
     from leads l cross join lateral generate_series(0, (l.id % 3)::integer) as v(pos)
     where l.id > $1`,
    [after],
  );
  await db.query(
    `insert into lead_state_history (lead_id, from_state, to_state, lead_status, changed_at, actor)
     select id, null, 'LEAD', 'LEAD', created_at, 'provider:' || provider_id from leads where id > $1 order by id`,
    [after],
  );
  const [{ n } = { n: "0" }] = await db.query<{ n: string }>("select count(*) as n from leads where id > $1", [after]);
  return Number(n);
}

/** Providers created straight in SQL (no keys): the other tenants of a big installation. */
export async function seedProviders(db: BenchDatabase, count: number): Promise<number[]> {
  const rows = await db.query<{ id: string }>(
    `insert into providers (name, contact_email, rate_limit_per_minute, rate_limit_per_day)
     select 'Seeded provider ' || g, 'ops' || g || '@provider.example', 600, 50000
     from generate_series(1, $1::integer) as g returning id`,
    [count],
  );
  return rows.map((r) => Number(r.id));
}

export async function vacuumAnalyze(db: BenchDatabase): Promise<void> {
  await db.query("vacuum (analyze) leads, vehicles, lead_state_history, providers, api_keys");
}
