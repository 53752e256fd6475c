/**
 * Fails a test run that did not run every test. Reads the JSON report `make test` has vitest
 * write (`--reporter=json`) and names each test that was skipped or left as a todo.
 *
 *   node scripts/check-skipped.ts reports/vitest.json            strict when this machine has every group
 *   node scripts/check-skipped.ts reports/vitest.json --strict   strict always (TEST_STRICT=1, .ci/run)
 *
 * A todo always fails. A skipped test fails when the run is strict: with --strict, or when this
 * machine has every group of tests (scripts/test-groups.sh: Postgres, Redis, chromium, the Postgres
 * server binaries), where nothing has a reason to skip. Only a machine that lacks a group may skip
 * the tests that need it; then this lists them after the line that names the missing groups.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

interface Report {
  readonly numTotalTests: number;
  readonly testResults: readonly {
    readonly name: string;
    readonly assertionResults: readonly { readonly fullName: string; readonly status: string }[];
  }[];
}

const root = join(import.meta.dirname, "..");
const [file, ...flags] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write("usage: node scripts/check-skipped.ts <vitest json report> [--strict]\n");
  process.exit(2);
}
let report: Report;
try {
  report = JSON.parse(readFileSync(file, "utf8")) as Report;
} catch (err) {
  process.stderr.write(`skipped tests: no vitest report to read at ${file} (${(err as Error).message})\n`);
  process.exit(1);
}

const everyGroup = spawnSync(join(root, "scripts/test-groups.sh"), ["strict"], { stdio: "ignore" }).status === 0;
const strict = flags.includes("--strict") || process.env.TEST_STRICT === "1" || everyGroup;

const notRun = { skipped: [] as string[], todo: [] as string[] };
for (const result of report.testResults) {
  for (const test of result.assertionResults) {
    const name = `${relative(root, result.name)} › ${test.fullName}`;
    if (test.status === "todo") notRun.todo.push(name);
    else if (test.status !== "passed" && test.status !== "failed") notRun.skipped.push(name);
  }
}

const list = (names: readonly string[]) => names.map((n) => `  ${n}\n`).join("");
let failed = false;
if (notRun.todo.length > 0) {
  failed = true;
  process.stdout.write(
    `FAIL: ${notRun.todo.length} test(s) left as todo (write them or remove them):\n${list(notRun.todo)}`,
  );
}
if (notRun.skipped.length > 0 && strict) {
  failed = true;
  const why = everyGroup ? "this machine has every group of tests, so none may skip" : "the run is strict";
  process.stdout.write(`FAIL: ${notRun.skipped.length} test(s) skipped (${why}):\n${list(notRun.skipped)}`);
} else if (notRun.skipped.length > 0) {
  process.stdout.write(
    `${notRun.skipped.length} test(s) did not run here, for the missing groups named above:\n${list(notRun.skipped)}`,
  );
}
if (!failed && notRun.skipped.length === 0) {
  process.stdout.write(`skipped tests: none (${report.numTotalTests} tests)\n`);
}
process.exit(failed ? 1 : 0);
