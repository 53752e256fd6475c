import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores: more workers only make each PGlite start slower, and the browser checks time out
    // (with three, two console checks ran past their 30 s on a slow 2-core machine).
    maxWorkers: 2,
    reporters: ["default"],
  },
});
