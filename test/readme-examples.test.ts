/**
 * The curl examples of the README and the topic pages, run as a reader runs them: every ```sh
 * block that calls the service (localhost:8080) or the mock (localhost:4010) is run by bash from
 * the repository's directory, in order (the README first, then the pages in EXAMPLE_FILES' order,
 * which continue its variables and files), with only the port changed, against a started service
 * and a Prism mock. Each command followed by an answer in comments (`# {…}`, `# HTTP/1.1 …`) must answer
 * that shape: every field the README shows exists, every top-level field the service answers is
 * shown (unless the README elides it with "…"), and the stable values (status, code, state,
 * livemode, …) are the same. A command without a shown answer must still succeed and not answer a
 * problem the README does not show.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { type Prism, ROOT, startPrism } from "./helpers/prism.ts";

/** The files whose examples run, in the order a reader follows them from the README's tour. */
const EXAMPLE_FILES = [
  "README.md",
  "docs/portal.md",
  "docs/request-log.md",
  "docs/stats.md",
  "docs/money.md",
  "docs/sandbox.md",
];
/** Files the examples leave in the working directory (git ignores them); removed afterwards. */
const LEFT_BEHIND = ["lead.json", "provider.json", "keys.json", "created.txt", "bad.json"];
/** Top-level values that are the same on every run, compared as well as the shape. */
const STABLE = [
  "status",
  "code",
  "state",
  "lead_status",
  "livemode",
  "mode",
  "type",
  "changed",
  "outcome",
  "is_active",
];

interface Step {
  readonly file: string;
  readonly line: number;
  readonly command: string;
  /** The answer shown after the command, without the comment marks; undefined when none is. */
  readonly shown: string | undefined;
}

/** A file's runnable blocks, split into commands and the answers shown after them. */
function stepsOf(markdown: string, file: string): Step[] {
  const steps: Step[] = [];
  const blocks = markdown.matchAll(/```sh\n([\s\S]*?)```/g);
  for (const block of blocks) {
    const body = block[1] as string;
    if (!/localhost:(8080|4010)/.test(body)) continue;
    const firstLine = markdown.slice(0, block.index).split("\n").length + 1;
    const lines = body.split("\n");
    for (let i = 0; i < lines.length; ) {
      const text = (lines[i] as string).trim();
      if (text === "" || text.startsWith("#")) {
        i++;
        continue;
      }
      const start = i;
      const command: string[] = [];
      const heredoc = /<<'(\w+)'/.exec(text)?.[1];
      while (i < lines.length) {
        const l = lines[i] as string;
        command.push(l);
        i++;
        if (heredoc) {
          if (l.trim() === heredoc) break;
        } else if (!/[\\|]\s*$/.test(l) && !insideQuote(command.join("\n"))) break;
      }
      const answer: string[] = [];
      while (i < lines.length && /^\s*#/.test(lines[i] as string))
        answer.push((lines[i++] as string).replace(/^\s*# ?/, ""));
      const shown = answer.length > 0 && /^(\{|\[|HTTP\/)/.test(answer[0] as string) ? answer.join("\n") : undefined;
      steps.push({ file, line: firstLine + start, command: command.join("\n"), shown });
    }
  }
  return steps;
}

/** True when a shell text ends inside a single- or double-quoted string (a -d '…' over several lines). */
function insideQuote(text: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === undefined) {
      if (c === "\\") i++;
      else if (c === "'" || c === '"') quote = c;
    } else if (quote === '"' && c === "\\") i++;
    else if (c === quote) quote = undefined;
  }
  return quote !== undefined;
}

/** The field names the README shows, at any depth. */
const namesShown = (text: string) =>
  new Set([...text.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)"\s*:/g)].map((m) => m[1] as string));

/** True when the answer shown elides members at its top level ("…" or "..." directly inside the outer braces). */
function elidedAtTop(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (depth === 1 && (c === "…" || text.startsWith("...", i))) return true;
  }
  return false;
}

/** The top-level `"name":value` pairs with a literal value, as shown. */
function literalsShown(text: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of text.matchAll(/"([a-z_]+)":("(?:[^"\\…]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)(?=[,}\n])/g))
    if (STABLE.includes(m[1] as string) && !out.has(m[1] as string))
      out.set(m[1] as string, JSON.parse(m[2] as string));
  return out;
}

function allNames(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) allNames(v, into);
  else if (value && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      into.add(k);
      allNames(v, into);
    }
  return into;
}

/**
 * Splits `curl -i` output (or an answer shown that way, without the blank line) into its status,
 * headers and body.
 */
function splitHttp(output: string): { status?: number; headers: Map<string, string>; body: string } {
  if (!output.startsWith("HTTP/")) return { headers: new Map(), body: output };
  const lines = output.split(/\r?\n/);
  const status = Number((lines[0] ?? "").split(" ")[1]);
  const headers = new Map<string, string>();
  let i = 1;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === "" || /^[{[]/.test(line)) break;
    headers.set(line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim());
  }
  return { status, headers, body: lines.slice(i).join("\n").trim() };
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

describe("the curl examples of the README and the topic pages", () => {
  let t: TestApp;
  let mock: Prism;
  let out: string;
  const steps: Step[] = [];

  beforeAll(async () => {
    for (const file of EXAMPLE_FILES) steps.push(...stepsOf(await readFile(join(ROOT, file), "utf8"), file));
    [t, mock] = await Promise.all([
      startTestApp({ name: "pglite" }),
      startPrism(["mock", join(ROOT, "openapi", "openapi.yaml")]),
    ]);
    out = await mkdtemp(join(tmpdir(), "readme-"));
  }, 270_000);

  afterAll(async () => {
    await Promise.all([t?.stop(), mock?.stop()]);
    await Promise.all([
      ...LEFT_BEHIND.map((f) => rm(join(ROOT, f), { force: true })),
      rm(out, { recursive: true, force: true }),
    ]);
  });

  it("has the examples this test runs", () => {
    expect(steps.length).toBeGreaterThan(15);
    for (const file of EXAMPLE_FILES.slice(1))
      expect(
        steps.some((s) => s.file === file),
        `${file} has a runnable example`,
      ).toBe(true);
    expect(steps.filter((s) => s.shown !== undefined).length).toBeGreaterThan(10);
    const dates = steps.flatMap((s) =>
      [...s.command.matchAll(/"estimated_ship_date":\s*"(\d{4}-\d{2}-\d{2})"/g)].map((m) => m[1]),
    );
    expect(dates.length).toBeGreaterThan(0);
    // A date in the past would be refused: when this fails, move the README's date forward.
    for (const d of dates)
      expect(Date.parse(`${d}T00:00:00Z`), `the README's estimated_ship_date ${d} has passed`).toBeGreaterThan(
        Date.now() + 86_400_000,
      );
  });

  it("run verbatim (only the port changed) and answer what they show", async () => {
    const script = [
      "set -o pipefail",
      ...steps.map((s, i) => {
        const command = s.command
          .replaceAll("localhost:8080", `localhost:${t.port}`)
          .replaceAll("localhost:4010", `localhost:${mock.port}`);
        // A reader takes a moment between commands; the request log is written within a second.
        const pause = command.includes("/public/requests/") ? "sleep 1.2\n" : "";
        return `${pause}{\n${command}\n} > ${out}/${i}.out 2> ${out}/${i}.err; echo $? > ${out}/${i}.rc`;
      }),
    ].join("\n");
    // A reader's shell: no make flags of the `make test` running this, the development secrets.
    const { MAKEFLAGS: _f, MFLAGS: _m, MAKELEVEL: _l, JWT_SECRET: _j, API_KEY_SECRET: _a, ...env } = process.env;
    if (process.env.README_SCRIPT) await writeFile(process.env.README_SCRIPT, script);
    const run = await runBash(script, { ...env, NODE_ENV: "development" });
    expect(run.code, run.stderr).toBe(0);

    for (const [i, step] of steps.entries()) {
      const where = `${step.file} line ${step.line}: ${step.command.split("\n")[0]}`;
      const rc = (await readFile(join(out, `${i}.rc`), "utf8").catch(() => "not run")).trim();
      const stderr = await readFile(join(out, `${i}.err`), "utf8");
      expect(rc, `${where}\n${stderr}`).toBe("0");
      const output = await readFile(join(out, `${i}.out`), "utf8");
      const answer = splitHttp(output);
      if (step.shown === undefined) {
        if (answer.body.trimStart().startsWith("{"))
          expect(answer.body, `${where} answers a problem the README does not show`).not.toContain(
            '"type":"urn:lead-provider:problem',
          );
        continue;
      }
      const shownHttp = splitHttp(step.shown);
      if (shownHttp.status !== undefined) {
        expect(answer.status, where).toBe(shownHttp.status);
        for (const [name, value] of shownHttp.headers)
          expect(answer.headers.get(name), `${where}: ${name}`).toBe(value);
      }
      const shownBody = shownHttp.body;
      let actual: Json;
      try {
        actual = JSON.parse(answer.body) as Json;
      } catch {
        throw new Error(`${where} answered no JSON:\n${output}\n${stderr}`);
      }
      const names = allNames(actual);
      for (const name of namesShown(shownBody))
        expect(names.has(name), `${where}: shows "${name}", not answered`).toBe(true);
      if (!elidedAtTop(shownBody)) {
        const shown = namesShown(shownBody);
        for (const name of Object.keys(actual))
          expect(shown.has(name), `${where}: answers "${name}", not shown`).toBe(true);
      }
      for (const [name, value] of literalsShown(shownBody))
        if (name in actual) expect(actual[name], `${where}: "${name}"`).toEqual(value);
    }
  }, 120_000);
});
