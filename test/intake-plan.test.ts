/**
 * Issue 22: the duplicate lookup and the cap count stay index scans on a table of 1M leads, on
 * Postgres, in the custom plan and in the generic plan a plpgsql function may switch to after a
 * few calls (intake_guard's statements are prepared). The queries are intake_guard's own text,
 * read from migration 0007, so a change to the function is what this test plans.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

const LEADS = 1_000_000;
const MIGRATION = readFileSync(new URL("../src/db/migrations/0007-intake.ts", import.meta.url), "utf8");

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

const COUNT = /select count\(\*\) into used from \(([^;]*?)\) s;/s.exec(MIGRATION)?.[1];

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}
function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

describe.each(BACKENDS.filter((b) => b.name === "postgres"))(`the intake plans on ${LEADS} leads ($name)`, () => {
  let t: TestApp;
  let client: pg.Client;
  beforeAll(async () => {
    t = await startTestApp({ name: "postgres" });
    client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    await client.query(`insert into providers (name, rate_limit_per_minute, rate_limit_per_day, created_at, updated_at)
      select 'Plan provider ' || g, 60, 2000, now(), now() from generate_series(1, 50) g`);
    // Skewed: a fifth of the leads belong to the first provider; phones and emails mostly distinct.
    await client.query(`
      insert into leads (id, provider_id, livemode, external_id, state, lead_status, first_name, last_name, email,
        phone_number, phone_e164, email_match, estimated_ship_date, overseas_type, ship_via, origin_zip, origin_city,
        origin_state_id, origin_state_code, created_at, updated_at, state_changed_at)
      select g, case when g % 5 = 0 then 1 else 1 + g % 50 end, g % 20 <> 0, 'plan-' || g, 'LEAD', 'LEAD', 'P', 'L',
        'p' || g || '@example.com', '+1 212 ' || g, '+1212' || lpad((g % 9000000)::text, 7, '0'),
        'p' || g || '@example.com', date '2026-12-01', 'DOMESTIC', 'OPEN', '10001', 'New York', 33, 'NY',
        now() - make_interval(secs => (${LEADS} - g) * 3), now(), now()
      from generate_series(1, ${LEADS}) g`);
    await client.query("analyze leads");
  }, 300_000);
  afterAll(async () => {
    await client?.end();
    await t?.stop();
  });

  async function plan(text: string, values: unknown[], generic: boolean): Promise<PlanNode[]> {
    await client.query(`set plan_cache_mode = ${generic ? "force_generic_plan" : "force_custom_plan"}`);
    await client.query("deallocate all");
    const types = values.map((v) => (typeof v === "boolean" ? "boolean" : typeof v === "number" ? "bigint" : "text"));
    await client.query(`prepare q(${types.join(", ")}) as ${text}`);
    const args = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(", ");
    const { rows } = await client.query(`explain (format json) execute q(${args})`);
    return nodes((rows[0]["QUERY PLAN"] as Array<{ Plan: PlanNode }>)[0]?.Plan as PlanNode);
  }

  const cutoff = new Date(Date.now() - 30 * 86_400_000).toISOString();
  it.each([
    ["phone_e164", "leads_phone_match_idx", "+12120000500"],
    ["email_match", "leads_email_match_idx", "p500@example.com"],
  ] as const)(
    "looks a duplicate up by %s with an index scan of %s, custom and generic plans alike",
    async (key, index, value) => {
      for (const generic of [false, true]) {
        for (const livemode of [true, false]) {
          const all = await plan(lookup(key), [value, cutoff, livemode, 1, "x"], generic);
          const where = `${key}, ${generic ? "generic" : "custom"} plan, livemode ${livemode}`;
          expect(
            all.map((n) => n["Node Type"]),
            where,
          ).not.toContain("Seq Scan");
          expect(
            all.map((n) => n["Node Type"]),
            where,
          ).not.toContain("Sort");
          expect(
            all.some((n) => n["Index Name"] === index),
            `${where}: ${JSON.stringify(all)}`,
          ).toBe(true);
        }
      }
    },
  );

  it("counts a cap's window with an index-only scan of the provider's leads, bounded by the cap", async () => {
    expect(COUNT).toBeDefined();
    const text = (COUNT as string)
      .replaceAll("p_provider_id", "$1")
      .replaceAll("p_livemode", "$2")
      .replaceAll("p_cap_starts[i]", "$3::timestamptz")
      .replaceAll("p_cap_limits[i]", "$4");
    for (const generic of [false, true]) {
      const all = await plan(text, [1, true, new Date(Date.now() - 86_400_000).toISOString(), 500], generic);
      expect(all.map((n) => n["Node Type"])).not.toContain("Seq Scan");
      expect(all.some((n) => n["Index Name"] === "leads_provider_created_idx")).toBe(true);
      expect(all.map((n) => n["Node Type"])).toContain("Limit");
    }
  });
});
