/**
 * The physical baseline: pgbench on the bench database with lead-shaped scripts, at the same
 * client counts as the service. Per-transaction latencies come from pgbench's --log files.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "./processes.ts";
import { Latencies, type LoadResult, loadResult } from "./stats.ts";

// The id comes from a sequence of the bench's own (PGBENCH_SEQUENCE): the service's default
// (migration 0006: the millisecond and 12 random bits) is retried by the service on a collision,
// which pgbench cannot do.
const LEAD_COLUMNS = `id, provider_id, external_id, state, lead_status, first_name, last_name, email, phone_number,
  company_name, note_from_shipper, estimated_ship_date, overseas_type, ship_via,
  origin_zip, origin_city, origin_state_id, origin_state_code,
  destination_zip, destination_city, destination_state_id, destination_state_code`;

const LEAD_VALUES = `nextval('pgbench_lead_ids'), :p, 'pgb-' || gen_random_uuid()::text, 'LEAD', 'LEAD', 'Maria', 'Gonzalez',
  'maria.gonzalez.' || :n || '@example.com', '+1 (310) 555-0142', null, null, current_date + 30, 'DOMESTIC', 'OPEN',
  '90210', 'Beverly Hills', 5, 'CA', '10001', 'New York', 33, 'NY'`;

/** The service's read of one lead (src/leads/lead.repository.ts selectLeads), as Kysely writes it. */
const SELECT_LEAD = `select leads.*,
  (select coalesce(json_agg(agg), '[]') from (
     select year, make, model, type, tariff, deposit, vehicle_run from vehicles
     where vehicles.lead_id = leads.id order by position) as agg) as vehicles,
  (select coalesce(json_agg(agg), '[]') from (
     select from_state, to_state, lead_status, changed_at, actor from lead_state_history
     where lead_state_history.lead_id = leads.id order by lead_state_history.id) as agg) as history
  from leads`;

export const SCRIPTS = {
  /** The baseline for creates: one lead-shaped row. */
  insert: `\\set p random(:pmin, :pmax)
\\set n random(1, 10000)
insert into leads (${LEAD_COLUMNS})
values (${LEAD_VALUES})
returning id, created_at;
`,
  /** The baseline for reads: one row by the key the service reads by. */
  select: `\\set p random(:pmin, :pmax)
\\set k random(1, :nseed)
select * from leads where provider_id = :p and external_id = 'seed-' || :k::text;
`,
  /**
   * What the service sends for one create: one statement that runs the duplicate check
   * (intake_guard, both keys, 30 days, no caps), then writes the lead, its vehicles, its history
   * and its lead.created event (whose insert trigger also looks for the provider's webhook).
   */
  insertAsService: `\\set p random(:pmin, :pmax)
\\set n random(1, 100000000)
with g as (
  select * from intake_guard(:p, true, 'pgb-guard', '+1310' || lpad(:n::text, 7, '0'),
    'maria.gonzalez.' || :n || '@example.com', 30, false, '{}'::text[], '{}'::timestamptz[], '{}'::integer[])),
l as (
  insert into leads (${LEAD_COLUMNS}, livemode, phone_e164, email_match, duplicate)
  select ${LEAD_VALUES}, true, '+1310' || lpad(:n::text, 7, '0'), 'maria.gonzalez.' || :n || '@example.com', g.duplicate
  from g where g.refusal is null
  on conflict (provider_id, livemode, external_id) do nothing
  returning id, order_number, created_at),
v as (
  insert into vehicles (lead_id, position, year, make, model, type, tariff, deposit, vehicle_run)
  select l.id, x.* from l, (values (0::smallint, 2021::integer, 'Toyota'::text, 'Camry'::text, 'CAR'::text, 950::bigint, 150::bigint, true::boolean),
    (1::smallint, 2019::integer, 'Ford'::text, 'F-150'::text, 'PICKUP'::text, 1200::bigint, 180::bigint, null::boolean))
    as x(position, year, make, model, type, tariff, deposit, vehicle_run)),
h as (
  insert into lead_state_history (lead_id, from_state, to_state, lead_status, changed_at, actor)
  select l.id, null, 'LEAD', 'LEAD', l.created_at, 'provider:' || :p from l),
e as (
  insert into lead_events (event_id, provider_id, lead_id, type, created_at, livemode, data)
  select 'evt_' || replace(gen_random_uuid()::text, '-', ''), :p, l.id, 'lead.created', l.created_at, true,
    jsonb_build_object('lead', jsonb_build_object('id', l.id, 'orderNumber', l.order_number, 'state', 'LEAD',
      'firstName', 'Maria', 'lastName', 'Gonzalez', 'createdAt', l.created_at))
  from l)
select id, order_number, created_at from l;
`,
  /** What the service sends for one read. */
  selectAsService: `\\set p random(:pmin, :pmax)
\\set k random(1, :nseed)
${SELECT_LEAD} where leads.provider_id = :p and leads.external_id = 'seed-' || :k::text;
`,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

export function findPgbench(): string {
  if (process.env.PGBENCH) return process.env.PGBENCH;
  for (const dir of (process.env.PATH ?? "").split(":")) if (existsSync(join(dir, "pgbench"))) return "pgbench";
  const lib = "/usr/lib/postgresql";
  if (existsSync(lib)) {
    for (const v of readdirSync(lib).sort().reverse()) {
      const bin = join(lib, v, "bin", "pgbench");
      if (existsSync(bin)) return bin;
    }
  }
  throw new Error("pgbench not found: install postgresql-client or set PGBENCH=/path/to/pgbench");
}

export interface PgbenchOptions {
  readonly url: string;
  readonly script: ScriptName;
  readonly clients: number;
  readonly seconds: number;
  readonly defines: Record<string, string | number>;
}

export async function runPgbench(options: PgbenchOptions): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "lp-pgbench-"));
  try {
    const scriptFile = join(dir, `${options.script}.sql`);
    writeFileSync(scriptFile, SCRIPTS[options.script]);
    const args = [
      "-n",
      "-M",
      "prepared",
      "-c",
      String(options.clients),
      "-j",
      String(Math.min(2, options.clients)),
      "-T",
      String(options.seconds),
      "-f",
      scriptFile,
      "--log",
      `--log-prefix=${join(dir, "log")}`,
      ...Object.entries(options.defines).flatMap(([k, v]) => ["-D", `${k}=${v}`]),
      options.url,
    ];
    const out = await run(findPgbench(), args, { cwd: dir });
    if (out.code !== 0) throw new Error(`pgbench ${options.script} failed (${out.code}):\n${out.stderr}${out.stdout}`);
    const latencies = new Latencies();
    let failed = 0;
    for (const file of readdirSync(dir).filter((f) => f.startsWith("log."))) {
      for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
        const time = line.split(" ")[2];
        if (time === undefined) continue;
        if (time === "failed") failed++;
        else latencies.add(Number(time) / 1000);
      }
    }
    const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out.stdout)?.[1] ?? Number.NaN);
    const measured = loadResult(latencies, failed, options.seconds);
    return { ...measured, rps: Number.isFinite(tps) ? tps : measured.rps };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
