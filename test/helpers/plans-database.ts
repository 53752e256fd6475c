/**
 * The one database the query-plan checks share (test/scale-plans.test.ts and the ledger's
 * suite it loads): Postgres seeded at `SIZES.plans` by the scale harness's seed, once per file,
 * dropped when the last suite using it is done. Seeding it is most of what the checks cost.
 */
import { SIZES, seed } from "../../bench/scale/seed.ts";
import { openDatabase } from "../../src/db/database.ts";
import { buildBigTableIndexes } from "../../src/db/indexes.ts";
import { migrateToLatest } from "../../src/db/migrator.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";

let seeded: Promise<TestDatabase> | undefined;
let users = 0;

async function create(): Promise<TestDatabase> {
  const database = await createTestDatabase({ name: "postgres" });
  const url = database.url as string;
  const handle = await openDatabase({ databaseUrl: url, dataDir: "memory://", poolSize: 2, timeoutMs: 60_000 });
  try {
    await migrateToLatest(handle.db);
    await buildBigTableIndexes(handle.db, handle.kind);
  } finally {
    await handle.close();
  }
  await seed(url, SIZES.plans);
  return database;
}

/** The seeded database's URL; call `releasePlansDatabase()` once done with it. */
export async function plansDatabase(): Promise<string> {
  users += 1;
  seeded ??= create();
  return (await seeded).url as string;
}

export async function releasePlansDatabase(): Promise<void> {
  users -= 1;
  if (users > 0 || !seeded) return;
  const database = await seeded.catch(() => undefined);
  seeded = undefined;
  await database?.drop();
}
