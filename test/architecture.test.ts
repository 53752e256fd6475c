/** The layering rules of docs/architecture.md, checked on the source so a break fails the build. */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const SRC = new URL("../src/", import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const imports = (file: string) =>
  [...readFileSync(file, "utf8").matchAll(/^import[^"]*"([^"]+)"/gm)].map((m) => m[1] ?? "");

/**
 * Domain code: everything in feature folders except their edges (*.rest.ts, *.rpc.ts, outgoing
 * *.http.ts) and their fenced speed-only code (<feature>/fast/, which is an edge too).
 */
const EDGE_FOLDERS = new Set(["rest", "rpc", "edge", "db"]);
const domain = files(SRC).filter((f) => {
  const [folder, name, ...deeper] = relative(SRC, f).split("/");
  if (name === undefined || EDGE_FOLDERS.has(folder ?? "")) return false;
  if (name === "fast" && deeper.length > 0) return false;
  return !/\.(rest|rpc|http)\.ts$/.test(name);
});

describe("layers", () => {
  it("finds the feature folders' services and repositories", () => {
    const names = domain.map((f) => relative(SRC, f));
    expect(names).toContain("leads/lead.service.ts");
    expect(names).toContain("api-keys/api-key.repository.ts");
    expect(names).toContain("states/state.repository.ts");
    expect(names).toContain("webhooks/webhook.worker.ts");
    expect(names).not.toContain("webhooks/webhook.http.ts");
  });

  it.each(domain.map((f) => [relative(SRC, f), f]))("%s imports no HTTP, Connect or generated code", (_name, file) => {
    const bad = imports(file).filter((i) =>
      /^(express|node:http2?|@connectrpc\/|express-openapi-validator)$|^@connectrpc\/|generated\//.test(i),
    );
    expect(bad).toEqual([]);
  });

  it("keeps HTTP out of the domain error type", () => {
    const text = readFileSync(join(SRC, "errors.ts"), "utf8");
    expect(text).not.toMatch(/\b(HTTP_STATUS|WWW-Authenticate|Retry-After|status: 4\d\d)\b/);
  });

  it("never lets the REST and RPC edges import each other", () => {
    for (const [from, other] of [
      ["rest", "/rpc/"],
      ["rpc", "/rest/"],
    ] as const) {
      for (const f of files(join(SRC, from))) expect(imports(f).filter((i) => i.includes(`..${other}`))).toEqual([]);
    }
  });
});

const ROOT = new URL("../", import.meta.url).pathname;
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

/** dependency-cruiser's CLI on `dir`'s src/ with the project's rules: the violations it reports. */
async function cruise(dir: string): Promise<Violation[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, "src", "--config", CONFIG, "--output-type", "json"],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((err: { stdout?: string; stderr?: string }) => {
    // A run that found violations exits non-zero; its report is on stdout all the same.
    if (err.stdout) return { stdout: err.stdout };
    throw new Error(`dependency-cruiser failed: ${err.stderr ?? String(err)}`);
  });
  const report = JSON.parse(stdout) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return report.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

describe("dependency rules (.dependency-cruiser.cjs)", () => {
  it("finds no violation in src/", async () => {
    expect(await cruise(ROOT)).toEqual([]);
  }, 60_000);

  /**
   * A scratch tree shaped like src/ with one planted violation per rule, and imports each rule
   * allows: every rule must report its planted import, and nothing else may be reported.
   */
  const planted: Record<string, string> = {
    // no-cycles: two feature modules importing each other.
    "src/intake/cycle-a.ts": 'import { b } from "./cycle-b.ts";\nexport const a = () => b;\n',
    "src/intake/cycle-b.ts": 'import { a } from "./cycle-a.ts";\nexport const b = () => a;\n',
    // base-imports-base: base code importing plumbing.
    "src/errors.ts": 'import { note } from "./edge/note.ts";\nexport const errors = note;\n',
    "src/edge/note.ts": "export const note = 1;\n",
    // plumbing-imports-no-feature: plumbing importing a feature.
    "src/rest/uses-feature.ts": 'import { lead } from "../leads/lead.ts";\nexport const x = lead;\n',
    "src/leads/lead.ts": 'import { note } from "../edge/note.ts";\nexport const lead = note;\n',
    // only-composition-imports-composition: a feature importing app.ts.
    "src/app.ts": 'import { lead } from "./leads/lead.ts";\nexport const app = lead;\n',
    "src/leads/wants-app.ts": 'import { app } from "../app.ts";\nexport const y = app;\n',
    // rest-and-rpc-apart / rpc-and-rest-apart.
    "src/rest/to-rpc.ts": 'import { r } from "../rpc/plain.ts";\nexport const z = r;\n',
    "src/rpc/plain.ts": "export const r = 1;\n",
    "src/rpc/to-rest.ts": 'import { y } from "../rest/plain.ts";\nexport const w = y;\n',
    "src/rest/plain.ts": "export const y = 1;\n",
    // domain-knows-no-transport: a service importing HTTP and generated code; fast/ may.
    "src/leads/lead.service.ts":
      'import http from "node:http";\nimport { g } from "../../generated/g.ts";\nexport const s = [http, g];\n',
    "src/leads/fast/speed.ts":
      'import http2 from "node:http2";\nimport { g } from "../../../generated/g.ts";\nexport const f = [http2, g];\n',
    "generated/g.ts": "export const g = 1;\n",
    // A migration may run a feature's SQL text, and nothing else of it; the text imports nothing.
    "src/db/migrations/0001-x.ts":
      'import { T } from "../../intake/guard.sql.ts";\nimport { lead } from "../../leads/lead.ts";\nexport const m = [T, lead];\n',
    "src/intake/guard.sql.ts": 'import { note } from "../edge/note.ts";\nexport const T = "select " + note;\n',
    "tsconfig.json": JSON.stringify({ compilerOptions: { module: "nodenext", allowImportingTsExtensions: true } }),
  };
  const scratch = mkdtempSync(join(tmpdir(), "layers-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  let found: Promise<Violation[]> | undefined;
  const violations = () => {
    if (!found) {
      for (const [path, text] of Object.entries(planted)) {
        mkdirSync(dirname(join(scratch, path)), { recursive: true });
        writeFileSync(join(scratch, path), text);
      }
      found = cruise(scratch);
    }
    return found;
  };

  it.each([
    ["no-cycles", "src/intake/cycle-a.ts", "src/intake/cycle-b.ts"],
    ["base-imports-base", "src/errors.ts", "src/edge/note.ts"],
    ["plumbing-imports-no-feature", "src/rest/uses-feature.ts", "src/leads/lead.ts"],
    ["only-composition-imports-composition", "src/leads/wants-app.ts", "src/app.ts"],
    ["rest-and-rpc-apart", "src/rest/to-rpc.ts", "src/rpc/plain.ts"],
    ["rpc-and-rest-apart", "src/rpc/to-rest.ts", "src/rest/plain.ts"],
    ["domain-knows-no-transport", "src/leads/lead.service.ts", "http"],
    ["domain-knows-no-transport", "src/leads/lead.service.ts", "generated/g.ts"],
    ["base-imports-base", "src/db/migrations/0001-x.ts", "src/leads/lead.ts"],
    ["sql-text-imports-nothing", "src/intake/guard.sql.ts", "src/edge/note.ts"],
  ])(
    "%s fails on a planted import (%s → %s)",
    async (rule, from, to) => {
      // A cycle is reported once, from whichever of its modules the cruise met first.
      const either = (v: Violation) =>
        v.rule === "no-cycles" ? { ...v, from: [v.from, v.to].sort().join(" ↔ "), to: "" } : v;
      expect((await violations()).map(either)).toContainEqual(either({ rule, from, to }));
    },
    60_000,
  );

  it("reports nothing but the planted violations (fast/ may use transport; features may use plumbing)", async () => {
    expect(await violations()).toHaveLength(10);
  }, 60_000);
});
