/**
 * Test databases: PGlite always; Postgres too when TEST_DATABASE_URL is set (as CI sets it).
 * Each Postgres user gets a freshly created database that is dropped afterwards, so parallel
 * files and repeated runs never collide.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface Backend {
  readonly name: "pglite" | "postgres";
}

export const BACKENDS: readonly Backend[] = process.env.TEST_DATABASE_URL
  ? [{ name: "pglite" }, { name: "postgres" }]
  : [{ name: "pglite" }];

export interface TestDatabase {
  /** DATABASE_URL for the app; undefined → in-memory PGlite. */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

/**
 * A database of its own for one test app. Migrated (the default): a copy of the run's migrated
 * template when test/global-setup.ts made one; `{ empty: true }` for tests of the migrations.
 */
export async function createTestDatabase(backend: Backend, options: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (backend.name === "pglite") return { url: undefined, drop: async () => {} };
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) throw new Error("TEST_DATABASE_URL is not set");
  const name = `lp_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const template = options.empty ? undefined : process.env.LP_TEST_POSTGRES_TEMPLATE;
    await admin.query(`create database ${name}${template ? ` template ${template}` : ""}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
