/**
 * Readiness (`/readyz`): the database answers and its schema is current. Redis is reported but
 * does not make the instance unready: rate limits fail open by design.
 */
import type { Kysely } from "kysely";
import { migrationsApplied } from "./db/migrator.ts";
import type { Database } from "./db/schema.ts";

export interface Readiness {
  readonly ready: boolean;
  readonly body: Record<string, unknown>;
}

/** The rate-limit store's state as /readyz shows it (rate-limit/rate-limiter.ts `status()`). */
export interface StoreStatus {
  readonly store: "memory" | "redis";
  readonly ok: boolean;
  readonly detail?: string;
}

export function createReadiness(db: Kysely<Database>, limiter: { status(): StoreStatus }): () => Promise<Readiness> {
  return async () => {
    const { store, ...redis } = limiter.status();
    const extra = store === "redis" ? { redis } : {};
    try {
      // Reading the migration table proves both: the database answers and the schema is current.
      const current = await migrationsApplied(db);
      const migrations = current ? { ok: true } : { ok: false, detail: "migrations are pending" };
      const body = {
        status: current ? "ready" : "not_ready",
        checks: { database: { ok: true }, migrations, ...extra },
      };
      return { ready: current, body };
    } catch (err) {
      const checks = { database: { ok: false, detail: (err as Error).message }, migrations: { ok: false }, ...extra };
      return { ready: false, body: { status: "not_ready", checks } };
    }
  };
}
