import { type Kysely, sql } from "kysely";

// Written for Postgres 15+ and PGlite alike. Never edit a released migration: add a new one.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table states (
      id integer primary key,
      code text not null unique,
      name text not null
    )`.execute(db);
  // The states as first released, frozen here: later edits to states/states.ts must not change
  // what this migration wrote (a new state gets a new migration).
  await sql`
    insert into states (id, code, name) values
      (1, 'AL', 'Alabama'),
      (2, 'AK', 'Alaska'),
      (3, 'AZ', 'Arizona'),
      (4, 'AR', 'Arkansas'),
      (5, 'CA', 'California'),
      (6, 'CO', 'Colorado'),
      (7, 'CT', 'Connecticut'),
      (8, 'DE', 'Delaware'),
      (9, 'DC', 'District of Columbia'),
      (10, 'FL', 'Florida'),
      (11, 'GA', 'Georgia'),
      (12, 'HI', 'Hawaii'),
      (13, 'ID', 'Idaho'),
      (14, 'IL', 'Illinois'),
      (15, 'IN', 'Indiana'),
      (16, 'IA', 'Iowa'),
      (17, 'KS', 'Kansas'),
      (18, 'KY', 'Kentucky'),
      (19, 'LA', 'Louisiana'),
      (20, 'ME', 'Maine'),
      (21, 'MD', 'Maryland'),
      (22, 'MA', 'Massachusetts'),
      (23, 'MI', 'Michigan'),
      (24, 'MN', 'Minnesota'),
      (25, 'MS', 'Mississippi'),
      (26, 'MO', 'Missouri'),
      (27, 'MT', 'Montana'),
      (28, 'NE', 'Nebraska'),
      (29, 'NV', 'Nevada'),
      (30, 'NH', 'New Hampshire'),
      (31, 'NJ', 'New Jersey'),
      (32, 'NM', 'New Mexico'),
      (33, 'NY', 'New York'),
      (34, 'NC', 'North Carolina'),
      (35, 'ND', 'North Dakota'),
      (36, 'OH', 'Ohio'),
      (37, 'OK', 'Oklahoma'),
      (38, 'OR', 'Oregon'),
      (39, 'PA', 'Pennsylvania'),
      (40, 'RI', 'Rhode Island'),
      (41, 'SC', 'South Carolina'),
      (42, 'SD', 'South Dakota'),
      (43, 'TN', 'Tennessee'),
      (44, 'TX', 'Texas'),
      (45, 'UT', 'Utah'),
      (46, 'VT', 'Vermont'),
      (47, 'VA', 'Virginia'),
      (48, 'WA', 'Washington'),
      (49, 'WV', 'West Virginia'),
      (50, 'WI', 'Wisconsin'),
      (51, 'WY', 'Wyoming'),
      (52, 'PR', 'Puerto Rico'),
      (53, 'AA', 'Armed Forces Americas'),
      (54, 'AE', 'Armed Forces Europe'),
      (55, 'AP', 'Armed Forces Pacific')`.execute(db);

  await sql`
    create table providers (
      id bigint generated always as identity primary key,
      name text not null,
      contact_email text,
      is_active boolean not null default true,
      rate_limit_per_minute integer not null default 60 check (rate_limit_per_minute > 0),
      rate_limit_per_day integer not null default 2000 check (rate_limit_per_day > 0),
      webhook_url text,
      notes text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create unique index providers_name_lower_key on providers (lower(name))`.execute(db);

  await sql`
    create table api_keys (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      digest text not null unique,
      ciphertext text not null,
      masked text not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`.execute(db);
  await sql`create index api_keys_provider_id_idx on api_keys (provider_id, id desc)`.execute(db);

  await sql`create sequence lead_order_number_seq`.execute(db);
  await sql`
    create table leads (
      id bigint generated always as identity primary key,
      provider_id bigint not null references providers (id),
      external_id text not null,
      order_number text not null unique
        default ('LP-' || lpad(nextval('lead_order_number_seq')::text, 8, '0')),
      state text not null check (state in ('LEAD', 'QUOTE', 'ORDER')),
      lead_status text not null,
      first_name text not null,
      last_name text not null,
      email text not null,
      phone_number text not null,
      company_name text,
      note_from_shipper text,
      estimated_ship_date date not null,
      overseas_type text not null,
      ship_via text not null,
      origin_zip text not null,
      origin_city text not null,
      origin_state_id integer not null references states (id),
      origin_state_code text not null,
      destination_zip text,
      destination_city text,
      destination_state_id integer references states (id),
      destination_state_code text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      state_changed_at timestamptz not null default now()
    )`.execute(db);
  // The idempotency guarantee: one row per (provider, external_id), race-safe.
  await sql`create unique index leads_provider_external_id_key on leads (provider_id, external_id)`.execute(db);
  await sql`create index leads_state_id_idx on leads (state, id)`.execute(db);

  await sql`
    create table vehicles (
      lead_id bigint not null references leads (id) on delete cascade,
      position smallint not null,
      year integer not null,
      make text not null,
      model text not null,
      type text not null,
      tariff bigint not null,
      deposit bigint not null,
      vehicle_run boolean,
      primary key (lead_id, position)
    )`.execute(db);

  await sql`
    create table lead_state_history (
      id bigint generated always as identity primary key,
      lead_id bigint not null references leads (id) on delete cascade,
      from_state text,
      to_state text not null,
      lead_status text not null,
      changed_at timestamptz not null default now(),
      actor text not null
    )`.execute(db);
  await sql`create index lead_state_history_lead_id_idx on lead_state_history (lead_id, id)`.execute(db);

  await sql`
    create table audit_log (
      id bigint generated always as identity primary key,
      actor text not null,
      action text not null,
      target_type text not null,
      target_id text not null,
      details jsonb not null default '{}',
      at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ["audit_log", "lead_state_history", "vehicles", "leads", "api_keys", "providers", "states"]) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
  await sql`drop sequence if exists lead_order_number_seq`.execute(db);
}
