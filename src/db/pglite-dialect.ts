/**
 * A small Kysely dialect over embedded PGlite. PGlite is one session, so the driver hands out
 * that single connection to one user at a time (a FIFO lock): a transaction never interleaves
 * with another request's statements.
 */
import type { PGlite } from "@electric-sql/pglite";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";

class PGliteConnection implements DatabaseConnection {
  readonly #db: PGlite;
  constructor(db: PGlite) {
    this.#db = db;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.#db.query<R>(query.sql, query.parameters as unknown[]);
    const command = /^\s*(\w+)/.exec(query.sql)?.[1]?.toLowerCase();
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined && command !== "select" ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // biome-ignore lint/correctness/useYield: streaming is not used; the interface requires it
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streamQuery is not supported on PGlite");
  }
}

class PGliteDriver implements Driver {
  readonly #db: PGlite;
  #tail: Promise<void> = Promise.resolve();
  readonly #releases = new WeakMap<DatabaseConnection, () => void>();

  constructor(db: PGlite) {
    this.#db = db;
  }

  async init(): Promise<void> {
    await this.#db.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    // Each acquisition gets its own handle so releases are matched to acquisitions.
    const handle = new PGliteConnection(this.#db);
    this.#releases.set(handle, release);
    return handle;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    await connection.executeQuery(CompiledQuery.raw(`begin${level}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.#releases.get(connection)?.();
    this.#releases.delete(connection);
  }

  async destroy(): Promise<void> {
    await this.#tail;
    if (!this.#db.closed) await this.#db.close();
  }
}

export class PGliteDialect implements Dialect {
  readonly #db: PGlite;
  constructor(db: PGlite) {
    this.#db = db;
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}
