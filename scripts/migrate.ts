/** `make migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
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
} finally {
  await database.close();
}
