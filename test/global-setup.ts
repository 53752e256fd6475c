/**
 * Once per `vitest run`: a migrated database for every test app to start from, instead of each
 * app migrating an empty one (PGlite's initdb alone takes several seconds per start on a 2-core
 * machine, and most test files start several apps).
 *
 * - PGlite: an in-memory database migrated with the indexes built, dumped to a file; each test
 *   app loads it (test/helpers/app.ts → AppOptions.databaseImage).
 * - Postgres (TEST_DATABASE_URL): a template database migrated the same way; each test database
 *   is created from it (test/helpers/database.ts), and it is dropped at the end.
 *
 * Tests of the migrations themselves ask for an empty database and still get one.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { Kysely } from "kysely";
import pg from "pg";
import { openDatabase } from "../src/db/database.ts";
import { buildBigTableIndexes } from "../src/db/indexes.ts";
import { migrateToLatest } from "../src/db/migrator.ts";
import { PGliteDialect } from "../src/db/pglite-dialect.ts";
import type { Database } from "../src/db/schema.ts";

export async function pgliteImage(dir: string): Promise<string> {
  const pglite = await PGlite.create(undefined, { extensions: { pg_trgm } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db);
    await buildBigTableIndexes(db, "pglite");
    const file = join(dir, "pglite-image.tar");
    writeFileSync(file, Buffer.from(await (await pglite.dumpDataDir("none")).arrayBuffer()));
    return file;
  } finally {
    await db.destroy();
  }
}

async function admin<T>(adminUrl: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

async function postgresTemplate(adminUrl: string): Promise<string> {
  const name = `lp_template_${randomBytes(6).toString("hex")}`;
  await admin(adminUrl, (c) => c.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: "", poolSize: 2, timeoutMs: 60_000 });
  try {
    await database.maintenance((db) => migrateToLatest(db));
    await database.maintenance((db) => buildBigTableIndexes(db, "postgres"));
  } finally {
    await database.close();
  }
  return name;
}

export default async function setup(): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), "lp-test-"));
  const adminUrl = process.env.TEST_DATABASE_URL;
  const [image, template] = await Promise.all([
    pgliteImage(dir),
    adminUrl ? postgresTemplate(adminUrl) : Promise.resolve(undefined),
  ]);
  process.env.LP_TEST_PGLITE_IMAGE = image;
  if (template) process.env.LP_TEST_POSTGRES_TEMPLATE = template;
  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (adminUrl && template) await admin(adminUrl, (c) => c.query(`drop database if exists ${template} with (force)`));
  };
}
