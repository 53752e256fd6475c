/**
 * The in-memory PGlite a unit test file (test/unit/) opens once, in its beforeAll: loaded from the
 * run's migrated image (made by test/global-setup.ts for `make test`, test/global-setup-unit.ts
 * for `make mutation`), else an empty one migrated here.
 *
 * Stryker's vitest runner runs a file's beforeAll again for every mutant it tests, so this is
 * paid per mutant: loading the image takes about 0.4 s here, an empty database and its
 * migrations about 1.4 s.
 */
import { readFileSync } from "node:fs";
import { type DatabaseHandle, openDatabase } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrator.ts";

export async function openUnitDatabase(): Promise<DatabaseHandle> {
  const file = process.env.LP_TEST_PGLITE_IMAGE;
  const image = file ? new Blob([readFileSync(file)]) : undefined;
  const handle = await openDatabase({
    dataDir: "memory://",
    databaseUrl: undefined,
    poolSize: 1,
    timeoutMs: 3000,
    image,
  });
  if (image === undefined) await migrateToLatest(handle.db);
  return handle;
}
