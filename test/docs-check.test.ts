/**
 * The docs check (scripts/check-docs.ts, also run by `make lint`): this tree passes it, and a copy
 * with planted violations fails it, naming each one — an issue number and work-session wording
 * in a README, a dated diary heading, an issue number in a source comment, a src/ folder
 * docs/architecture.md does not name, and relative links to a missing file and a missing heading.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDocs, slug } from "../scripts/check-docs.ts";
import { ROOT } from "./helpers/prism.ts";

const fixtures: string[] = [];
afterAll(() => {
  for (const dir of fixtures) rmSync(dir, { recursive: true, force: true });
});

/** A scratch tree with the given files (path → text). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "docs-check-"));
  fixtures.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const CLEAN = {
  "README.md":
    "# Service\n\n## Quick start\n\nSee [the architecture](docs/architecture.md#layers) and [start](#quick-start).\n",
  "docs/architecture.md": "# Architecture\n\n## Layers\n\n`leads/` holds leads. Colour #c62828.\n",
  "src/leads/lead.ts": "// Leads, with a reference to whitequark/ipaddr.js#203 upstream.\nexport const x = 1;\n",
  "test/lead.test.ts": 'it("reads a lead", () => {});\n',
};

describe("the docs check", () => {
  it("passes this repository", () => {
    expect(checkDocs(ROOT)).toEqual([]);
  });

  it("passes a clean tree", () => {
    expect(checkDocs(tree(CLEAN))).toEqual([]);
  });

  it("fails on planted violations, naming each", () => {
    // Built from pieces, so that this file does not itself hold what it plants.
    const [n, m, word] = ["25", "12", "issue"];
    const root = tree({
      ...CLEAN,
      "README.md":
        `# Service\n\nFixed in ${word} ${n}, see #${n} and Issue #${m}.\n\n### Run of 2026-11-26\n\n` +
        `The ${"third"} pass and part ${2} of the work.\n\n` +
        "See [gone](docs/missing.md) and [nowhere](docs/architecture.md#no-such-heading).\n",
      "src/money/terms.ts": `// Prices (${word} 31).\nexport const y = 2;\n`,
      [`test/${word}${n}.test.ts`]: 'it("works", () => {});\n',
    });
    const problems = checkDocs(root).join("\n");
    expect(problems).toContain(`README.md:3: an issue number: "${word} ${n}"`);
    expect(problems).toContain(`README.md:3: an issue number: "#${n}"`);
    expect(problems).toContain(`README.md:3: an issue number: "Issue #${m}"`);
    expect(problems).toContain("README.md:5: a dated diary heading");
    expect(problems).toContain(`README.md:7: work-session wording: "${"third"} pass"`);
    expect(problems).toContain(`README.md:7: work-session wording: "part ${2}"`);
    expect(problems).toContain("README.md:9: a link to a missing file: docs/missing.md");
    expect(problems).toContain("README.md:9: a link to a missing heading: docs/architecture.md#no-such-heading");
    expect(problems).toContain(`src/money/terms.ts:1: an issue number: "${word} 31"`);
    expect(problems).toContain("src/money/: a folder docs/architecture.md does not name");
    expect(problems).toContain(`test/${word}${n}.test.ts: an issue number in a test's name`);
  });

  it("fails from the command line with status 1", async () => {
    const { spawnSync } = await import("node:child_process");
    const root = tree({ ...CLEAN, "src/zip/zip.ts": "export const z = 0;\n" });
    const run = spawnSync(process.execPath, [join(ROOT, "scripts/check-docs.ts"), root], { encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("src/zip/: a folder docs/architecture.md does not name");
    const clean = spawnSync(process.execPath, [join(ROOT, "scripts/check-docs.ts"), tree(CLEAN)], { encoding: "utf8" });
    expect(clean.status, clean.stderr).toBe(0);
  });

  it("makes anchors as GitHub does", () => {
    expect(slug("Trying it with curl")).toBe("trying-it-with-curl");
    expect(slug("The folders of src/")).toBe("the-folders-of-src");
    expect(slug("`make bench`")).toBe("make-bench");
  });
});
