/** `make migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
import { buildBigTableIndexes } from "../src/db/indexes.ts";
import { migrateToLatest } from "../src/db/migrator.ts";

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.dataDir,
  poolSize: 1,
  timeoutMs: config.databaseTimeoutMs,
});
try {
  const applied = await migrateToLatest(database.db);
  process.stdout.write(applied.length > 0 ? `applied: ${applied.join(", ")}\n` : "nothing to apply\n");
  // The big tables' indexes, concurrently with writes on Postgres (src/db/indexes.ts).
  const built = await buildBigTableIndexes(database.db, database.kind);
  if (built.length > 0) process.stdout.write(`indexes built: ${built.join(", ")}\n`);
} finally {
  await database.close();
}
