/**
 * The TypeScript SDK as a user gets it: `npm pack` in sdks/typescript (its prepack compiles src/
 * into dist/ with tsc), the tarball installed with `npm install <tarball>` into an empty directory
 * (openapi-fetch and standardwebhooks from the npm registry), the README's quick start run there
 * by plain `node` against the service started on port 0, and a TypeScript file type-checked
 * against the installed package's declarations. The main README's example and the portal's SDK
 * snippet run there too, its offline example against the Prism mock, and the API reference at
 * /docs links both SDKs' READMEs.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkSnippetFor } from "../portal/src/sandbox-examples.ts";
import { VERSION } from "../sdks/typescript/src/index.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { freshLead } from "./helpers/money.ts";
import { type Prism, SPEC_FILE, startPrism } from "./helpers/prism.ts";
import { testKeyOf } from "./helpers/sdk.ts";
import { START_MS } from "./helpers/timing.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..");
const SDK = join(ROOT, "sdks", "typescript");
const README = readFileSync(join(SDK, "README.md"), "utf8");

/** The first ```js block after a heading of a markdown file. */
function jsAfter(markdown: string, heading: string): string {
  const at = markdown.indexOf(`\n${heading}\n`);
  const block = at === -1 ? undefined : /```js\n([\s\S]*?)```/.exec(markdown.slice(at))?.[1];
  if (!block) throw new Error(`no js block under ${heading}`);
  return block;
}

describe("the packed TypeScript SDK, installed into an empty project", () => {
  let t: TestApp;
  let mock: Prism;
  let dir: string;
  let tarball: string;

  beforeAll(
    async () => {
      dir = mkdtempSync(join(tmpdir(), "lp-sdk-ts-"));
      const npm = { env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" } };
      const [app, prism, packed] = await Promise.all([
        startTestApp({ name: "pglite" }),
        startPrism(["mock", SPEC_FILE]),
        run("npm", ["pack", "--pack-destination", dir, "--loglevel=error"], { cwd: SDK, ...npm }),
      ]);
      t = app;
      mock = prism;
      tarball = join(dir, packed.stdout.trim().split("\n").at(-1) as string);
      const project = join(dir, "project");
      await run("mkdir", [project]);
      await run("npm", ["install", "--no-audit", "--loglevel=error", tarball], { cwd: project, ...npm });
    },
    30_000 + START_MS + 120_000,
  );
  afterAll(async () => {
    await mock?.stop();
    await t?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ships the built JavaScript and declarations, the README, and only its two dependencies", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    const files = stdout.trim().split("\n").sort();
    expect(files).toContain("package/dist/index.js");
    expect(files).toContain("package/dist/index.d.ts");
    expect(files).toContain("package/dist/generated/schema.d.ts");
    expect(files).toContain("package/README.md");
    expect(files.filter((f) => !/^package\/(dist\/|README\.md$|package\.json$)/.test(f))).toEqual([]);
    const installed = JSON.parse(
      readFileSync(join(dir, "project", "node_modules", "@lead-provider", "sdk", "package.json"), "utf8"),
    ) as Json;
    expect(installed.version).toBe(VERSION);
    expect(Object.keys(installed.dependencies).sort()).toEqual(["openapi-fetch", "standardwebhooks"]);
  });

  it("runs the README's quick start with plain node against the service", async () => {
    const p = await t.provider();
    writeFileSync(join(dir, "project", "quickstart.mjs"), jsAfter(README, "## Quick start"));
    const { stdout } = await run("node", ["quickstart.mjs"], {
      cwd: join(dir, "project"),
      env: { ...process.env, LEAD_PROVIDER_API_KEY: p.key, LEAD_PROVIDER_BASE_URL: t.url },
    });
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^LP-[A-Z0-9]{10} LEAD live$/);
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^crm-\d+ LEAD$/)]);
    // The quick start's refusal branch: a key the service does not know is not a ValidationError.
    const refused = await run("node", ["quickstart.mjs"], {
      cwd: join(dir, "project"),
      env: { ...process.env, LEAD_PROVIDER_API_KEY: `${p.key.slice(0, -4)}abcd`, LEAD_PROVIDER_BASE_URL: t.url },
    }).then(
      () => "succeeded",
      (err: { stderr: string }) => err.stderr,
    );
    expect(refused).toMatch(/AuthenticationError: 401 invalid_api_key/);
  });

  it("runs its offline example against the Prism mock (make mock)", async () => {
    writeFileSync(join(dir, "project", "mock.mjs"), readFileSync(join(SDK, "examples", "mock.mjs"), "utf8"));
    const { stdout } = await run("node", ["mock.mjs"], {
      cwd: join(dir, "project"),
      env: { ...process.env, LEAD_PROVIDER_BASE_URL: mock.url },
    });
    // The contract's first examples: the created lead, the one-lead page, the validation error.
    expect(stdout.trim().split("\n")).toEqual([
      "created LP-7K3M9Q2X4D LEAD",
      "listed crm-48213",
      expect.stringMatching(/^refused validation_error [\w.[\],]+$/),
    ]);
  });

  it("runs the main README's TypeScript example beside the curl tour", async () => {
    const p = await t.provider();
    const example = jsAfter(readFileSync(join(ROOT, "README.md"), "utf8"), "### With an SDK");
    // As the README's curl examples are run: only the port changed.
    writeFileSync(join(dir, "project", "create.mjs"), example.replaceAll("http://localhost:8080", t.url));
    writeFileSync(join(dir, "project", "lead.json"), JSON.stringify(freshLead()));
    const { stdout } = await run("node", ["create.mjs"], {
      cwd: join(dir, "project"),
      env: { ...process.env, LEAD_PROVIDER_API_KEY: p.key },
    });
    expect(stdout.trim()).toMatch(/^LP-[A-Z0-9]{10} LEAD 1$/);
  });

  it("runs the portal's SDK snippet with the user's test key", async () => {
    const p = await t.provider();
    const testKey = await testKeyOf(t, p.id);
    writeFileSync(join(dir, "project", "snippet.mjs"), sdkSnippetFor(testKey, t.url));
    const { stdout } = await run("node", ["snippet.mjs"], { cwd: join(dir, "project") });
    expect(JSON.parse(stdout)).toMatchObject({ livemode: false, state: "LEAD" });
  });

  it("is linked from the API reference at /docs, which serves both SDKs' READMEs", async () => {
    const spec = await (await fetch(`${t.url}/openapi.yaml`)).text();
    expect(spec).toContain("([README](/docs/sdks/typescript))");
    expect(spec).toContain("([README](/docs/sdks/php))");
    for (const [name, file] of [
      ["typescript", join(SDK, "README.md")],
      ["php", join(ROOT, "sdks", "php", "README.md")],
    ] as const) {
      const res = await fetch(`${t.url}/docs/sdks/${name}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
      expect(await res.text()).toBe(readFileSync(file, "utf8"));
    }
    expect((await fetch(`${t.url}/docs/sdks/cobol`)).status).toBe(404);
  });

  it("type-checks a TypeScript user of the installed package", async () => {
    writeFileSync(
      join(dir, "project", "check.ts"),
      [
        'import { LeadProvider, ValidationError, type LeadCreate, type WebhookEvent } from "@lead-provider/sdk";',
        'const client = new LeadProvider({ apiKey: "lp_test_x", maxRetries: 1 });',
        'const body: LeadCreate = { external_id: "a", first_name: "A", last_name: "B", email: "a@example.com",',
        '  phone_number: "3105550142", origin_zip: "90210", estimated_ship_date: "2027-01-01",',
        '  overseas_type: "DOMESTIC", ship_via: "OPEN", vehicles: [] };',
        "export async function main(): Promise<string> {",
        "  try { return (await client.leads.create(body)).order_number; }",
        "  catch (err) { if (err instanceof ValidationError) return err.errors[0]?.field ?? ''; throw err; }",
        "}",
        "export const kind = (e: WebhookEvent): string => e.type;",
        "// @ts-expect-error: ship_via is one of the contract's values",
        'export const wrong: LeadCreate = { ...body, ship_via: "BY_AIR" };',
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "project", "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2022",
          lib: ["es2022", "dom"],
          module: "nodenext",
          moduleResolution: "nodenext",
          types: [],
        },
        files: ["check.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", ".bin", "tsc");
    const outcome = await run(tsc, ["-p", "."], { cwd: join(dir, "project") }).then(
      () => "",
      (err: { stdout: string }) => err.stdout,
    );
    expect(outcome).toBe("");
  });
});
