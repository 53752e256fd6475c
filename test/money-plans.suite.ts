/**
 * The ledger's reads at scale, on Postgres, as test/scale-plans.test.ts does for the leads: the
 * database test/scale-plans.test.ts seeds (SIZES.plans: the first 20 of 200 providers own 70 % of
 * the leads) with their purchases and settlements, and every list and statement query of money.repository.ts EXPLAIN ANALYZEd
 * with the values it was sent: none may read a ledger table sequentially, walk an index discarding
 * more than 10,000 rows, or sort more than a few pages of rows.
 */
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../src/db/schema.ts";
import {
  balancesAt,
  firstLineAt,
  linePosition,
  listLines,
  payables,
  periodLines,
  periodTotals,
  purchasesPerDay,
} from "../src/money/money.repository.ts";
import { dayWindow, periodOf } from "../src/money/statement.ts";
import { plansDatabase, releasePlansDatabase } from "./helpers/plans-database.ts";

const LEDGER = new Set(["ledger_entries", "ledger_transactions", "ledger_accounts", "ledger_settlement_queue"]);
const SORT_LIMIT = 5_000;
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

const rowsOut = (n: PlanNode) => n["Actual Rows"] * n["Actual Loops"];

/** Every index the plan reads. */
const indexesOf = (node: PlanNode): string[] => [
  ...(node["Index Name"] ? [node["Index Name"]] : []),
  ...(node.Plans ?? []).flatMap(indexesOf),
];

function problemsOf(node: PlanNode, out: string[] = []): string[] {
  const relation = node["Relation Name"] ?? "";
  if (node["Node Type"] === "Seq Scan" && LEDGER.has(relation) && relation !== "ledger_accounts") {
    out.push(`sequential scan of ${relation} (${rowsOut(node)} rows kept)`);
  }
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

describe.skipIf(!process.env.TEST_DATABASE_URL)("the ledger's query plans at half a million leads (Postgres)", () => {
  let pool: pg.Pool;
  let db: Kysely<Database>;
  const captured: CompiledQuery[] = [];
  let big = 0;
  let small = 0;
  let someLead = "";
  let someLine = "";

  beforeAll(async () => {
    const url = await plansDatabase();
    pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on("error", () => {});
    db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        if (event.level === "query") captured.push(event.query);
      },
    });
    const providers = await pool.query<{ id: string }>("select id from providers order by id");
    big = Number(providers.rows[0]?.id);
    small = Number(providers.rows.at(-1)?.id);
    const line = await pool.query<{ public_id: string; lead_external_id: string }>(
      `select public_id, lead_external_id from ledger_entries
       where provider_id = $1 and livemode and account_type = 'pending' order by created_at desc, id desc offset 500 limit 1`,
      [big],
    );
    someLine = line.rows[0]?.public_id ?? "";
    someLead = line.rows[0]?.lead_external_id ?? "";
  }, 900_000);
  afterAll(async () => {
    await db?.destroy();
    await releasePlansDatabase();
  });

  async function plan(query: () => Promise<unknown>) {
    captured.length = 0;
    await query();
    const statement = captured.at(-1);
    if (!statement) throw new Error("no statement captured");
    const explained = await pool.query(`explain (analyze, format json) ${statement.sql}`, [...statement.parameters]);
    const root = (explained.rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]?.Plan as PlanNode;
    const text = await pool.query(`explain (analyze) ${statement.sql}`, [...statement.parameters]);
    return {
      problems: problemsOf(root),
      indexes: indexesOf(root),
      text: text.rows.map((r) => r["QUERY PLAN"]).join("\n"),
    };
  }

  const yearAgo = () => new Date(Date.now() - 365 * 86_400_000);
  const month = (d: Date) =>
    new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York", year: "numeric", month: "2-digit" })
      .format(d)
      .slice(0, 7);
  const book = () => ({ providerId: big, livemode: true });
  /** Purchases per business day: the portal's earnings chart and the dashboard's spend, with the index each must read. */
  const days = (n: number) => dayWindow(new Date(), "America/New_York", n);
  const perDay = (scope: { providerId: number; livemode: boolean } | { livemode: boolean }, n: number) => {
    const w = days(n);
    return purchasesPerDay(db, scope, "America/New_York", w.start, w.end);
  };
  const PER_DAY: [string, () => Promise<unknown>, string][] = [
    ["a big provider's earnings per day, 30 days", () => perDay(book(), 30), "ledger_entries_provider_type_idx"],
    [
      "a small provider's earnings per day, a year",
      () => perDay({ providerId: small, livemode: true }, 366),
      "ledger_entries_provider_type_idx",
    ],
    [
      "every provider's spend per day, 30 days",
      () => perDay({ livemode: true }, 30),
      "ledger_entries_purchases_day_idx",
    ],
    [
      "every provider's test spend per day, 30 days",
      () => perDay({ livemode: false }, 30),
      "ledger_entries_purchases_day_idx",
    ],
  ];

  const CASES: [string, () => Promise<unknown>][] = [
    ["a big provider's lines, first page", () => listLines(db, book(), {}, 21)],
    ["a small provider's lines, first page", () => listLines(db, { providerId: small, livemode: true }, {}, 21)],
    ["a big provider's settlements", () => listLines(db, book(), { type: "settlement" }, 21)],
    ["a big provider's payouts (it has none)", () => listLines(db, book(), { type: "payout" }, 21)],
    ["a big provider's lines of one lead", () => listLines(db, book(), { externalId: someLead }, 21)],
    ["a big provider's lines before a year ago", () => listLines(db, book(), { createdBefore: yearAgo() }, 21)],
    ["a big provider's test lines (it has few)", () => listLines(db, { providerId: big, livemode: false }, {}, 21)],
    [
      "a big provider's second page",
      async () => {
        const before = await linePosition(db, book(), someLine);
        return listLines(db, book(), { before }, 21);
      },
    ],
    ["where a page token's line is", () => linePosition(db, book(), someLine)],
    ["a big provider's first line", () => firstLineAt(db, book())],
    [
      "a big provider's balances at 25 month boundaries (the statements list)",
      () =>
        balancesAt(
          db,
          book(),
          Array.from(
            { length: 25 },
            (_, i) => periodOf(month(new Date(Date.now() - i * 30 * 86_400_000)), "America/New_York").start,
          ),
        ),
    ],
    [
      "a big provider's month a year ago, totals",
      () => {
        const p = periodOf(month(yearAgo()), "America/New_York");
        return periodTotals(db, book(), p.start, p.end);
      },
    ],
    [
      "a big provider's month a year ago, lines for the CSV",
      () => {
        const p = periodOf(month(yearAgo()), "America/New_York");
        return periodLines(db, book(), p.start, p.end, undefined, 2000);
      },
    ],
    ["the payables, first page", () => payables(db, true, 0, 51)],
    ...PER_DAY.map(([name, query]) => [name, query] as [string, () => Promise<unknown>]),
  ];

  it.each(CASES)("%s: index scans, nothing read and thrown away, no big sort", async (_name, query) => {
    const { problems, text } = await plan(query);
    expect(problems, text).toEqual([]);
  });

  it.each(PER_DAY)("%s: reads its index", async (_name, query, index) => {
    const { indexes, text } = await plan(query);
    expect(indexes, text).toContain(index);
  });
});
