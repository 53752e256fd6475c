/**
 * Writes the table of price-rule conditions (src/money/terms.ts PRICE_CONDITIONS) into
 * openapi.yaml (PriceRuleWhen's description) and docs/money.md, between
 * `<!-- price-conditions-table:start -->` and `<!-- price-conditions-table:end -->`, so what
 * providers read is the table the service prices by. `make generate` runs it; `--check`
 * (make check-generate) fails when either file is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { PRICE_CONDITIONS } from "../src/money/terms.ts";

const START = "<!-- price-conditions-table:start -->";
const END = "<!-- price-conditions-table:end -->";

function table(): string[] {
  const cell = (s: string) => s.replaceAll("|", "\\|");
  return [
    "| condition | holds | matches when |",
    "|---|---|---|",
    ...PRICE_CONDITIONS.map((c) => `| \`${c.member}\` | ${cell(c.holds)} | ${cell(c.description)} |`),
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
for (const file of ["openapi/openapi.yaml", "docs/money.md"]) {
  const before = readFileSync(file, "utf8");
  const after = withTable(before, file);
  if (before === after) continue;
  if (check) {
    console.error(`${file}: the price conditions table is stale; run 'make generate' and commit`);
    stale = true;
  } else writeFileSync(file, after);
}
if (stale) process.exit(1);
