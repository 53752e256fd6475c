/**
 * Opens the database: Postgres through `pg` when DATABASE_URL is set, else embedded PGlite in
 * DATA_DIR. Both return the same Kysely instance type and run the same migrations.
 */

import { mkdirSync } from "node:fs";
import { type Expression, Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { lockDataDir } from "./data-dir-lock.ts";
import { registerDirectRunner } from "./prepared.ts";
import type { Database } from "./schema.ts";

const INT8_OID = 20;
const DATE_OID = 1082;

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly kind: "postgres" | "pglite";
  /** Subscribes to a NOTIFY channel; returns an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Pool figures for metrics (PGlite: a single connection). */
  poolStats(): { total: number; idle: number; waiting: number };
  /**
   * Runs `work` (migrations, index builds) on a connection of its own without the requests'
   * query time-out, which a migration or index build on a big table outlasts: pg gives up on
   * the query client-side after DATABASE_TIMEOUT_MS and discards the connection, while the
   * server goes on. PGlite: the one connection, which has no time-out.
   */
  maintenance<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly poolSize: number;
  readonly timeoutMs: number;
  readonly onPoolError?: (err: Error) => void;
  /**
   * An embedded database to start from (PGlite's dumpDataDir), in place of an empty one, for an
   * in-memory DATA_DIR only. Tests start each app from one migrated image: an empty database
   * costs an initdb of several seconds per start.
   */
  readonly image?: Blob;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPGlite(options.dataDir, options.image);
}

function openPostgres(url: string, options: DatabaseOptions): DatabaseHandle {
  const types = {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (oid === INT8_OID) return (v: string) => Number(v);
      if (oid === DATE_OID) return (v: string) => v;
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.timeoutMs,
    idleTimeoutMillis: 30_000,
    // A query that cannot finish in time fails (503) instead of holding the request forever.
    query_timeout: options.timeoutMs + 1000,
    types,
  });
  // A client losing its server must not crash the process (e.g. Postgres restarted): idle
  // clients report on the pool, checked-out ones on themselves; pg discards them either way.
  pool.on("error", (err) => options.onPoolError?.(err));
  pool.on("connect", (client) => {
    client.on("error", (err) => options.onPoolError?.(err));
    usePreparedStatements(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  registerDirectRunner(db, (name, text, values) => pool.query({ name, text, values }));
  return {
    db,
    kind: "postgres",
    async listen(channel, onPayload) {
      // A dedicated connection; if it is lost (database restart), it is re-established and
      // LISTEN re-issued, retrying every second until the database answers again.
      let client: pg.PoolClient | undefined;
      let stopped = false;
      // Each connection is given back exactly once, whichever of error, failure or stop comes first.
      const released = new WeakSet<pg.PoolClient>();
      const giveBack = (c: pg.PoolClient, broken: boolean) => {
        if (released.has(c)) return;
        released.add(c);
        if (client === c) client = undefined;
        c.release(broken);
      };
      const connect = async (): Promise<void> => {
        while (!stopped) {
          let c: pg.PoolClient | undefined;
          try {
            c = await pool.connect();
            const conn = c;
            conn.on("notification", (msg) => {
              if (msg.channel === channel) onPayload(msg.payload ?? "");
            });
            conn.on("error", () => {
              giveBack(conn, true);
              if (!stopped) setTimeout(() => void connect(), 1000);
            });
            await conn.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
            client = conn;
            return;
          } catch {
            if (c) giveBack(c, true);
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
      };
      // The first attempt is awaited so a healthy database listens before the caller goes on;
      // a failing one keeps retrying in the background.
      await Promise.race([connect(), new Promise((r) => setTimeout(r, options.timeoutMs))]);
      return async () => {
        stopped = true;
        const c = client;
        if (!c) return;
        try {
          await c.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`);
          giveBack(c, false);
        } catch {
          giveBack(c, true);
        }
      };
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async maintenance(work) {
      const ownPool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: options.timeoutMs, types });
      ownPool.on("error", (err) => options.onPoolError?.(err));
      const own = new Kysely<Database>({ dialect: new PostgresDialect({ pool: ownPool }) });
      try {
        return await work(own);
      } finally {
        await own.destroy();
      }
    },
    close: () => db.destroy(),
  };
}

/**
 * Kysely sends every query unnamed, so Postgres parses and plans it each time. Giving each
 * distinct statement text a stable name makes pg prepare it once per connection (measured: about
 * twice the throughput of the service's lead queries). The set of texts is small and fixed; it is
 * capped so an unexpected variety of texts cannot grow it without bound.
 */
const statementNames = new Map<string, string>();
const MAX_PREPARED = 1000;

/**
 * Marks a statement whose best plan depends on its values (a provider with 300,000 leads or with
 * 200; an hour of events or a year): it is sent unnamed, so Postgres plans it for the values of
 * each call instead of switching to a generic plan after five executions. Append with
 * `customPlan(query)`.
 */
export const CUSTOM_PLAN_MARK = "/* plan per call */";

export function customPlan<Q extends { modifyEnd(modifier: Expression<unknown>): Q }>(query: Q): Q {
  return query.modifyEnd(sql.raw(CUSTOM_PLAN_MARK));
}

function usePreparedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (
      typeof config !== "string" ||
      !Array.isArray(values) ||
      !/^\s*(select|insert|update|delete|with)\b/i.test(config) ||
      config.endsWith(CUSTOM_PLAN_MARK)
    ) {
      return query(config, values, callback);
    }
    let name = statementNames.get(config);
    if (name === undefined && statementNames.size < MAX_PREPARED) {
      name = `lp_${statementNames.size}`;
      statementNames.set(config, name);
    }
    return name === undefined ? query(config, values, callback) : query({ name, text: config, values }, callback);
  };
}

async function openPGlite(dataDir: string, image: Blob | undefined): Promise<DatabaseHandle> {
  // Loaded only when used: a service on Postgres does not carry the embedded database's code.
  const [{ PGlite }, { PGliteDialect }, { pg_trgm }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("./pglite-dialect.ts"),
    import("@electric-sql/pglite/contrib/pg_trgm"),
  ]);
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  // Before anything reads the directory: a second process on it would lose acknowledged writes.
  const lock = inMemory ? undefined : await lockDataDir(dataDir);
  const pglite = await PGlite.create(inMemory ? undefined : dataDir, {
    parsers: { [INT8_OID]: (v: string) => Number(v), [DATE_OID]: (v: string) => v },
    // Trigram indexes for the back office's substring search (migration 0009).
    extensions: { pg_trgm },
    ...(inMemory && image && { loadDataDir: image }),
  }).catch(async (err: unknown) => {
    await lock?.release();
    throw err;
  });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: "pglite",
    async listen(channel, onPayload) {
      // Hold the single session while LISTEN runs so it never lands inside another transaction.
      const unsubscribe = await db.connection().execute(() => pglite.listen(channel, onPayload));
      return () => db.connection().execute(() => unsubscribe());
    },
    poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
    maintenance: (work) => work(db),
    async close() {
      try {
        await db.destroy();
      } finally {
        await lock?.release();
      }
    },
  };
}
