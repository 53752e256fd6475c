/**
 * The docs check (docs/development.md, "Tests"): history belongs in git and CHANGELOG.md, not in
 * the docs or the code, and the docs must say where everything is. It fails on
 *
 * - a work-item number ("issue 12", "Issue #12", a bare "#12") or work-session wording ("part 3",
 *   "third pass", "second part") in README.md, CHANGELOG.md, docs/**, src/** or test/**, and a
 *   markdown heading that carries a date (a measurement diary's "Run of 2026-11-26"); a reference
 *   to another repository's issue (`owner/repo#12`) is fine;
 * - a work-item number in a test file's name;
 * - a folder of src/ that docs/architecture.md does not name (as `name/`);
 * - a relative link in README.md, CHANGELOG.md or docs/**.md whose file does not exist, or whose
 *   `#anchor` names no heading of a markdown file.
 *
 * `node scripts/check-docs.ts [root]` prints one line per problem and exits 1 when there is any;
 * `make lint` runs it, and test/docs-check.test.ts runs `checkDocs` on this tree and on a copy
 * with planted violations.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ORDINALS = "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth";

/** Wording that dates text to a work item or a work session, each with what it means. */
const HISTORY: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  { pattern: /\bissues?\s+#?\d+/gi, what: "an issue number" },
  { pattern: /(?<![\w.\-/&#])#\d+\b(?![\w-])/g, what: "an issue number" },
  { pattern: /\bparts?\s+\d+\b/gi, what: "work-session wording" },
  {
    pattern: new RegExp(`\\b(?:${ORDINALS}|\\d+(?:st|nd|rd|th))\\s+(?:pass|part)\\b`, "gi"),
    what: "work-session wording",
  },
];
const DATED_HEADING = /^#{1,6}\s.*\b\d{4}-\d{2}-\d{2}\b/;
const ISSUE_IN_NAME = /issue[-_]?\d+/i;

const TEXT_FILE = /\.(md|ts|tsx|mts|mjs|cjs|js|sql|yaml|yml)$/;
const SKIP_DIRS = new Set(["node_modules", ".git", "dist", "generated"]);

function walk(dir: string, into: string[] = []): string[] {
  if (!existsSync(dir)) return into;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, into);
    else if (entry.isFile()) into.push(path);
  }
  return into;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Markdown text without fenced code blocks and inline code, where links are not links. */
function proseOf(markdown: string): string {
  return markdown.replace(/```[\s\S]*?```/g, (block) => block.replace(/[^\n]/g, " ")).replace(/`[^`\n]*`/g, "``");
}

function checkHistory(root: string, file: string, text: string, problems: string[]): void {
  const rel = relative(root, file);
  const lines = text.split("\n");
  let fenced = false;
  for (const [i, line] of lines.entries()) {
    for (const { pattern, what } of HISTORY) {
      pattern.lastIndex = 0;
      for (const m of line.matchAll(pattern)) problems.push(`${rel}:${i + 1}: ${what}: "${m[0]}"`);
    }
    if (file.endsWith(".md")) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      if (!fenced && DATED_HEADING.test(line))
        problems.push(`${rel}:${i + 1}: a dated diary heading: "${line.trim()}"`);
    }
  }
}

function checkLinks(root: string, file: string, text: string, problems: string[]): void {
  const rel = relative(root, file);
  const prose = proseOf(text);
  const lines = prose.split("\n");
  for (const [i, line] of lines.entries()) {
    for (const m of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [path, anchor] = target.split("#", 2) as [string, string | undefined];
      const to = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(to)) {
        problems.push(`${rel}:${i + 1}: a link to a missing file: ${target}`);
        continue;
      }
      if (anchor && to.endsWith(".md") && statSync(to).isFile() && !anchorsOf(readFileSync(to, "utf8")).has(anchor))
        problems.push(`${rel}:${i + 1}: a link to a missing heading: ${target}`);
    }
  }
}

function checkArchitecture(root: string, problems: string[]): void {
  const src = join(root, "src");
  if (!existsSync(src)) return;
  const architecture = join(root, "docs", "architecture.md");
  const text = existsSync(architecture) ? readFileSync(architecture, "utf8") : "";
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    if (!text.includes(`${entry.name}/`))
      problems.push(`src/${entry.name}/: a folder docs/architecture.md does not name (write it as \`${entry.name}/\`)`);
  }
}

/** Every problem the check finds under `root`, one line each; empty when there is none. */
export function checkDocs(root: string): string[] {
  const problems: string[] = [];
  const top = ["README.md", "CHANGELOG.md"].map((f) => join(root, f)).filter((f) => existsSync(f));
  const docs = walk(join(root, "docs")).filter((f) => f.endsWith(".md"));
  const code = [...walk(join(root, "src")), ...walk(join(root, "test"))].filter((f) => TEXT_FILE.test(f));

  for (const file of [...top, ...docs, ...code]) checkHistory(root, file, readFileSync(file, "utf8"), problems);
  for (const file of walk(join(root, "test")))
    if (ISSUE_IN_NAME.test(relative(root, file)))
      problems.push(`${relative(root, file)}: an issue number in a test's name`);
  checkArchitecture(root, problems);
  for (const file of [...top, ...docs]) checkLinks(root, file, readFileSync(file, "utf8"), problems);
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? ".");
  const problems = checkDocs(root);
  for (const p of problems) console.error(p);
  if (problems.length > 0) {
    console.error(
      `docs check: ${problems.length} problem(s); history goes in git and CHANGELOG.md, decisions in docs/decisions/`,
    );
    process.exit(1);
  }
}
