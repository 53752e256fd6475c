/**
 * Once per `vitest run` of vitest.mutation.config.ts (and once per Stryker test runner): the
 * migrated PGlite image the unit tests' databases load (test/helpers/unit-database.ts), made as
 * test/global-setup.ts makes it for `make test`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteImage } from "./global-setup.ts";

export default async function setup(): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), "lp-unit-"));
  process.env.LP_TEST_PGLITE_IMAGE = await pgliteImage(dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
