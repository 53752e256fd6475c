/**
 * The tests `make mutation` (Stryker) runs against each mutant: the fast unit tests of the
 * modules it mutates (test/unit/). `make test` runs them too, with everything else.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/unit/**/*.test.ts"],
    // The migrated PGlite image each unit test file loads (test/helpers/unit-database.ts) in
    // place of migrating an empty database: Stryker's runner opens it again for every mutant.
    globalSetup: ["test/global-setup-unit.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
