/**
 * The hot list queries' plans at scale, on Postgres: a database seeded with half a million
 * leads (the first 20 of 200 providers own 70 %) and their ledger, as many events, their deliveries, 100,000
 * audit entries and the request log of the last 30 days. Each query is the repository's own, run once to capture its SQL and values, then
 * EXPLAIN ANALYZEd with those values: no plan may read a big table sequentially, walk an index
 * discarding more than 10,000 rows its filter rejects, or sort more than a few pages of rows. A generic plan is what a named prepared statement switches to after five runs;
 * the value-sensitive lists are sent unnamed (db/database.ts customPlan), which is what EXPLAIN
 * with values shows.
 *
 * The same database also plans intake_guard's duplicate lookups and cap count: its
 * statements are prepared inside plpgsql, so both the custom and the generic plan must use the
 * index. Their text is the one migration 0007 creates the function from (src/intake/intake-guard.sql.ts),
 * so a change to the function is what is planned.
 */
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../src/audit/audit.repository.ts";
import type { Database } from "../src/db/schema.ts";
import { listProviderEvents } from "../src/events/event.repository.ts";
import { INTAKE_GUARD_SQL } from "../src/intake/intake-guard.sql.ts";
import { listProviderLeads } from "../src/leads/lead-lists.repository.ts";
import { searchLeads } from "../src/leads/lead-search.repository.ts";
import { createLogger } from "../src/logger.ts";
import { findEntry, listEntries, listProviderEntries } from "../src/request-log/request-log.repository.ts";
import { leadCounts, periodsThrough, rankProviders, rolledThrough } from "../src/stats/stats.repository.ts";
import { createStatsRollup } from "../src/stats/stats.rollup.ts";
import { listDeliveries } from "../src/webhooks/webhook.repository.ts";
import { plansDatabase, releasePlansDatabase } from "./helpers/plans-database.ts";
// The ledger's plans, on the same seeded database (seeding it once is most of the cost).
import "./money-plans.suite.ts";

const BIG_TABLES = new Set(["leads", "lead_events", "webhook_deliveries", "audit_log", "request_log"]);
/** The statistics' rollups: big in their own way (a row per provider, day and sub-source). */
const STATS_TABLES = new Set(["lead_stats_daily", "lead_stats_periods", "request_outcomes_daily"]);
/** More rows than a page or two: a sort of this many rows means the index did not give the order. */
const SORT_LIMIT = 5_000;

/** Rows a scan may read and throw away (a filter the index did not serve) before it counts as a walk. */
const DISCARD_LIMIT = 10_000;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** The guard as migration 0007 creates it (its text lives beside the intake pipeline). */
const MIGRATION = INTAKE_GUARD_SQL;

/** intake_guard's lookup by `key` (phone_e164 or email_match), its parameters as $1…$5. */
function lookup(key: "phone_e164" | "email_match"): string {
  const re = new RegExp(`select l\\.id[^;]*?where l\\.${key} = p_[a-z]+[^;]*?limit 1`, "s");
  const found = re.exec(MIGRATION)?.[0];
  if (!found) throw new Error(`intake_guard has no lookup by ${key}`);
  return found
    .replace(/ into hit/, "")
    .replaceAll(/p_phone|p_email/g, "$1")
    .replaceAll("cutoff", "$2::timestamptz")
    .replaceAll("p_livemode", "$3")
    .replaceAll("p_provider_id", "$4")
    .replaceAll("p_external_id", "$5");
}

/** intake_guard's count of a cap's window. */
const COUNT = /select count\(\*\) into used from \(([^;]*?)\) s;/s.exec(MIGRATION)?.[1];

interface PreparedNode {
  "Node Type": string;
  "Index Name"?: string;
  Plans?: PreparedNode[];
}
const flatten = (n: PreparedNode): PreparedNode[] => [n, ...(n.Plans ?? []).flatMap(flatten)];

const rowsOut = (n: PlanNode) => n["Actual Rows"] * n["Actual Loops"];

/** What the executed plan did that does not scale: read a big table in full, walk and discard, or sort a lot. */
function problemsOf(node: PlanNode, out: string[] = []): string[] {
  const relation = node["Relation Name"] ?? "";
  if (node["Node Type"] === "Seq Scan" && BIG_TABLES.has(relation))
    out.push(`sequential scan of ${relation} (${rowsOut(node)} rows kept)`);
  const discarded =
    ((node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0)) * node["Actual Loops"];
  if (discarded > DISCARD_LIMIT) out.push(`${node["Node Type"]} on ${relation} read and discarded ${discarded} rows`);
  if (node["Node Type"] === "Sort") {
    const input = (node.Plans ?? []).reduce((sum, child) => sum + rowsOut(child), 0);
    if (input > SORT_LIMIT) out.push(`sort of ${input} rows`);
  }
  for (const child of node.Plans ?? []) problemsOf(child, out);
  return out;
}

describe.skipIf(!process.env.TEST_DATABASE_URL)("hot query plans on half a million leads (Postgres)", () => {
  let pool: pg.Pool;
  let db: Kysely<Database>;
  const captured: CompiledQuery[] = [];
  let big = 0;
  let small = 0;

  beforeAll(async () => {
    const url = await plansDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    // pg-pool's end() resolves before its clients' connections close; the database's drop (with
    // force) then terminates one still closing, which reports it as an idle client's error. A
    // query's own errors reject its promise; this listener only keeps that report from being an
    // uncaught exception (it failed a CI run once: 57P01 after every test had passed).
    pool.on("error", () => {});
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === "query") captured.push(event.query);
      },
    });
    const providers = await pool.query<{ id: string }>("select id from providers order by id");
    big = Number(providers.rows[0]?.id); // one of the 20 that own 70 %
    small = Number(providers.rows.at(-1)?.id);
  }, 600_000);
  afterAll(async () => {
    await db?.destroy();
    await releasePlansDatabase();
  });

  /** Runs `query` (the repository's), then EXPLAINs the statement it sent with its values. */
  async function plan(
    query: () => Promise<unknown>,
  ): Promise<{ problems: string[]; text: string; indexes: string[]; nodes: string[] }> {
    captured.length = 0;
    // The seed's events carry a stub payload the mapping cannot read; the statement is what counts
    // (a statement that failed would fail its EXPLAIN below).
    await query().catch(() => undefined);
    const statement = captured.at(-1);
    if (!statement) throw new Error("no statement captured");
    const explained = await pool.query(`explain (analyze, format json) ${statement.sql}`, [...statement.parameters]);
    const root = (explained.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
    const problems = problemsOf(root);
    const all = (function walk(n: PlanNode): PlanNode[] {
      return [n, ...(n.Plans ?? []).flatMap(walk)];
    })(root);
    const indexes = all.flatMap((n) => (n["Index Name"] ? [n["Index Name"]] : []));
    const nodes = all.map((n) => n["Node Type"]);
    // The readable plan, for failure messages.
    const text = await pool.query(`explain (analyze) ${statement.sql}`, [...statement.parameters]);
    return { problems, text: text.rows.map((r) => r["QUERY PLAN"]).join("\n"), indexes, nodes };
  }

  const hourAgo = () => new Date(Date.now() - 3600_000);
  const CASES: [string, () => Promise<unknown>][] = [
    ["a big provider's leads, first page", () => listProviderLeads(db, { providerId: big, livemode: true }, {}, 21)],
    [
      "a small provider's leads, first page",
      () => listProviderLeads(db, { providerId: small, livemode: true }, {}, 21),
    ],
    [
      "a big provider polls leads updated in the last hour",
      () => listProviderLeads(db, { providerId: big, livemode: true }, { updatedAfter: hourAgo() }, 21),
    ],
    [
      "a big provider polls leads updated in the last day",
      () =>
        listProviderLeads(
          db,
          { providerId: big, livemode: true },
          { updatedAfter: new Date(Date.now() - 86_400_000) },
          21,
        ),
    ],
    ["a big provider's test leads", () => listProviderLeads(db, { providerId: big, livemode: false }, {}, 21)],
    ["a big provider's events, first page", () => listProviderEvents(db, { providerId: big, livemode: true }, {}, 21)],
    [
      "a big provider's events of the last hour",
      () => listProviderEvents(db, { providerId: big, livemode: true }, { createdAfter: hourAgo() }, 21),
    ],
    [
      "a big provider's test events of one type",
      () => listProviderEvents(db, { providerId: big, livemode: false }, { type: "lead.quoted" }, 21),
    ],
    ["a big provider's test events", () => listProviderEvents(db, { providerId: big, livemode: false }, {}, 21)],
    [
      "the back office's leads of a week a year ago",
      () =>
        searchLeads(
          db,
          {
            createdAfter: new Date(Date.now() - 365 * 86_400_000),
            createdBefore: new Date(Date.now() - 358 * 86_400_000),
          },
          26,
        ),
    ],
    ["the back office's search for part of an email address", () => searchLeads(db, { q: "ames.garcia1234" }, 26)],
    ["the back office's search for a surname (1 lead in 60)", () => searchLeads(db, { q: "kowalski" }, 26)],
    ["the back office's search for a whole phone number", () => searchLeads(db, { q: "(310) 247-0142" }, 26)],
    ["the back office's search for part of a phone number", () => searchLeads(db, { q: "247-0142" }, 26)],
    ["the back office's search for five digits", () => searchLeads(db, { q: "70142" }, 26)],
    [
      "the back office's search for a whole email address",
      () => searchLeads(db, { q: "James.Garcia1234@gmail.com" }, 26),
    ],
    [
      "a big provider's ordered leads",
      () => listProviderLeads(db, { providerId: big, livemode: true }, { state: "ORDER" }, 21),
    ],
    // The portal's Leads screen: a sub-source, and the console's search held to the provider and mode.
    [
      "a big provider's leads of one sub-source",
      () => listProviderLeads(db, { providerId: big, livemode: true }, { subId: "src-7" }, 21),
    ],
    [
      "a big provider's leads of a sub-source it never used",
      () => listProviderLeads(db, { providerId: big, livemode: true }, { subId: "src-unused" }, 21),
    ],
    [
      "a big provider's search of its leads for part of a phone number",
      () => searchLeads(db, { providerId: big, livemode: true, q: "247-0142" }, 21),
    ],
    [
      "a big provider's search of its leads for a surname",
      () => searchLeads(db, { providerId: big, livemode: true, q: "kowalski" }, 21),
    ],
    [
      "a small provider's search of its test leads for part of an email address",
      () => searchLeads(db, { providerId: small, livemode: false, q: "garcia12" }, 21),
    ],
    ["a small provider's audit log", () => listAudit(db, { providerId: small }, 26)],
    ["a big provider's audit log", () => listAudit(db, { providerId: big }, 26)],
    ["a big provider's webhook deliveries", () => listDeliveries(db, big - (big % 3) + 3, undefined, 21)],
    ["a big provider's requests", () => listProviderEntries(db, { providerId: big, livemode: true }, {}, 26)],
  ];

  // A provider's refusals are a few among its requests: read from the index that holds refusals
  // alone, in its order, or a list of them walks every accepted request of the provider, or of
  // everyone (the scale harness at 5M leads saw the planner choose the log's time index and
  // discard 38,933), or reads and sorts all the provider's refusals (migration 0016).
  const mine = { providerId: big, livemode: true };
  it.each([
    ["requests refused", () => listProviderEntries(db, mine, { outcome: "rejected" }, 26)],
    ["requests answered 422", () => listProviderEntries(db, mine, { status: 422 }, 26)],
    // The back office's list of one provider's refusals: a query per mode, each as the provider's own.
    ["refusals in the back office, one mode", () => listEntries(db, { ...mine, outcome: "rejected" }, 26)],
  ])("a big provider's %s are read from request_log_provider_refused_idx", async (_name, query) => {
    const { problems, text, indexes, nodes } = await plan(query);
    expect(problems, text).toEqual([]);
    expect(indexes, text).toEqual(["request_log_provider_refused_idx"]);
    expect(nodes, text).toEqual(["Limit", "Index Scan"]);
  });

  // Both modes: the test mode's query (the last one sent) finds a few refusals, which the planner
  // may read from the same index and sort (a dozen rows); never the provider's whole log.
  it.each([
    ["refusals", () => listEntries(db, { providerId: big, outcome: "failed" }, 26)],
    ["422s", () => listEntries(db, { providerId: big, status: 422 }, 26)],
  ])(
    "a big provider's %s of both modes in the back office use request_log_provider_refused_idx",
    async (_name, query) => {
      const { problems, text, indexes } = await plan(query);
      expect(problems, text).toEqual([]);
      expect(indexes, text).toEqual(["request_log_provider_refused_idx"]);
    },
  );

  it.each(CASES)("%s: no sequential scan or large sort", async (_name, query) => {
    const { problems, text } = await plan(query);
    expect(problems, text).toEqual([]);
  });

  // The back office's request log, by each of its filters across providers: each read from an
  // index in the list's order (or a few rows sorted), never a walk of the log discarding the
  // rest (the filter by client address walked 837,000 entries at 5M leads for 24).
  const REQUEST_FILTERS: [string, string[], () => Promise<unknown>][] = [
    // A big provider's address or the provider itself is in one entry of about 30: walking the
    // log's time index and discarding a few hundred is as good as their own index.
    [
      "a big provider's client address",
      ["request_log_client_created_idx", "request_log_created_idx"],
      () => listEntries(db, { clientIp: `203.0.113.${big % 250}` }, 26),
    ],
    [
      "a small provider's client address",
      ["request_log_client_created_idx"],
      () => listEntries(db, { clientIp: `203.0.113.${small % 250}` }, 26),
    ],
    [
      "an address no request came from",
      ["request_log_client_created_idx"],
      () => listEntries(db, { clientIp: "198.51.100.9" }, 26),
    ],
    ["status 422", ["request_log_status_idx"], () => listEntries(db, { status: 422 }, 26)],
    [
      "status 201",
      ["request_log_accepted_status_idx", "request_log_created_idx"],
      () => listEntries(db, { status: 201 }, 26),
    ],
    ["status 204 (none)", ["request_log_accepted_status_idx"], () => listEntries(db, { status: 204 }, 26)],
    ["a code", ["request_log_code_idx"], () => listEntries(db, { code: "invalid_phone_number" }, 26)],
    ["an external id", ["request_log_external_id_idx"], () => listEntries(db, { externalId: "ext-499000" }, 26)],
    ["a request id", ["request_log_request_id_idx"], () => listEntries(db, { requestId: "req-1-0" }, 26)],
    ["test mode", ["request_log_mode_created_idx"], () => listEntries(db, { livemode: false }, 26)],
    // Nearly every request is live: the log's own time index, discarding the few test ones, is as good.
    [
      "live mode",
      ["request_log_mode_created_idx", "request_log_created_idx"],
      () => listEntries(db, { livemode: true }, 26),
    ],
    [
      "a big provider, live",
      ["request_log_provider_idx", "request_log_created_idx"],
      () => listEntries(db, { providerId: big, livemode: true }, 26),
    ],
    [
      "a small provider, live",
      ["request_log_provider_idx"],
      () => listEntries(db, { providerId: small, livemode: true }, 26),
    ],
    [
      "a provider's code (its own list)",
      ["request_log_provider_code_idx", "request_log_code_idx"],
      () => listProviderEntries(db, { providerId: big, livemode: true }, { code: "invalid_phone_number" }, 26),
    ],
  ];
  it.each(REQUEST_FILTERS)("the request log filtered by %s reads one of %j", async (_name, accepted, query) => {
    const { problems, text, indexes } = await plan(query);
    expect(problems, text).toEqual([]);
    expect(
      indexes.some((i) => accepted.includes(i)),
      text,
    ).toBe(true);
  });
  it("the request log's entry by request id is an index lookup", async () => {
    const { problems, text, indexes } = await plan(() => findEntry(db, "req-1-0"));
    expect(problems, text).toEqual([]);
    expect(indexes, text).toEqual(["request_log_request_id_idx"]);
  });

  // The back office's search by whole values: an index lookup, whatever the table's size.
  it.each([
    ["an order number", "LP-0000123456", ["leads_order_number_key"]],
    ["an external id", "ext-123456", ["leads_external_id_idx"]],
  ])("the back office's search for %s is an exact lookup", async (_name, q, expected) => {
    const { problems, text, indexes } = await plan(() => searchLeads(db, { q }, 26));
    expect(problems, text).toEqual([]);
    for (const index of expected) expect(indexes, text).toContain(index);
    expect(indexes, text).not.toContain("leads_search_idx");
  });
  it("the back office's search for a first and last name reads no more than a page's worth of matches", async () => {
    const { problems, text } = await plan(() => searchLeads(db, { q: "james smith" }, 26));
    expect(problems, text).toEqual([]);
  });
  // A common email fragment matches thousands of leads: the newest of them are found a span of
  // weeks at a time in the trigram index that holds each lead's week, not by reading every match.
  it("the back office's search for a common part of an email reads no more than a page's worth of matches", async () => {
    const { problems, text, indexes } = await plan(() => searchLeads(db, { q: "mes.smit" }, 26));
    expect(problems, text).toEqual([]);
    expect(indexes, text).toContain("leads_search_weeks_idx");
    expect(indexes, text).not.toContain("leads_search_idx");
  });

  /**
   * Every statement `query` sends, EXPLAINed with its values in one transaction, the settings it
   * makes (set_config) made there too: the rows its scans read, and its problems. The planner is
   * told parallel workers cost nothing, as on a bigger table: a read that leaves parallel plans to
   * it gets one here (a worker's start costs more than these reads on a small machine).
   */
  async function plans(query: () => Promise<unknown>): Promise<{ read: number; problems: string[]; text: string }> {
    captured.length = 0;
    await query();
    let read = 0;
    const problems: string[] = [];
    const texts: string[] = [];
    const client = await pool.connect();
    try {
      await client.query("begin");
      await client.query(
        "set local parallel_setup_cost = 0; set local parallel_tuple_cost = 0; set local min_parallel_index_scan_size = 0; set local min_parallel_table_scan_size = 0",
      );
      for (const statement of captured.filter((c) => /^\s*(select|with)\b/i.test(c.sql))) {
        if (/^\s*select set_config\(/i.test(statement.sql)) {
          await client.query(statement.sql, [...statement.parameters]);
          continue;
        }
        const explained = await client.query(`explain (analyze, format json) ${statement.sql}`, [
          ...statement.parameters,
        ]);
        const root = (explained.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
        const walk = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(walk)];
        for (const n of walk(root)) {
          if (/Scan$/.test(n["Node Type"]) && n["Relation Name"] !== undefined) read += rowsOut(n);
          if (n["Node Type"] === "Seq Scan" && STATS_TABLES.has(n["Relation Name"] ?? ""))
            problems.push(`sequential scan of ${n["Relation Name"]}`);
          if (n["Node Type"].startsWith("Gather")) problems.push("a parallel plan");
        }
        problems.push(...problemsOf(root).filter((p) => !p.startsWith("sort of")));
        const plain = await client.query(`explain (analyze) ${statement.sql}`, [...statement.parameters]);
        texts.push(statement.sql, plain.rows.map((r) => r["QUERY PLAN"]).join("\n"));
      }
    } finally {
      try {
        await client.query("rollback");
      } finally {
        client.release();
      }
    }
    return { read, problems, text: texts.join("\n\n") };
  }

  // Statistics read a row per period and group asked for, whatever the range: from the period
  // rollup, which the job fills first here as a running service has it.
  describe("statistics", () => {
    const ZONE = "America/New_York";
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: ZONE }).format(new Date());
    const back = (days: number) =>
      new Date(Date.parse(`${today}T12:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
    const scope = { zone: ZONE, livemode: true, to: today };
    beforeAll(async () => {
      const rollup = createStatsRollup({ db, zone: ZONE, logger: createLogger("silent") });
      for (let i = 0; i < 100; i += 1) {
        const before = `${await rolledThrough(db)} ${await periodsThrough(db)}`;
        await rollup.runOnce();
        if (`${await rolledThrough(db)} ${await periodsThrough(db)}` === before) break;
      }
    }, 600_000);
    it.each([
      ["every provider, 30 days", 200, { ...scope, from: back(29), granularity: "day" }],
      ["every provider, a year by month", 200, { ...scope, from: back(364), granularity: "month" }],
      ["every provider, 26 weeks", 200, { ...scope, from: back(181), granularity: "week" }],
      ["every provider by sub_id, 30 days", 2_500, { ...scope, from: back(29), granularity: "day", groupBy: "sub_id" }],
      ["the big provider, a year by day", 1_000, { ...scope, from: back(364), granularity: "day", providerId: -1 }],
      ["the big provider, a year by month", 200, { ...scope, from: back(364), granularity: "month", providerId: -1 }],
      [
        "a page of 50 providers, 30 days",
        2_500,
        { ...scope, from: back(29), granularity: "day", groupBy: "provider", providerIds: [] },
      ],
    ] as const)("%s: reads at most %i rows", async (_name, most, s) => {
      const resolved = {
        ...s,
        ...("providerId" in s && { providerId: big }),
        ...("providerIds" in s && {
          providerIds: await rankProviders(
            db,
            { ...s, providerIds: undefined },
            { column: "submitted", descending: true },
            0,
            50,
          ),
        }),
      } as Parameters<typeof leadCounts>[1];
      const { read, problems, text } = await plans(() => leadCounts(db, resolved));
      expect(problems, text).toEqual([]);
      expect(read, text).toBeLessThanOrEqual(most);
    });
    it.each([
      ["30 days", 29, "day"],
      ["a year by month", 364, "month"],
      ["two years by week", 727, "week"],
    ] as const)("ranks every provider over %s from two running-total rows a provider", async (_name, days, unit) => {
      const s = { ...scope, from: back(days), granularity: unit, groupBy: "provider" as const };
      const { read, problems, text } = await plans(() =>
        rankProviders(db, s, { column: "accepted", descending: true }, 0, 51),
      );
      expect(problems, text).toEqual([]);
      expect(text).toContain("lead_stats_running_pkey");
      // 200 providers, two rows each, and the day after the period rollup's rows of the 200.
      expect(read, text).toBeLessThanOrEqual(1_000);
    });
  });

  /** The plan of `text` prepared as plpgsql prepares it, custom or generic, as its nodes. */
  async function prepared(text: string, values: unknown[], generic: boolean): Promise<PreparedNode[]> {
    const client = await pool.connect();
    try {
      await client.query(`set plan_cache_mode = ${generic ? "force_generic_plan" : "force_custom_plan"}`);
      await client.query("deallocate all");
      const types = values.map((v) => (typeof v === "boolean" ? "boolean" : typeof v === "number" ? "bigint" : "text"));
      await client.query(`prepare q(${types.join(", ")}) as ${text}`);
      const args = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(", ");
      const { rows } = await client.query(`explain (format json) execute q(${args})`);
      return flatten((rows[0]["QUERY PLAN"] as Array<{ Plan: PreparedNode }>)[0]?.Plan as PreparedNode);
    } finally {
      await client.query("deallocate all; reset plan_cache_mode");
      client.release();
    }
  }

  const cutoff = new Date(Date.now() - 30 * 86_400_000).toISOString();
  it.each([
    ["phone_e164", "leads_phone_match_idx", "+13102470142"],
    ["email_match", "leads_email_match_idx", "james.garcia1234@gmail.com"],
  ] as const)(
    "intake looks a duplicate up by %s with an index scan of %s, custom and generic plans alike",
    async (key, index, value) => {
      for (const generic of [false, true]) {
        for (const livemode of [true, false]) {
          const all = await prepared(lookup(key), [value, cutoff, livemode, big, "x"], generic);
          const where = `${key}, ${generic ? "generic" : "custom"} plan, livemode ${livemode}: ${JSON.stringify(all)}`;
          const types = all.map((n) => n["Node Type"]);
          expect(types, where).not.toContain("Seq Scan");
          expect(types, where).not.toContain("Sort");
          expect(
            all.some((n) => n["Index Name"] === index),
            where,
          ).toBe(true);
        }
      }
    },
  );

  it("intake counts a cap's window with an index-only scan of the provider's leads, bounded by the cap", async () => {
    expect(COUNT).toBeDefined();
    const text = (COUNT as string)
      .replaceAll("p_provider_id", "$1")
      .replaceAll("p_livemode", "$2")
      .replaceAll("p_cap_starts[i]", "$3::timestamptz")
      .replaceAll("p_cap_limits[i]", "$4");
    for (const generic of [false, true]) {
      const all = await prepared(text, [big, true, new Date(Date.now() - 86_400_000).toISOString(), 500], generic);
      const where = JSON.stringify(all);
      expect(
        all.map((n) => n["Node Type"]),
        where,
      ).not.toContain("Seq Scan");
      expect(
        all.some((n) => n["Index Name"] === "leads_provider_created_idx"),
        where,
      ).toBe(true);
      expect(
        all.map((n) => n["Node Type"]),
        where,
      ).toContain("Limit");
    }
  });
});
