/**
 * The audit's mutants: each breaks the code the way an audit of the tests did, in a scratch copy
 * of the working tree, and the named test must then FAIL. A mutant whose test still passes is a
 * test that cannot catch its own subject; the script lists those and exits 1.
 *
 *   node scripts/check-tests-catch.ts                 every mutant, two at a time
 *   node scripts/check-tests-catch.ts fast-paths-off  one, by name
 *   node scripts/check-tests-catch.ts --strict        a mutant that cannot run here is a failure
 *   node scripts/check-tests-catch.ts --jobs 1        one at a time
 *
 * `make test` runs it after the tests (strict in CI: .ci/run sets TEST_STRICT=1, as does
 * `--strict`); `make check-tests-catch` runs it alone. Mutants marked `needs` run only where
 * those services are configured (TEST_DATABASE_URL, REDIS_URL): on a laptop without them it says
 * which mutants did not run, and a strict run fails on them, since a mutant that did not run has
 * not been caught.
 *
 * To add a mutant, add an entry to MUTANTS: the file, exact text and its replacement, and the
 * test (file and `vitest -t` pattern) that must fail; `needs` when that test needs a service.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

interface Mutant {
  readonly name: string;
  readonly file: string;
  /** Exact text → its replacement; each `find` must occur in the file. */
  readonly edits: readonly (readonly [find: string, replace: string])[];
  /** The test file and the test name pattern (vitest -t) that must fail. */
  readonly test: string;
  readonly filter: string;
  readonly needs?: readonly ("TEST_DATABASE_URL" | "REDIS_URL")[];
}

const MUTANTS: readonly Mutant[] = [
  {
    name: "links-from-host",
    file: "src/rest/links.ts",
    edits: [
      [
        "return publicBaseUrl === undefined ? relative : new URL(relative, publicBaseUrl).toString();",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the mutant is source text
        "return `http://${(req as unknown as { headers: { host: string } }).headers.host}${relative}`;",
      ],
    ],
    test: "test/host.test.ts",
    filter: "Host header",
  },
  {
    name: "fast-paths-off",
    file: "src/app.ts",
    // Off whatever FAST_PATHS says: the tests that run with it on must see full-stack answers.
    edits: [["const fast = config.fastPaths", "const fast = false && config.fastPaths"]],
    test: "test/fast-path.test.ts",
    filter: "same",
  },
  {
    name: "webhook-timer-never-fires",
    file: "src/webhooks/webhook.http.ts",
    edits: [["}, options.timeoutMs);", "}, 2 ** 31 - 1);"]],
    test: "test/webhooks.test.ts",
    filter: "never answers",
  },
  {
    name: "signature-without-body",
    file: "src/webhooks/webhook.http.ts",
    edits: [["new Webhook(s).sign(id, at, body)", 'new Webhook(s).sign(id, at, "")']],
    test: "test/webhooks.test.ts",
    filter: "signed per Standard Webhooks|test vector",
  },
  {
    name: "last-used-written-once-ever",
    file: "src/api-keys/api-key.service.ts",
    edits: [["if ((lastTouched.get(keyId) ?? 0) + touchInterval > t) return;", "if (lastTouched.has(keyId)) return;"]],
    test: "test/management.test.ts",
    filter: "last_used_at once a minute",
  },
  {
    name: "ship-via-table-wrong",
    file: "src/leads/lead.ts",
    edits: [
      [
        'FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],',
        'FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF", "DRIVE_AWAY"],',
      ],
    ],
    test: "test/leads.rest.test.ts",
    filter: "overseas_type",
  },
  {
    name: "rpc-get-lead-never-finds",
    file: "src/leads/lead.rpc.ts",
    edits: [
      [
        "return { lead: leadMessage(await leads.get(providerOf(ctx), req.externalId)) };",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the mutant is source text
        "return { lead: leadMessage(await leads.get(providerOf(ctx), `${req.externalId}-nope`)) };",
      ],
    ],
    test: "test/access.test.ts",
    filter: "NOT_FOUND",
  },
  {
    name: "move-outside-its-transaction",
    file: "src/leads/lead-workflow.service.ts",
    edits: [["await applyTransition(trx, {", "await applyTransition(db, {"]],
    test: "test/webhooks.test.ts",
    filter: "rolled back",
    needs: ["TEST_DATABASE_URL"],
  },
  {
    name: "watch-stream-breaks",
    file: "src/leads/lead-workflow.rpc.ts",
    edits: [
      ["const queue: LeadChange[] = [];", "const queue: LeadChange[] = [];\n      let mutantSent = 0;"],
      [
        "for (let c = queue.shift(); c; c = queue.shift()) yield changeMessage(c);",
        'for (let c = queue.shift(); c; c = queue.shift()) { yield changeMessage(c); if (req.includeTest && ++mutantSent === 2) throw new Error("the stream broke"); }',
      ],
    ],
    test: "test/sandbox.test.ts",
    filter: "include_test|test leads apart|workflow",
  },
  {
    name: "listener-open-until-exit",
    file: "src/server.ts",
    edits: [
      [
        "const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));",
        "const closed = Promise.resolve();",
      ],
    ],
    test: "test/shutdown.test.ts",
    filter: "refuses new ones",
  },
  {
    name: "one-worker-only",
    file: "src/cluster.ts",
    edits: [
      ["for (let i = 0; i < config.webConcurrency; i++) fork();", "fork();"],
      ["if (listening === config.webConcurrency) {", "if (listening === 1) {"],
    ],
    test: "test/cluster.test.ts",
    filter: "ready when every worker is",
    needs: ["TEST_DATABASE_URL", "REDIS_URL"],
  },
  {
    name: "duplicate-check-without-locks",
    file: "src/intake/intake-guard.sql.ts",
    edits: [["        perform pg_advisory_xact_lock(k);", "        perform k;"]],
    test: "test/intake.test.ts",
    filter: "race: 20 providers",
    needs: ["TEST_DATABASE_URL"],
  },
  {
    name: "another-providers-original-shown",
    file: "src/leads/lead.ts",
    edits: [["original: d.sameProvider && d.original ? { ...d.original } : null", "original: d.original"]],
    test: "test/intake.test.ts",
    filter: "nothing of the other provider",
  },
  {
    name: "cap-count-outside-the-lock",
    file: "src/intake/intake-guard.sql.ts",
    edits: [
      ["        keys := keys || hashtextextended('cap:' || p_provider_id || ':' || p_livemode, 0);", "        null;"],
    ],
    test: "test/intake.test.ts",
    filter: "50 creates at once over both instances",
    needs: ["TEST_DATABASE_URL"],
  },
];

const root = join(import.meta.dirname, "..");
const args = process.argv.slice(2);
const strict = args.includes("--strict") || process.env.TEST_STRICT === "1";
const jobsAt = args.indexOf("--jobs");
const jobs = Math.max(1, jobsAt >= 0 ? Number(args[jobsAt + 1]) || 1 : 2);
const only = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--jobs");
const chosen = MUTANTS.filter((m) => only === undefined || m.name === only);
if (chosen.length === 0) {
  process.stderr.write(`no mutant named ${only}; known: ${MUTANTS.map((m) => m.name).join(", ")}\n`);
  process.exit(2);
}

/** `text` with `m`'s edits applied in turn; each must find its text, or the mutant would test nothing. */
function mutate(m: Mutant, text: string): string {
  let mutated = text;
  for (const [find, replace] of m.edits) {
    if (!mutated.includes(find))
      throw new Error(`${m.name}: "${find}" is not in ${m.file} any more; update the mutant`);
    mutated = mutated.replace(find, replace);
  }
  return mutated;
}
for (const m of chosen) mutate(m, readFileSync(join(root, m.file), "utf8"));

const notRun = chosen.filter((m) => (m.needs ?? []).some((v) => !process.env[v]));
const runnable = chosen.filter((m) => !notRun.includes(m));
for (const m of notRun) {
  const missing = (m.needs ?? []).filter((v) => !process.env[v]);
  process.stdout.write(`NOT RUN ${m.name}: needs ${missing.join(", ")} (${m.test} -t "${m.filter}")\n`);
}

/** A scratch copy of the working tree per job: sources copied (12 MB), node_modules linked. */
const skip = new Set(["node_modules", ".toolchain", ".data", ".git", "reports", ".stryker-tmp", "coverage"]);
function scratchCopy(): string {
  const scratch = mkdtempSync(join(tmpdir(), "lp-mutants-"));
  cpSync(root, scratch, {
    recursive: true,
    filter: (src) => !skip.has(relative(root, src).split("/")[0] ?? ""),
  });
  symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"));
  return scratch;
}

/** Runs `m`'s test in `scratch` with `m` applied; true when the test failed, as it must. */
async function caught(m: Mutant, scratch: string): Promise<{ killed: boolean; seconds: number; output: string }> {
  const path = join(scratch, m.file);
  const original = readFileSync(path, "utf8");
  writeFileSync(path, mutate(m, original));
  const started = Date.now();
  try {
    const run = spawn(join(scratch, "node_modules/.bin/vitest"), ["run", m.test, "-t", m.filter, "--reporter=dot"], {
      cwd: scratch,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    run.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    run.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    const timer = setTimeout(() => run.kill("SIGKILL"), 600_000);
    const status = await new Promise<number | null>((resolve) => run.on("close", (code) => resolve(code)));
    clearTimeout(timer);
    const noTests = /No test files found|no tests|Tests\s+\d+ skipped/i.test(output);
    return { killed: status !== 0 && !noTests, seconds: Math.round((Date.now() - started) / 1000), output };
  } finally {
    writeFileSync(path, original);
  }
}

const began = Date.now();
const survivors: string[] = [];
const queue = [...runnable];
const scratches: string[] = [];
try {
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      const scratch = scratchCopy();
      scratches.push(scratch);
      for (let m = queue.shift(); m; m = queue.shift()) {
        const { killed, seconds, output } = await caught(m, scratch);
        if (killed) {
          process.stdout.write(`killed  ${m.name}: ${m.test} -t "${m.filter}" failed, as it must (${seconds} s)\n`);
        } else {
          survivors.push(m.name);
          const tail = output.trimEnd().split("\n").slice(-15).join("\n");
          process.stdout.write(
            `ALIVE   ${m.name}: ${m.test} -t "${m.filter}" passed against the mutant (${seconds} s)\n${tail}\n`,
          );
        }
      }
    }),
  );
} finally {
  for (const scratch of scratches) rmSync(scratch, { recursive: true, force: true });
}

const took = Math.round((Date.now() - began) / 1000);
const summary = `the audit's mutants: ${runnable.length - survivors.length} killed, ${survivors.length} alive, ${notRun.length} not run, in ${took} s`;
if (notRun.length > 0 && strict) {
  process.stdout.write(
    `${summary}: FAIL, a strict run needs every mutant run; set ${[...new Set(notRun.flatMap((m) => m.needs ?? []))].filter((v) => !process.env[v]).join(" and ")}\n`,
  );
  process.exit(1);
}
if (notRun.length > 0) {
  process.stdout.write(
    `${summary} (not run here, so not shown caught: ${notRun.map((m) => m.name).join(", ")}; CI runs them)\n`,
  );
} else {
  process.stdout.write(`${summary}\n`);
}
process.exit(survivors.length === 0 ? 0 : 1);
