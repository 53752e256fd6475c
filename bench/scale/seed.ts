/**
 * Seeds a migrated Postgres database with a broker's history at scale, in SQL (generate_series),
 * so a million leads take about a minute: providers with a skewed share (the first 20 own 70 %
 * of the leads), leads over two years with ids made as the service makes them (creation
 * millisecond << 12 | 12 random bits) and, at the harness's sizes, their vehicles and state history;
 * 3 % of the last month's leads in test mode; events and webhook deliveries for the leads within
 * their retention (WINDOWS); audit entries about providers and leads; the request log of the last
 * 30 days. Used by the plan test
 * (test/scale-plans.test.ts) and the scale harness (bench/scale/run.ts).
 */
import pg from "pg";

export interface SeedSize {
  readonly leads: number;
  readonly providers: number;
  /** Events per lead (the service writes one per creation and one per move). */
  readonly eventsPerLead: number;
  /** Audit entries per lead. */
  readonly auditPerLead: number;
  /** Vehicles (1–3) and state history rows per lead, as the service writes them. */
  readonly vehicles: boolean;
  /** Each lead's purchase in the ledger, settled after 7 days (seedLedger). */
  readonly ledger: boolean;
}

/**
 * The retention windows a running service keeps (EVENT_RETENTION_DAYS, DELIVERY_RETENTION_DAYS,
 * SANDBOX_RETENTION_DAYS), plus the backlog a retention run finds: events, deliveries and test
 * leads are seeded as far back as the service keeps them and `BACKLOG_DAYS` further, so a
 * database in its steady state, with a day's work for each retention job.
 */
export const WINDOWS = { eventDays: 180, deliveryDays: 90, testDays: 30, requestLogDays: 30 } as const;
export const BACKLOG_DAYS = 1;

export const SIZES = {
  plans: { leads: 500_000, providers: 200, eventsPerLead: 1, auditPerLead: 0.2, vehicles: false, ledger: true },
  small: { leads: 50_000, providers: 2000, eventsPerLead: 2, auditPerLead: 0.5, vehicles: true, ledger: true },
  large: { leads: 5_000_000, providers: 2000, eventsPerLead: 2, auditPerLead: 0.5, vehicles: true, ledger: true },
} as const satisfies Record<string, SeedSize>;

/** Names in proportions like a real customer list's: a search for one is as selective as in life. */
const FIRSTS = [
  "James",
  "Mary",
  "Robert",
  "Patricia",
  "John",
  "Jennifer",
  "Michael",
  "Linda",
  "David",
  "Elizabeth",
  "William",
  "Barbara",
  "Richard",
  "Susan",
  "Joseph",
  "Jessica",
  "Thomas",
  "Sarah",
  "Carlos",
  "Karen",
  "Daniel",
  "Lisa",
  "Matthew",
  "Nancy",
  "Anthony",
  "Betty",
  "Mark",
  "Sandra",
  "Donald",
  "Ashley",
  "Steven",
  "Kimberly",
  "Andrew",
  "Emily",
  "Paul",
  "Donna",
  "Joshua",
  "Michelle",
  "Kenneth",
  "Olivia",
];
const LASTS = [
  "Smith",
  "Johnson",
  "Williams",
  "Brown",
  "Jones",
  "Garcia",
  "Miller",
  "Davis",
  "Rodriguez",
  "Martinez",
  "Hernandez",
  "Lopez",
  "Gonzalez",
  "Wilson",
  "Anderson",
  "Thomas",
  "Taylor",
  "Moore",
  "Jackson",
  "Martin",
  "Lee",
  "Perez",
  "Thompson",
  "White",
  "Harris",
  "Sanchez",
  "Clark",
  "Ramirez",
  "Lewis",
  "Robinson",
  "Walker",
  "Young",
  "Allen",
  "King",
  "Wright",
  "Scott",
  "Torres",
  "Nguyen",
  "Hill",
  "Flores",
  "Green",
  "Adams",
  "Nelson",
  "Baker",
  "Hall",
  "Rivera",
  "Campbell",
  "Mitchell",
  "Carter",
  "Roberts",
  "Kowalski",
  "Okafor",
  "Lindqvist",
  "Tanaka",
  "Petrov",
  "Dubois",
  "Schneider",
  "Rossi",
  "Novak",
  "Haddad",
];
const sqlList = (names: readonly string[]) => names.map((n) => `'${n}'`).join(", ");
const FIRST_NAMES = sqlList(FIRSTS);
const FIRST_COUNT = FIRSTS.length;
const LAST_NAMES = sqlList(LASTS);
const LAST_COUNT = LASTS.length;

/** Two years of history, ending now. */
const SPAN_MS = 2 * 365 * 86_400_000;
const ID_EPOCH_MS = 1_704_067_200_000; // next_lead_id()'s 2024-01-01

export async function seed(
  databaseUrl: string,
  size: SeedSize,
  progress: (step: string) => void = () => {},
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const run = async (step: string, text: string, values: unknown[] = []) => {
    const started = Date.now();
    await client.query(text, values);
    progress(`${step} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  };
  try {
    await client.query("set synchronous_commit = off");
    await client.query("set maintenance_work_mem = '256MB'");
    const rebuild = await dropForBulkLoad(client);
    await run(
      `${size.providers} providers`,
      `insert into providers (name, rate_limit_per_minute, rate_limit_per_day)
       select 'Scale provider ' || g, 600, 100000 from generate_series(1, $1::int) g`,
      [size.providers],
    );
    const first = Number((await client.query("select min(id) as id from providers")).rows[0].id);
    // Lead g belongs to one of the 20 big providers 70 % of the time, else to any other one.
    const now = Date.now();
    await run(
      `${size.leads.toLocaleString("en-US")} leads`,
      `insert into leads (id, provider_id, external_id, order_number, state, lead_status, first_name, last_name,
         email, phone_number, estimated_ship_date, overseas_type, ship_via, origin_zip, origin_city,
         origin_state_id, origin_state_code, destination_zip, destination_city, destination_state_id,
         destination_state_code, created_at, updated_at, state_changed_at, livemode, phone_e164, email_match,
         quoted_at, ordered_at, sub_id)
       select ((t.ms - $4::bigint) << 12) | (g % 4096),
         $2::bigint + case when g % 10 < 7 then g % 20 else 20 + g % ($3::int - 20) end,
         'ext-' || g, 'LP-' || lpad(g::text, 10, '0'),
         s.state, s.state, n.first, n.last,
         n.email, '(' || n.area || ') ' || n.exchange || '-' || n.line,
         date '2026-12-01', 'DOMESTIC', 'OPEN', '90210', 'Beverly Hills', 5, 'CA', '10001', 'New York', 33, 'NY',
         to_timestamp(t.ms / 1000.0), to_timestamp(least(t.ms + (g % 30)::bigint * 86400000, $5::bigint) / 1000.0),
         to_timestamp(t.ms / 1000.0), not (g % 33 = 0 and t.ms > $5::bigint - $7::bigint * 86400000),
         '+1' || n.area || n.exchange || n.line, n.email,
         case when s.state <> 'LEAD' then to_timestamp(least(t.ms + m.quote_ms, $5::bigint) / 1000.0) end,
         case when s.state = 'ORDER' then to_timestamp(least(t.ms + m.quote_ms + m.order_ms, $5::bigint) / 1000.0) end,
         -- Four leads in five name one of 40 sub-sources (an affiliate's), the rest none.
         case when g % 5 <> 0 then 'src-' || (g / 5) % 40 end
       from generate_series(1, $1::int) g
       cross join lateral (select $5::bigint - ($1::bigint - g) * ($6::bigint / $1::bigint) as ms) t
       cross join lateral (select f.first, l.last, (201 + g % 787)::text as area,
           (200 + (g / 787) % 800)::text as exchange, lpad(((g::bigint * 7919) % 10000)::text, 4, '0') as line,
           lower(f.first || '.' || l.last || g) || '@' || (array['gmail.com', 'yahoo.com', 'outlook.com',
             'icloud.com', 'aol.com', 'hotmail.com', 'comcast.net', 'proton.me'])[1 + g % 8] as email
         from (select (array[${FIRST_NAMES}])[1 + g % ${FIRST_COUNT}] as first) f,
              (select (array[${LAST_NAMES}])[1 + (g / 7) % ${LAST_COUNT}] as last) l) n
       cross join lateral (select case when (g / 3) % 10 < 6 then 'LEAD' when (g / 3) % 10 < 9 then 'QUOTE' else 'ORDER' end as state) s
       -- Quoted 1 to 47 hours after creation, ordered 1 to 97 hours after that (the stats' medians).
       cross join lateral (select (1 + g % 47)::bigint * 3600000 as quote_ms, (1 + g % 97)::bigint * 3600000 as order_ms) m`,
      [size.leads, first, size.providers, ID_EPOCH_MS, now, SPAN_MS, WINDOWS.testDays + BACKLOG_DAYS],
    );
    if (size.vehicles) {
      await run(
        "vehicles (1 to 3 a lead)",
        `insert into vehicles (lead_id, position, year, make, model, type, tariff, deposit, vehicle_run)
         select l.id, k, 2010 + (l.id % 15)::int, 'Toyota', 'Camry', 'CAR', 950, 150, true
         from leads l cross join lateral generate_series(1, 1 + (l.id % 3)::int) k`,
      );
      await run(
        "state history (creation, and each move)",
        `insert into lead_state_history (lead_id, from_state, to_state, lead_status, changed_at, actor)
         select l.id, m.from_state, m.to_state, m.to_state,
           case m.k when 0 then l.created_at when 1 then l.quoted_at else l.ordered_at end, 'provider'
         from leads l cross join lateral (values (0, null, 'LEAD'), (1, 'LEAD', 'QUOTE'), (2, 'QUOTE', 'ORDER'))
           as m(k, from_state, to_state)
         where m.k = 0 or (m.k = 1 and l.state in ('QUOTE', 'ORDER')) or (m.k = 2 and l.state = 'ORDER')`,
      );
    }
    await run(
      `lead events (${size.eventsPerLead} a lead, for the leads of the last ${WINDOWS.eventDays + BACKLOG_DAYS} days)`,
      `insert into lead_events (event_id, provider_id, lead_id, type, created_at, data, livemode)
       select 'evt_' || md5(l.id::text || ':' || k), l.provider_id, l.id,
         case when k = 0 then 'lead.created' else 'lead.quoted' end,
         l.created_at + k * interval '1 hour',
         jsonb_build_object('lead', jsonb_build_object(
           'id', l.id, 'externalId', l.external_id, 'orderNumber', l.order_number, 'state', l.state,
           'leadStatus', l.lead_status, 'firstName', l.first_name, 'lastName', l.last_name, 'email', l.email,
           'phoneNumber', l.phone_number, 'phoneE164', l.phone_e164, 'companyName', null, 'noteFromShipper', null,
           'estimatedShipDate', l.estimated_ship_date, 'overseasType', l.overseas_type, 'shipVia', l.ship_via,
           'origin', jsonb_build_object('zip', l.origin_zip, 'city', l.origin_city, 'stateCode', l.origin_state_code, 'stateId', l.origin_state_id),
           'destination', jsonb_build_object('zip', l.destination_zip, 'city', l.destination_city, 'stateCode', l.destination_state_code, 'stateId', l.destination_state_id),
           'vehicles', jsonb_build_array(jsonb_build_object('year', 2021, 'make', 'Toyota', 'model', 'Camry', 'type', 'CAR',
             'tariff', 950, 'deposit', 150, 'vehicleRun', true)),
           'history', '[]'::jsonb, 'createdAt', l.created_at, 'updatedAt', l.updated_at,
           'stateChangedAt', l.state_changed_at, 'livemode', l.livemode, 'duplicate', null)),
         l.livemode
       from leads l cross join generate_series(0, $1::int - 1) k
       where l.created_at > now() - $2::int * interval '1 day'`,
      [Math.max(1, Math.round(size.eventsPerLead)), WINDOWS.eventDays + BACKLOG_DAYS],
    );
    await run(
      "webhook deliveries (one per event of a provider with a webhook: every third provider)",
      `insert into webhook_deliveries (provider_id, event_sequence, lead_id, state, attempts, next_attempt_at,
         delivered_at, created_at, livemode)
       select e.provider_id, e.id, e.lead_id, 'delivered', 1, e.created_at, e.created_at, e.created_at, e.livemode
       from lead_events e where e.provider_id % 3 = 0 and e.created_at > now() - $1::int * interval '1 day'`,
      [WINDOWS.deliveryDays + BACKLOG_DAYS],
    );
    const audits = Math.round(size.leads * size.auditPerLead);
    await run(
      `${audits.toLocaleString("en-US")} audit entries`,
      `insert into audit_log (actor, action, target_type, target_id, details, at)
       select 'admin-' || (g % 7), case when g % 5 = 0 then 'provider.updated' else 'lead.moved' end,
         case when g % 5 = 0 then 'provider' else 'lead' end,
         case when g % 5 = 0 then ($2::bigint + g % $3::int)::text else g::text end,
         case when g % 5 = 0 then '{}'::jsonb
              else jsonb_build_object('provider_id', ($2::bigint + case when g % 10 < 7 then g % 20 else 20 + g % ($3::int - 20) end)::text) end,
         now() - (g % 700) * interval '1 day'
       from generate_series(1, $1::int) g`,
      [audits, first, size.providers],
    );
    // The request log within its retention: each lead's create (one in ten refused with a code)
    // and four reads of it, over REQUEST_LOG_RETENTION_DAYS, as the writer stores them.
    await run(
      `request log (5 entries a lead, for the leads of the last ${WINDOWS.requestLogDays} days)`,
      `insert into request_log (request_id, created_at, provider_id, livemode, operation, protocol, status,
         outcome, code, detail, external_id, lead_id, duration_ms, client_ip, key_hint, user_agent, request_body)
       select 'req-' || l.id || '-' || k, least(l.created_at + k * interval '7 minutes', now()), l.provider_id, l.livemode,
         case when k = 0 then 'POST /api/v1/public/leads/' else 'GET /api/v1/public/leads/{external_id}/' end,
         'rest',
         case when k = 0 and l.id % 10 = 0 then 422 when k = 0 then 201 else 200 end,
         case when k = 0 and l.id % 10 = 0 then 'rejected' else 'accepted' end,
         case when k = 0 and l.id % 10 = 0 then 'invalid_phone_number' end,
         case when k = 0 and l.id % 10 = 0 then 'phoneNumber is not a valid phone number' end,
         l.external_id, case when k = 0 and l.id % 10 = 0 then null else l.id end,
         2.5, '203.0.113.' || (l.provider_id % 250), 'lp_live_…' || lpad((l.provider_id % 10000)::text, 4, '0'),
         'scale-seed/1.0',
         case when k = 0 then json_build_object('externalId', l.external_id, 'firstName', l.first_name) end
       from leads l cross join generate_series(0, 4) k
       where l.created_at > now() - $1::int * interval '1 day'`,
      [WINDOWS.requestLogDays],
    );
    // The request log's daily outcome counts, as its writer keeps them past the log's retention:
    // each day's accepted leads per provider, mode and sub-source, and one refused request in ten
    // (a bad phone number) and one in thirty (a validation error) besides, over the whole history.
    await run(
      "request outcomes per day (accepted, and refusals by code)",
      `insert into request_outcomes_daily (provider_id, livemode, day, sub_id, code, requests)
       select provider_id, livemode, day, sub_id, c.code, c.requests
       from (select provider_id, livemode, (created_at at time zone 'America/New_York')::date as day,
                    coalesce(sub_id, '') as sub_id, count(*)::int as n
             from leads group by 1, 2, 3, 4) d
       cross join lateral (values ('', d.n), ('invalid_phone_number', d.n / 10), ('validation_error', d.n / 30)) c(code, requests)
       where c.requests > 0`,
    );
    if (size.ledger) await seedLedger(run);
    for (const [step, statement] of rebuild) await run(step, statement);
    // Vacuumed as autovacuum keeps a production table (index-only counts), at the harness's sizes;
    // the plan test's database only needs the statistics.
    if (size.vehicles) await run("vacuum analyze", "vacuum analyze");
    else await run("analyze", "analyze");
  } finally {
    await client.end();
  }
}

/** The tables the seed fills in bulk: their secondary indexes and constraints are built after. */
const BULK_TABLES = [
  "leads",
  "vehicles",
  "lead_state_history",
  "lead_events",
  "webhook_deliveries",
  "audit_log",
  "request_log",
  "request_outcomes_daily",
  "ledger_transactions",
  "ledger_entries",
  "ledger_settlement_queue",
];

/**
 * Drops the bulk tables' foreign keys, unique constraints and indexes other than the primary key,
 * and returns the statements that build them again, as pg_restore loads a dump: an index built
 * once over the loaded rows costs a fraction of maintaining it row by row (2 million ledger
 * entries: 150 s with their nine indexes and two foreign keys, 11 s without), and a foreign key
 * added afterwards checks every row in one join. The rebuilt ones are exactly the migrations'
 * (their definitions are read from the catalog).
 */
async function dropForBulkLoad(client: pg.Client): Promise<[string, string][]> {
  const constraints = await client.query<{ table: string; name: string; type: string; def: string }>(
    `select conrelid::regclass::text as table, conname as name, contype as type, pg_get_constraintdef(oid) as def
     from pg_constraint
     where contype in ('f', 'u') and (conrelid::regclass::text = any($1) or confrelid::regclass::text = any($1))
     order by contype, conname`,
    [BULK_TABLES],
  );
  const indexes = await client.query<{ name: string; def: string }>(
    `select i.indexrelid::regclass::text as name, pg_get_indexdef(i.indexrelid) as def
     from pg_index i
     where i.indrelid::regclass::text = any($1) and not i.indisprimary
       and not exists (select from pg_constraint c where c.conindid = i.indexrelid)
     order by 1`,
    [BULK_TABLES],
  );
  const foreign = constraints.rows.filter((c) => c.type === "f");
  const unique = constraints.rows.filter((c) => c.type === "u");
  for (const c of [...foreign, ...unique]) await client.query(`alter table ${c.table} drop constraint ${c.name}`);
  for (const i of indexes.rows) await client.query(`drop index ${i.name}`);
  return [
    ...indexes.rows.map((i): [string, string] => [`index ${i.name}`, i.def]),
    ...unique.map((c): [string, string] => [
      `unique ${c.name}`,
      `alter table ${c.table} add constraint ${c.name} ${c.def}`,
    ]),
    ...foreign.map((c): [string, string] => [
      `foreign key ${c.name}`,
      `alter table ${c.table} add constraint ${c.name} ${c.def}`,
    ]),
  ];
}

/** Days after which the seed's purchases are settled (the default terms' settlement_days). */
const SETTLEMENT_DAYS = 7;

/**
 * The ledger of the seeded leads, as the service would have posted it: each lead's purchase
 * (1,000 to 3,000 cents) on its provider's pending account, and its settlement onto available
 * once SETTLEMENT_DAYS have passed (the rest queued); every entry with its account's running
 * balance and version, the accounts' balances their sums. Leads' own price columns are left
 * empty (rewriting every lead would double the table; no measured path reads them).
 */
export async function seedLedger(run: (step: string, text: string, values?: unknown[]) => Promise<void>) {
  await run(
    "ledger accounts (four per provider and mode)",
    `insert into ledger_accounts (provider_id, livemode, type, currency)
     select b.provider_id, b.livemode, t, 'USD'
     from (select distinct provider_id, livemode from leads) b
     cross join unnest(array['pending', 'available', 'lead_expense', 'payouts']) t
     order by b.provider_id, b.livemode, array_position(array['pending', 'available', 'lead_expense', 'payouts'], t)`,
  );
  await run(
    "ledger transactions (each lead's purchase, and its settlement after 7 days)",
    `insert into ledger_transactions (public_id, provider_id, livemode, type, idempotency_key, amount_cents, currency,
       lead_id, lead_external_id, lead_order_number, description, created_by, created_at)
     select 'txn_' || md5(k || l.id), l.provider_id, l.livemode,
       case k when 'purchase' then 'lead_purchase' else 'settlement' end, 'lead:' || l.id || ':' || k,
       1000 + (l.id % 5) * 500, 'USD', l.id, l.external_id, l.order_number,
       case k when 'purchase' then 'Lead ' else 'Settled: lead ' end || l.order_number, 'seed',
       l.created_at + case k when 'purchase' then interval '0' else $1::int * interval '1 day' end as at
     from leads l cross join unnest(array['purchase', 'settlement']) k
     where l.duplicate is null and (k = 'purchase' or l.created_at < now() - $1::int * interval '1 day')
     order by at`,
    [SETTLEMENT_DAYS],
  );
  await run(
    "ledger entries (two per transaction, with running balances)",
    `insert into ledger_entries (public_id, transaction_id, account_id, provider_id, livemode, account_type, type,
       amount_cents, balance_after_cents, account_version, currency, lead_id, lead_external_id, lead_order_number,
       description, created_at)
     select 'btx_' || md5(t.id || ':' || leg.account), t.id, a.id, t.provider_id, t.livemode, leg.account, t.type,
       leg.amount, sum(leg.amount) over w, row_number() over w, 'USD', t.lead_id, t.lead_external_id,
       t.lead_order_number, t.description, t.created_at
     from ledger_transactions t
     cross join lateral (values
       (case t.type when 'lead_purchase' then 'lead_expense' else 'pending' end, -t.amount_cents),
       (case t.type when 'lead_purchase' then 'pending' else 'available' end, t.amount_cents)) as leg(account, amount)
     join ledger_accounts a on a.provider_id = t.provider_id and a.livemode = t.livemode and a.type = leg.account
     window w as (partition by a.id order by t.created_at, t.id rows unbounded preceding)`,
  );
  await run(
    "ledger account balances",
    `update ledger_accounts a set balance = s.balance, version = s.version, last_entry_at = s.last
     from (select account_id, sum(amount_cents) as balance, count(*) as version, max(created_at) as last
           from ledger_entries group by account_id) s
     where a.id = s.account_id`,
  );
  await run(
    "settlement queue (the purchases of the last 7 days)",
    `insert into ledger_settlement_queue (transaction_id, provider_id, livemode, lead_id, lead_external_id,
       lead_order_number, amount_cents, currency, settle_at)
     select t.id, t.provider_id, t.livemode, t.lead_id, t.lead_external_id, t.lead_order_number, t.amount_cents,
       t.currency, t.created_at + $1::int * interval '1 day'
     from ledger_transactions t
     where t.type = 'lead_purchase' and t.created_at >= now() - $1::int * interval '1 day'`,
    [SETTLEMENT_DAYS],
  );
}
