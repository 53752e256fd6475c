/**
 * Indexes on the big tables, built after the migrations and outside their transaction (docs/decisions/0028-big-tables-indexes-and-plans.md).
 *
 * A migration runs in one transaction under Kysely's transaction-scoped advisory lock, and
 * `CREATE INDEX` in it locks the table against writes for as long as the build takes — minutes at
 * millions of rows, during which no lead could be stored. These indexes are built instead with
 * `CREATE INDEX CONCURRENTLY` on Postgres, which lets writes go on: one at a time, under a
 * session-level advisory lock (so instances starting together do not build one twice), each
 * skipped when it exists and is valid, and rebuilt when a build interrupted earlier left it
 * invalid. PGlite (one process, no concurrency to protect) builds them plainly. An index is added
 * here by appending a row; the row's name is its identity, so a row is never edited, only
 * replaced by one with a new name (and the old one dropped by a migration).
 */
import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.ts";

export interface BigTableIndex {
  readonly name: string;
  readonly table: string;
  /** What follows `on <table>`: the columns (and `where …` for a partial index). */
  readonly definition: string;
  /** The query it serves, for the reader. */
  readonly serves: string;
  /**
   * An index (of a migration) this one makes redundant: dropped once this one is built and
   * valid, so the queries it served never go without an index in between.
   */
  readonly replaces?: string;
}

export const BIG_TABLE_INDEXES: readonly BigTableIndex[] = [
  {
    name: "leads_provider_mode_idx",
    table: "leads",
    definition: "(provider_id, livemode, id desc)",
    serves: "Public API and portal: a provider's leads of one mode, newest first (a test key's few among many live)",
  },
  {
    name: "leads_provider_updated_idx",
    table: "leads",
    definition: "(provider_id, livemode, updated_at)",
    serves: "Public API: a provider polls its leads with updated_after",
  },
  {
    name: "leads_provider_state_idx",
    table: "leads",
    definition: "(provider_id, livemode, state, id desc)",
    serves:
      "Public API and portal: a provider's leads in one state (without it, a state the provider has none in walked every lead of its own)",
  },
  {
    name: "lead_events_provider_mode_idx",
    table: "lead_events",
    definition: "(provider_id, livemode, id desc)",
    serves: "Public API events feed of one mode (a test key's events among many live ones)",
  },
  {
    name: "lead_events_provider_type_idx",
    table: "lead_events",
    definition: "(provider_id, livemode, type, id desc)",
    serves: "Public API events feed filtered by type",
  },
  {
    name: "lead_events_provider_created_idx",
    table: "lead_events",
    definition: "(provider_id, livemode, created_at)",
    serves: "Public API events feed with created_after",
  },
  {
    name: "webhook_attempts_test_sends_at_idx",
    table: "webhook_attempts",
    definition: "(at) where delivery_id is null",
    serves: "delivery retention: the test sends past DELIVERY_RETENTION_DAYS, oldest first",
  },
  {
    name: "audit_log_lead_provider_idx",
    table: "audit_log",
    definition: "((details->>'provider_id'), id desc) where target_type = 'lead'",
    serves: "the back office's audit log of one provider: the entries about its leads",
  },
  {
    name: "leads_search_digits_idx",
    table: "leads",
    // The back office's search text (leads/lead.repository.ts LEAD_SEARCH_TEXT), as written there.
    definition:
      "using gin (lead_search_digit_grams(lower(first_name || ' ' || last_name || ' ' || email || ' ' || external_id || ' ' || order_number || ' ' || coalesce(phone_e164, ''))))",
    serves:
      "the back office's search for a term with 5 or more digits in a row (migration 0014): the leads holding all its digit 5-grams",
  },
  {
    name: "leads_search_weeks_idx",
    table: "leads",
    // The back office's search text (leads/lead-search.repository.ts LEAD_SEARCH_TEXT) and the
    // week of the lead's id (SEARCH_WEEK), as written there.
    definition:
      "using gin (lower(first_name || ' ' || last_name || ' ' || email || ' ' || external_id || ' ' || order_number || ' ' || coalesce(phone_e164, '')) gin_trgm_ops, (array[((id >> 12) / 604800000)::int]))",
    serves:
      "the back office's and the portal's substring search, a span of weeks at a time below the newest leads: a common fragment's newest matches without reading every match",
    // Its first column is that index's whole definition: every query it served, this one serves.
    replaces: "leads_search_idx",
  },
  {
    name: "request_log_provider_refused_idx",
    table: "request_log",
    definition: "(provider_id, livemode, created_at desc, entry_id desc) where status >= 400",
    serves:
      "Public API and portal: a provider's refused requests (an outcome other than accepted, or a status of 400 or more), newest first; the provider's whole log was walked for them (request-log.repository.ts)",
  },
  {
    name: "ledger_entries_purchases_day_idx",
    table: "ledger_entries",
    definition:
      "(livemode, created_at) include (amount_cents) where type = 'lead_purchase' and account_type = 'pending'",
    serves:
      "the back office's spend per day: every provider's purchases of one book in a span of days, read from the index alone (money.repository.ts purchasesPerDay)",
  },
  {
    name: "leads_consent_id_idx",
    table: "leads",
    definition: "((consent->>'id')) where consent ? 'id'",
    serves: "a form lead's consent record by its id (cns_…), for the back office and the portal",
  },
  {
    name: "leads_form_created_idx",
    table: "leads",
    definition: "(provider_id, livemode, created_at) where source = 'form'",
    serves: "the portal's Form page: a provider's form leads this week",
  },
  {
    name: "request_log_client_created_idx",
    table: "request_log",
    definition: "(client_ip, created_at desc, entry_id desc) where client_ip is not null",
    serves:
      "the back office's request log of one client address, newest first, whoever sent it (migration 0022 dropped the index of requests without a provider only)",
  },
  {
    name: "request_log_mode_created_idx",
    table: "request_log",
    definition: "(livemode, created_at desc, entry_id desc)",
    serves:
      "the back office's request log of one mode, newest first (test requests are a few among many live: a walk of the whole log found them)",
  },
  {
    name: "request_log_accepted_status_idx",
    table: "request_log",
    definition: "(status, created_at desc, entry_id desc) where status < 400",
    serves:
      "the back office's request log of one status below 400, newest first (request_log_status_idx holds those of 400 or more)",
  },
  {
    name: "request_log_provider_code_idx",
    table: "request_log",
    definition: "(provider_id, livemode, code, created_at desc, entry_id desc) where code is not null",
    serves:
      "Public API, portal and back office: a provider's requests refused with one code, newest first (its refusals were walked for a rare code)",
  },
  {
    name: "leads_name_idx",
    table: "leads",
    definition: "(lower(last_name), lower(first_name), id desc)",
    serves:
      "the back office's search for a whole first and last name: that customer's leads, newest first, stopping at the page (leads/lead-search.repository.ts)",
  },
  {
    name: "leads_provider_sub_id_idx",
    table: "leads",
    definition: "(provider_id, livemode, sub_id, id desc) where sub_id is not null",
    serves: "portal: a provider's leads of one sub-source, newest first (a rare sub_id walked all its leads)",
  },
  {
    name: "lead_stats_periods_period_idx",
    table: "lead_stats_periods",
    definition: "(unit, period)",
    serves:
      "the statistics rollup: a day's, week's or month's rows of every provider, replaced and merged into weeks and months (stats-periods.repository.ts); each read the whole table, 16 times for a month",
  },
];

/** The advisory lock key of the index builder ("lp-index" as a number). */
const LOCK_KEY = 0x6c70_6978;

/**
 * Builds every missing index of BIG_TABLE_INDEXES; returns the names built. On Postgres each
 * build runs outside a transaction, concurrently with writes.
 */
export async function buildBigTableIndexes(db: Kysely<Database>, kind: "postgres" | "pglite"): Promise<string[]> {
  const concurrently = kind === "postgres" ? "concurrently " : "";
  const build = async (on: Kysely<Database>) => {
    const built: string[] = [];
    for (const ix of BIG_TABLE_INDEXES) {
      const state = await indexState(on, ix.name);
      if (state !== "valid") {
        if (state === "invalid") await sql.raw(`drop index ${concurrently}if exists ${ix.name}`).execute(on);
        await sql
          .raw(`create index ${concurrently}if not exists ${ix.name} on ${ix.table} ${ix.definition}`)
          .execute(on);
        built.push(ix.name);
      }
      if (ix.replaces !== undefined && (await indexState(on, ix.replaces)) !== "missing")
        await sql.raw(`drop index ${concurrently}if exists ${ix.replaces}`).execute(on);
    }
    return built;
  };
  // PGlite: one process, nothing to protect, no CONCURRENTLY.
  if (kind === "pglite") return build(db);
  // One connection for the session lock and every statement (CONCURRENTLY may not run in a
  // transaction block, and the lock must be held by the session that builds).
  return db.connection().execute(async (conn) => {
    // Polled, not waited for: CREATE INDEX CONCURRENTLY waits for every running statement to end,
    // and a session blocked in pg_advisory_lock() would be one, waiting for the builder: a deadlock.
    for (;;) {
      const r = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${LOCK_KEY}) as ok`.execute(conn);
      if (r.rows[0]?.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    try {
      return await build(conn);
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_KEY})`.execute(conn);
    }
  });
}

async function indexState(db: Kysely<Database>, name: string): Promise<"valid" | "invalid" | "missing"> {
  const r = await sql<{ valid: boolean }>`
    select i.indisvalid as valid
    from pg_class c join pg_index i on i.indexrelid = c.oid
    where c.relname = ${name} and c.relkind = 'i' and c.relnamespace = current_schema()::regnamespace`.execute(db);
  const row = r.rows[0];
  return row === undefined ? "missing" : row.valid ? "valid" : "invalid";
}
