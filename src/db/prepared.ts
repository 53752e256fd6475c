/**
 * Queries compiled once. Kysely builds and compiles a query on every call (an object tree, then
 * a walk over it to produce the text): on the hot paths that was a measurable share of a
 * request's CPU. A query made here is built with Kysely's builder at start-up, with a named
 * placeholder for each parameter; a call only puts the values in order. The text never changes,
 * so `pg` also prepares it once per connection (database.ts).
 */
import {
  type Compilable,
  CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
} from "kysely";
import type { Database } from "./schema.ts";

/** Builds without a connection: the compiler of the Postgres dialect, a driver that never runs. */
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** Runs a named statement straight on a pool (Postgres): no Kysely executor, connection wrapper or plugins. */
export type DirectRunner = (name: string, text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

const directRunners = new WeakMap<Kysely<Database>, DirectRunner>();

/**
 * Lets prepared queries on `db` itself (not on its transactions, which must stay on their
 * connection) go straight to the pool. database.ts registers the Postgres pool; PGlite runs
 * through Kysely.
 */
export function registerDirectRunner(db: Kysely<Database>, run: DirectRunner): void {
  directRunners.set(db, run);
}

let statements = 0;

/** A parameter's place holder while the query is built: a unique object no value can equal. */
interface Placeholder {
  readonly name: string;
}

export interface PreparedQuery<P, R> {
  /** The SQL text, the same on every call (pgbench and the bench's floor send it too). */
  readonly sql: string;
  /** The values in placeholder order. */
  parameters(params: P): unknown[];
  /** Runs the query on `db` (or a transaction) with `params`. */
  execute(db: Kysely<Database>, params: P): Promise<R[]>;
}

/**
 * Compiles `build` once. `build` receives the builder and, for each parameter name, an opaque
 * placeholder to use where the value goes (as a value, never as a column or table name).
 */
export function prepare<P extends Record<string, unknown>, R>(
  names: readonly (keyof P & string)[],
  build: (db: Kysely<Database>, p: { readonly [K in keyof P]: P[K] }) => Compilable<R> | RawBuilder<R>,
): PreparedQuery<P, R> {
  const placeholders = Object.fromEntries(names.map((name) => [name, { name } satisfies Placeholder]));
  // A query builder compiles by itself; a raw `sql` template needs the instance (Compilable's
  // compile() takes no argument and ignores it).
  const compiled = (build(compiler, placeholders as never) as RawBuilder<R>).compile(compiler);
  // Each parameter is a placeholder (filled per call) or a constant the builder put in (a limit).
  const order = compiled.parameters.map((value) => {
    const name = (value as Placeholder | null)?.name;
    return name !== undefined && placeholders[name] === value ? { name } : { value };
  });
  const unused = names.filter((n) => !order.some((o) => o.name === n));
  if (unused.length > 0) throw new Error(`prepare: placeholders never used: ${unused.join(", ")}`);
  const text = compiled.sql;
  const name = `lp_prepared_${++statements}`;
  const parameters = (params: P) => order.map((o) => (o.name === undefined ? o.value : params[o.name]));
  return {
    sql: text,
    parameters,
    async execute(db, params) {
      const direct = directRunners.get(db);
      if (direct) return (await direct(name, text, parameters(params))).rows as R[];
      const result = await db.executeQuery<R>(CompiledQuery.raw(text, parameters(params)));
      return result.rows as R[];
    },
  };
}
