/**
 * Runs the migrations. Kysely's Postgres adapter takes a transaction-scoped advisory lock
 * (`pg_advisory_xact_lock`) around the run, so several instances starting at once apply each
 * migration exactly once.
 */
import type { Kysely } from "kysely";
import { type Migration, type MigrationResultSet, Migrator } from "kysely/migration";
import * as m0001 from "./migrations/0001-initial.ts";
import * as m0002 from "./migrations/0002-lead-events.ts";
import * as m0003 from "./migrations/0003-webhooks.ts";
import * as m0004 from "./migrations/0004-sandbox.ts";
import * as m0005 from "./migrations/0005-backoffice.ts";
import * as m0006 from "./migrations/0006-hardening.ts";
import * as m0007 from "./migrations/0007-intake.ts";
import * as m0008 from "./migrations/0008-request-log.ts";
import * as m0009 from "./migrations/0009-back-office.ts";
import * as m0010 from "./migrations/0010-foreign-key-indexes.ts";
import * as m0011 from "./migrations/0011-portal.ts";
import * as m0012 from "./migrations/0012-vacuum-leads.ts";
import * as m0013 from "./migrations/0013-stats-histograms.ts";
import * as m0014 from "./migrations/0014-search-digits.ts";
import * as m0015 from "./migrations/0015-stats-today.ts";
import * as m0016 from "./migrations/0016-request-log-statistics.ts";
import * as m0017 from "./migrations/0017-request-log-outcome-check.ts";
import * as m0018 from "./migrations/0018-request-log-bounds.ts";
import * as m0019 from "./migrations/0019-money.ts";
import * as m0020 from "./migrations/0020-returns.ts";
import * as m0021 from "./migrations/0021-forms.ts";
import * as m0022 from "./migrations/0022-stats-periods.ts";
import * as m0023 from "./migrations/0023-portal-team-and-reset.ts";
import * as m0024 from "./migrations/0024-webhook-event-types.ts";
import * as m0025 from "./migrations/0025-stats-running.ts";
import * as m0026 from "./migrations/0026-vacuum-stats-today.ts";
import type { Database } from "./schema.ts";

const MIGRATIONS: Record<string, Migration> = {
  "0001-initial": m0001,
  "0002-lead-events": m0002,
  "0003-webhooks": m0003,
  "0004-sandbox": m0004,
  "0005-backoffice": m0005,
  "0006-hardening": m0006,
  "0007-intake": m0007,
  "0008-request-log": m0008,
  "0009-back-office": m0009,
  "0010-foreign-key-indexes": m0010,
  "0011-portal": m0011,
  "0012-vacuum-leads": m0012,
  "0013-stats-histograms": m0013,
  "0014-search-digits": m0014,
  "0015-stats-today": m0015,
  "0016-request-log-statistics": m0016,
  "0017-request-log-outcome-check": m0017,
  "0018-request-log-bounds": m0018,
  "0019-money": m0019,
  "0020-returns": m0020,
  "0021-forms": m0021,
  "0022-stats-periods": m0022,
  "0023-portal-team-and-reset": m0023,
  "0024-webhook-event-types": m0024,
  "0025-stats-running": m0025,
  "0026-vacuum-stats-today": m0026,
};

export function createMigrator(db: Kysely<Database>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
  });
}

/** Applies every pending migration; throws with the failing migration's name on error. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const result: MigrationResultSet = await createMigrator(db).migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === "Error")?.migrationName ?? "(setup)";
    const reason = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`migration ${failed} failed: ${reason}`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/** True when every known migration has been applied. */
export async function migrationsApplied(db: Kysely<Database>): Promise<boolean> {
  const migrations = await createMigrator(db).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}

export const MIGRATION_NAMES = Object.keys(MIGRATIONS);
