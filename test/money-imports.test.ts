/**
 * Money's place in the import graph: nothing in leads/ imports money/ (lead creation reaches it
 * through the LeadPricing hook, wired in app.ts), and no chain of imports starting from a money/
 * file comes back to it. Only imports that exist at run time count (`import type` is erased).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../src");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Each file's imports of other files under src/, `import type` aside when `runtimeOnly`. */
function importGraph(runtimeOnly: boolean): Map<string, string[]> {
  const pattern = runtimeOnly ? /^import (?!type )[^"]*"(\.[^"]+)"/gm : /^import [^"]*"(\.[^"]+)"/gm;
  return new Map(
    files(SRC).map((f) => [
      relative(SRC, f),
      [...readFileSync(f, "utf8").matchAll(pattern)]
        .map((m) => relative(SRC, resolve(dirname(f), m[1] as string)))
        .filter((d) => !d.startsWith("..")),
    ]),
  );
}

/** A chain of imports from `start` back to itself, or undefined. */
function cycleFrom(graph: Map<string, string[]>, start: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (node: string, path: string[]): string[] | undefined => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) return [...path, next];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(start, [start]);
}

describe("money in the import graph", () => {
  it("is never imported by leads/, not even for a type", () => {
    const graph = importGraph(false);
    const offending = [...graph].filter(
      ([f, deps]) => f.startsWith("leads/") && deps.some((d) => d.startsWith("money/")),
    );
    expect(offending).toEqual([]);
    expect(graph.get("app.ts")).toContain("money/terms.service.ts");
  });

  it("is on no import cycle", () => {
    const graph = importGraph(true);
    const money = [...graph.keys()].filter((f) => f.startsWith("money/"));
    expect(money.length).toBeGreaterThan(5);
    for (const f of money) expect(cycleFrom(graph, f), f).toBeUndefined();
  });
});
