/**
 * The order test files start in. Vitest sorts by the durations of the last run it remembers, and
 * on a fresh clone, which remembers none, by file size: the longest files (the query-plan checks
 * seed half a million leads; the browser checks drive chromium) could then start last and run
 * alone at the end while the other worker idles. They start first here, longest first; the rest
 * keep vitest's order.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The longest files of a run on the 2-core machine, longest first (docs/testing.md). */
export const LONGEST_FIRST = [
  "test/scale-plans.test.ts",
  "test/console.test.ts",
  "test/portal.console.test.ts",
  "test/money.console.test.ts",
  "test/returns.console.test.ts",
  "test/readme-behaviours.test.ts",
] as const;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((f) => spec.moduleId.endsWith(f));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
