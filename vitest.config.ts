import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two cores, three workers: a good part of the suite waits (browsers, timers, retries, child
    // processes), and on a slow 2-core machine the suite took 1,119 s with two workers (the sum of
    // the files' times 2,131 s), close to CI's 20-minute budget.
    maxWorkers: 3,
    reporters: ["default"],
  },
});
