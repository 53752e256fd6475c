import { defineConfig } from "vitest/config";
import LongestFirst from "./test/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A migrated database every test app starts from (PGlite image, Postgres template).
    globalSetup: ["test/global-setup.ts"],
    // A test's own work. A test that starts the service, Prism or a browser has its own timeout:
    // 30 s plus START_MS (120 s) per start (test/helpers/timing.ts), and its waits poll for
    // readiness. Hooks set up a file and nearly every one starts the service: one start's timeout.
    testTimeout: 30_000,
    hookTimeout: 150_000,
    // expect.poll waits for something to be ready: a ceiling, passed as soon as it holds (vitest's
    // own 1 s failed the back office's checks on a loaded machine).
    expect: { poll: { timeout: 20_000 } },
    // A forgotten .only would run a smaller suite and pass: it fails the run instead.
    allowOnly: false,
    pool: "forks",
    // The longest files start first (test/sequencer.ts), so none runs alone at the end.
    sequence: { sequencer: LongestFirst },
    // Two cores: more workers only make each PGlite start slower, and the browser checks time out
    // (with three, two console checks ran past their 30 s on a slow 2-core machine).
    maxWorkers: 2,
    reporters: ["default"],
  },
});
