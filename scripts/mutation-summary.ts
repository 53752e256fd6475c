/**
 * The mutation score per module from Stryker's JSON report (`make mutation`): killed + timed out
 * over every valid mutant (no coverage counts as survived), and the survivors by line. Exits 1 when
 * a module is under 80 %.
 */
import { readFileSync } from "node:fs";

interface Mutant {
  readonly status: string;
  readonly mutatorName: string;
  readonly replacement?: string;
  readonly location: { readonly start: { readonly line: number } };
}
const report = JSON.parse(readFileSync(process.argv[2] ?? "reports/mutation/mutation.json", "utf8")) as {
  files: Record<string, { mutants: Mutant[] }>;
};
const VALID = new Set(["Killed", "Timeout", "Survived", "NoCoverage"]);
let failing = 0;
const rows: string[] = [];
for (const [file, { mutants }] of Object.entries(report.files).sort()) {
  const valid = mutants.filter((m) => VALID.has(m.status));
  const caught = valid.filter((m) => m.status === "Killed" || m.status === "Timeout").length;
  const score = valid.length === 0 ? 100 : (100 * caught) / valid.length;
  if (score < 80) failing += 1;
  rows.push(
    `${score.toFixed(1).padStart(6)} %  ${String(caught).padStart(4)}/${String(valid.length).padEnd(4)} ${file}`,
  );
  for (const m of valid.filter((x) => x.status === "Survived" || x.status === "NoCoverage")) {
    rows.push(
      `           ${m.status === "NoCoverage" ? "uncovered" : "survived"} line ${m.location.start.line}: ${m.mutatorName} ${JSON.stringify(m.replacement ?? "")}`,
    );
  }
}
process.stdout.write(`mutation score (killed + timeout over valid mutants), per module:\n${rows.join("\n")}\n`);
process.exit(failing === 0 ? 0 : 1);
