/**
 * Writes the intake rule table (src/intake/rule-table.ts) into openapi.yaml (createLead's
 * description) and docs/intake.md, between `<!-- intake-rules-table:start -->` and
 * `<!-- intake-rules-table:end -->`, so what providers read is the table the service enforces.
 * `make generate` runs it; `--check` (make check-generate) fails when either file is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { INTAKE_RULES_TABLE } from "../src/intake/rule-table.ts";

const START = "<!-- intake-rules-table:start -->";
const END = "<!-- intake-rules-table:end -->";

const APPLIES: Record<string, string> = {
  live_and_test: "live and test",
  live: "live only",
  live_and_test_separately: "live and test, counted apart",
};

function table(): string[] {
  const cell = (s: string) => s.replaceAll("|", "\\|");
  return [
    "| code | field | setting | applies to | answer | rule |",
    "|---|---|---|---|---|---|",
    ...INTAKE_RULES_TABLE.map(
      (r) =>
        `| \`${r.code}\` | ${r.field ? `\`${r.field}\`` : "-"} | ${r.setting ? `\`${r.setting}\`` : "every lead"} | ${APPLIES[r.appliesTo]} | ${r.outcome} | ${cell(r.description)} |`,
    ),
  ];
}

/** `text` with the lines between the markers replaced by the table, each indented as the start marker. */
function withTable(text: string, file: string): string {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file}: the ${START} … ${END} markers are missing`);
  const lineStart = text.lastIndexOf("\n", start) + 1;
  const indent = text.slice(lineStart, start);
  const body = table()
    .map((l) => `${indent}${l}`)
    .join("\n");
  return `${text.slice(0, start)}${START}\n${body}\n${indent}${text.slice(end)}`;
}

const check = process.argv.includes("--check");
let stale = false;
for (const file of ["openapi/openapi.yaml", "docs/intake.md"]) {
  const before = readFileSync(file, "utf8");
  const after = withTable(before, file);
  if (before === after) continue;
  if (check) {
    console.error(`${file}: the intake rule table is stale; run 'make generate' and commit`);
    stale = true;
  } else writeFileSync(file, after);
}
if (stale) process.exit(1);
