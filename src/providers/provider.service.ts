/** Provider management use cases: list, create, read (with the key), update, issue keys. Audited. */
import type { Kysely } from "kysely";
import { DateTime } from "luxon";
import * as keys from "../api-keys/api-key.repository.ts";
import { generateKey, KEY_MODES, type KeyCrypto, type KeyMode, maskKey } from "../api-keys/api-key.ts";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import { capWindow, DEFAULT_BUSINESS_TIMEZONE } from "../intake/business-time.ts";
import { rollupCoverage } from "../stats/stats.repository.ts";
import { enableEndpoint, ensureEndpoint } from "../webhooks/webhook.repository.ts";
import { generateSecret } from "../webhooks/webhook.ts";
import * as repo from "./provider.repository.ts";
import { type Provider, type ProviderChanges, parseProviderInput } from "./provider.ts";

/** A change's field as the API (and the audit log) names it. */
const FIELD_NAMES: Record<keyof ProviderChanges, string> = {
  name: "name",
  contactEmail: "contact_email",
  isActive: "is_active",
  rateLimitPerMinute: "rate_limit_per_minute",
  rateLimitPerDay: "rate_limit_per_day",
  webhookUrl: "webhook_url",
  webhookEventTypes: "webhook_event_types",
  notes: "notes",
};

export const MAX_PAGE_SIZE = 100;
/** Beyond any real list; keeps OFFSET within what the database accepts. */
export const MAX_PAGE = 1_000_000;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

export interface ProviderServiceDeps {
  readonly db: Kysely<Database>;
  readonly crypto: KeyCrypto;
  readonly defaults: { readonly perMinute: number; readonly perDay: number };
  readonly now?: () => Date;
  /** Production refuses webhook URLs that point inside the network (see webhook-url.ts). */
  readonly production?: boolean;
  /** Ports a webhook_url may name under production's rules (WEBHOOK_ALLOWED_PORTS). */
  readonly webhookPorts?: readonly number[];
  /** Called after a provider's keys or limits change, so caches can drop what they hold. */
  readonly onProviderChanged?: (providerId: number) => void;
  /**
   * Called in the transaction of an update that sets is_active to false, with the administrator:
   * ends what the provider's people have open (their portal sessions), audited with the change.
   */
  readonly onDeactivating?: (trx: Kysely<Database>, actor: string, providerId: number) => Promise<unknown>;
  /** BUSINESS_TIMEZONE: where the list's "this week" starts (Monday 00:00). */
  readonly businessTimezone?: string;
}

export interface ListQuery {
  readonly page?: number | undefined;
  readonly pageSize?: number | undefined;
  readonly search?: string | undefined;
  readonly isActive?: boolean | undefined;
  /** Only these providers (at most one page of them). */
  readonly ids?: readonly RawId[] | undefined;
}

export interface KeyOptions {
  /** `live` (default) or `test` (an `lp_test_` key for the sandbox); checked. */
  readonly mode?: string | undefined;
  readonly expiresAt?: Date | undefined;
  readonly previousKeyGraceSeconds?: number | undefined;
}

export type ProviderService = ReturnType<typeof createProviderService>;

/** The provider id as a number, or invalid_argument naming `id`. */
export function providerId(raw: RawId): number {
  const f = new Fields();
  const id = f.id({ id: raw }, "id");
  throwIfViolations(f.violations);
  return id ?? 0;
}

/** Records what an administrator did to a provider, in the caller's transaction. */
export function audit(
  db: Kysely<Database>,
  actor: string,
  action: string,
  id: number,
  details?: Record<string, unknown>,
) {
  return recordAudit(db, { actor, action, targetType: "provider", targetId: String(id), ...(details && { details }) });
}

export function notFound(id: number): DomainError {
  return new DomainError("not_found", `no provider with id ${id}`, { code: "provider_not_found" });
}

function duplicateName(name: string): DomainError {
  const message = `a provider named "${name}" already exists (names are compared case-insensitively)`;
  return new DomainError("duplicate", message, {
    code: "duplicate_provider_name",
    violations: [{ field: "name", code: "duplicate", message }],
  });
}

export function createProviderService(deps: ProviderServiceDeps) {
  const { db, crypto } = deps;

  /**
   * A webhook_url was set: the provider gets its signing secret if it has none, and an endpoint
   * disabled earlier (410 Gone) receives again.
   */
  const webhookUrlSet = async (trx: Kysely<Database>, actor: string, id: number) => {
    if (await ensureEndpoint(trx, id, crypto.encrypt(generateSecret()))) {
      await audit(trx, actor, "webhook_secret.created", id);
    } else if (await enableEndpoint(trx, id)) {
      await audit(trx, actor, "webhook.enabled", id);
    }
  };
  const now = deps.now ?? (() => new Date());
  const changed = (id: number) => deps.onProviderChanged?.(id);
  const webhookPolicy = { production: deps.production ?? false, allowedPorts: deps.webhookPorts };

  return {
    async list(q: ListQuery) {
      const f = new Fields();
      const page = f.integer({ page: q.page ?? 1 }, "page", 1, MAX_PAGE) ?? 1;
      const pageSize = f.integer({ page_size: q.pageSize ?? DEFAULT_PAGE_SIZE }, "page_size", 1, MAX_PAGE_SIZE) ?? 1;
      const search = f.text({ search: q.search }, "search", { max: 100, noControl: true });
      if (q.ids !== undefined && q.ids.length > MAX_PAGE_SIZE) {
        f.add("id", "too_many", `at most ${MAX_PAGE_SIZE} ids`);
      }
      const ids = q.ids?.map((raw, i) => f.id({ [`id[${i}]`]: raw }, `id[${i}]`) ?? 0);
      throwIfViolations(f.violations);
      const { count, providers } = await repo.listProviders(db, {
        page,
        pageSize,
        search,
        isActive: q.isActive,
        ids,
      });
      const zone = deps.businessTimezone ?? DEFAULT_BUSINESS_TIMEZONE;
      const week = capWindow("week", now(), zone).start;
      const weekDay = DateTime.fromJSDate(week, { zone }).toISODate() as string;
      // The week's days from the stats rollup, as far as it has reached (today's too); the rest
      // live. One snapshot, so a roll-up committing between the two reads counts nothing twice.
      const activity = await db
        .transaction()
        .setIsolationLevel("repeatable read")
        .setAccessMode("read only")
        .execute(async (trx) => {
          const { rolledThrough: rolled, partial } = await rollupCoverage(trx);
          const rolledDay = rolled !== null && rolled >= weekDay ? rolled : null;
          const today = partial !== null && partial.day >= weekDay ? partial : null;
          const startOf = (day: string) => DateTime.fromISO(day, { zone }).startOf("day").toJSDate();
          const liveFrom =
            today !== null
              ? new Date(Math.max(today.through.getTime(), startOf(today.day).getTime()))
              : rolledDay !== null
                ? DateTime.fromISO(rolledDay, { zone }).plus({ days: 1 }).startOf("day").toJSDate()
                : week;
          return repo.activityOf(
            trx,
            providers.map((p) => p.id),
            { weekDay, rolledDay, todayDay: today?.day ?? null, liveFrom },
          );
        });
      return { count, providers, activity, page, pageSize, hasNext: page * pageSize < count };
    },

    async create(actor: string, input: unknown): Promise<Provider> {
      const { changes, violations } = parseProviderInput(input, false, webhookPolicy);
      throwIfViolations(violations);
      const name = changes.name as string;
      const provider = await db.transaction().execute(async (trx) => {
        const id = await repo.insertProvider(trx, { ...changes, name }, deps.defaults);
        if (id === undefined) throw duplicateName(name);
        await audit(trx, actor, "provider.created", id, { fields: Object.keys(changes) });
        if (typeof changes.webhookUrl === "string") await webhookUrlSet(trx, actor, id);
        return repo.findProvider(trx, id);
      });
      if (!provider) throw new Error("provider vanished after insert");
      return provider;
    },

    /**
     * The provider and its current keys in plain text, live and test (an audited view, spec §5
     * rule 2).
     */
    async get(
      actor: string,
      rawId: RawId,
    ): Promise<{ provider: Provider; apiKey: string | null; testApiKey: string | null }> {
      const id = providerId(rawId);
      const provider = await repo.findProvider(db, id);
      if (!provider) throw notFound(id);
      const [live, test] = await Promise.all(KEY_MODES.map((mode) => keys.currentKeyCiphertext(db, id, mode)));
      if (live !== undefined || test !== undefined) {
        await audit(db, actor, "api_key.viewed", id, { modes: KEY_MODES.filter((_, i) => [live, test][i]) });
      }
      const plain = (c: string | undefined) => (c === undefined ? null : crypto.decrypt(c));
      return { provider, apiKey: plain(live), testApiKey: plain(test) };
    },

    /** The provider with its keys as masks only: nothing is revealed, so nothing is audited. */
    async summary(rawId: RawId): Promise<Provider> {
      const id = providerId(rawId);
      const provider = await repo.findProvider(db, id);
      if (!provider) throw notFound(id);
      return provider;
    },

    /**
     * One current key, of `mode`, in plain text (null when there is none): the console's reveal
     * fetches exactly the key asked for, and the audit records that one mode.
     */
    async revealKey(
      actor: string,
      rawId: RawId,
      rawMode: string | undefined,
    ): Promise<{ mode: KeyMode; apiKey: string | null }> {
      const id = providerId(rawId);
      const f = new Fields();
      const mode = f.oneOf({ mode: rawMode }, "mode", KEY_MODES, true) as KeyMode;
      throwIfViolations(f.violations);
      if (!(await repo.findProvider(db, id))) throw notFound(id);
      const ciphertext = await keys.currentKeyCiphertext(db, id, mode);
      if (ciphertext === undefined) return { mode, apiKey: null };
      await audit(db, actor, "api_key.viewed", id, { modes: [mode] });
      return { mode, apiKey: crypto.decrypt(ciphertext) };
    },

    async update(actor: string, rawId: RawId, input: unknown): Promise<Provider> {
      const id = providerId(rawId);
      const { changes, violations } = parseProviderInput(input, true, webhookPolicy);
      throwIfViolations(violations);
      const provider = await db.transaction().execute(async (trx) => {
        const before = await repo.findProvider(trx, id);
        let found: boolean;
        try {
          found = await repo.updateProvider(trx, id, changes);
        } catch (err) {
          if ((err as { code?: string }).code === "23505") throw duplicateName(changes.name ?? "");
          throw err;
        }
        if (!found || !before) throw notFound(id);
        // What changed, by the API's field names, with the value before and after (no secrets here:
        // keys and webhook secrets have their own audited actions).
        const diff = Object.fromEntries(
          (Object.keys(changes) as (keyof ProviderChanges)[])
            .filter((k) => before[k] !== changes[k])
            .map((k) => [FIELD_NAMES[k], { before: before[k] ?? null, after: changes[k] ?? null }]),
        );
        await audit(trx, actor, "provider.updated", id, { fields: Object.keys(changes), changes: diff });
        if (typeof changes.webhookUrl === "string") await webhookUrlSet(trx, actor, id);
        if (changes.isActive === false) await deps.onDeactivating?.(trx, actor, id);
        return repo.findProvider(trx, id);
      });
      changed(id);
      if (!provider) throw notFound(id);
      return provider;
    },

    /**
     * Issues a new key. The previous key stops at once, or after `previousKeyGraceSeconds`.
     * Returns the new key in plain text.
     */
    async generateKey(actor: string, rawId: RawId, options: KeyOptions) {
      const id = providerId(rawId);
      const at = now();
      const grace = options.previousKeyGraceSeconds ?? 0;
      const f = new Fields();
      const mode = (f.oneOf({ mode: options.mode }, "mode", KEY_MODES, false) ?? "live") as KeyMode;
      if (options.expiresAt !== undefined && !(options.expiresAt.getTime() > at.getTime())) {
        f.add("expires_at", "out_of_range", "expires_at must be in the future");
      }
      f.integer({ previous_key_grace_seconds: grace }, "previous_key_grace_seconds", 0, MAX_GRACE_SECONDS);
      throwIfViolations(f.violations);
      const key = generateKey(mode);
      const retireAt = new Date(at.getTime() + grace * 1000);
      const result = await db.transaction().execute(async (trx) => {
        if (!(await repo.lockProvider(trx, id))) throw notFound(id);
        const retired = await keys.retireKeys(trx, id, mode, retireAt);
        const row = await keys.insertKey(trx, {
          providerId: id,
          mode,
          digest: crypto.digest(key),
          ciphertext: crypto.encrypt(key),
          masked: maskKey(key),
          expiresAt: options.expiresAt ?? null,
        });
        await audit(trx, actor, "api_key.generated", id, {
          mode,
          key_id: row.id,
          masked: maskKey(key),
          previous_key_grace_seconds: grace,
          expires_at: options.expiresAt ?? null,
        });
        return { createdAt: row.created_at, retired };
      });
      changed(id);
      return {
        apiKey: key,
        mode,
        createdAt: result.createdAt,
        expiresAt: options.expiresAt ?? null,
        previousKeyExpiresAt: grace > 0 && result.retired > 0 ? retireAt : null,
      };
    },

    /** Stops the provider's key of `mode` at once (no new key is issued). */
    async revokeKey(actor: string, rawId: RawId, rawMode: string | undefined): Promise<Provider> {
      const id = providerId(rawId);
      const f = new Fields();
      const mode = f.oneOf({ mode: rawMode }, "mode", KEY_MODES, true) as KeyMode;
      throwIfViolations(f.violations);
      const provider = await db.transaction().execute(async (trx) => {
        if (!(await repo.lockProvider(trx, id))) throw notFound(id);
        const revoked = await keys.retireKeys(trx, id, mode, now());
        await audit(trx, actor, "api_key.revoked", id, { mode, keys: revoked });
        return repo.findProvider(trx, id);
      });
      changed(id);
      if (!provider) throw notFound(id);
      return provider;
    },
  };
}
