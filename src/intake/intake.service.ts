/**
 * The provider's intake rules, for every edge: administrators read and replace a provider's
 * rules (audited, announced as `intake_rules.changed`), the intake pipeline (pipeline.ts) judges
 * each lead by them (pause and schedule, criteria, and the arguments of intake_guard(), which the
 * insert applies atomically), and providers read the rules as they apply to them now.
 */
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { DuplicateField } from "../config.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import { Fields, type RawId } from "../fields.ts";
import type { LeadOwner, NewLead } from "../leads/lead.ts";
import { capWindow, daysUntil, scheduleState } from "./business-time.ts";
import { isDisposableEmail } from "./contact.ts";
import * as repo from "./intake.repository.ts";
import { capReached, intakeClosed, intakePaused, outsideCriteria } from "./intake-errors.ts";
import {
  CAP_WINDOWS,
  type CapWindow,
  canonicalRules,
  type IntakeRules,
  parseIntakeRules,
  type VersionedRules,
  withDefaults,
} from "./intake-rules.ts";

export type { VersionedRules };

import type { IntakeGuard } from "./pipeline.ts";
import { criteriaBreaches, INTAKE_RULES_TABLE, type IntakeRuleRow } from "./rule-table.ts";

export interface IntakeSettings {
  readonly zone: string;
  readonly duplicateWindowDays: number;
  readonly duplicateMatch: readonly DuplicateField[];
}

export interface IntakeServiceDeps {
  readonly db: Kysely<Database>;
  readonly settings: IntakeSettings;
  readonly now?: () => Date;
  /**
   * How long a provider's rules are reused before they are read again: a change made on another
   * instance applies within this time (500 ms by default; 0 reads them for every lead).
   */
  readonly cacheMs?: number;
  /** Called after an `intake_rules.changed` event is stored (wakes the webhook worker). */
  readonly onEvent?: () => void;
}

export interface CapUsage {
  readonly limit: number;
  readonly used: number;
  readonly remaining: number;
  readonly resetsAt: Date;
}

/** The rules as they apply to one key now. */
export interface PublishedRules extends VersionedRules {
  readonly livemode: boolean;
  readonly open: boolean;
  readonly opensAt: Date | null;
  readonly closesAt: Date | null;
  readonly caps: Readonly<Record<CapWindow, CapUsage | null>>;
  readonly duplicateWindowDays: number;
  readonly duplicateMatch: readonly string[];
  readonly zone: string;
  readonly rateLimits: { readonly perMinute: number; readonly perDay: number };
  readonly table: ReadonlyArray<IntakeRuleRow & { readonly active: boolean }>;
}

interface Current extends VersionedRules {
  readonly perMinute: number;
  readonly perDay: number;
}

export type IntakeService = ReturnType<typeof createIntakeService>;

/** Cap usage is counted exactly up to this many leads per window (the view's cost is bounded). */
const USAGE_COUNT_BOUND = 100_000;

/** The duplicate check's fields as the API names them. */
const MATCH_FIELD: Readonly<Record<DuplicateField, string>> = { phone: "phone_number", email: "email" };

function providerNotFound(id: number): DomainError {
  return new DomainError("not_found", `no provider with id ${id}`, { code: "provider_not_found" });
}

/** Whether a row judges leads of this mode under these rules now. */
function isActive(row: IntakeRuleRow, rules: IntakeRules, livemode: boolean): boolean {
  if (row.appliesTo === "live" && !livemode) return false;
  if (row.setting === null) return true;
  const value = rules[row.setting];
  if (row.setting === "caps") return CAP_WINDOWS.some((w) => rules.caps[w] !== null);
  if (row.setting === "ship_date_min_days") return rules.ship_date_min_days > 0;
  if (typeof value === "boolean") return value;
  return value !== null;
}

export function createIntakeService(deps: IntakeServiceDeps) {
  const { db, settings } = deps;
  const now = deps.now ?? (() => new Date());
  const cacheMs = deps.cacheMs ?? 500;
  const cache = new Map<number, { readonly at: number; readonly value: Promise<Current | undefined> }>();

  async function load(providerId: number): Promise<Current | undefined> {
    const stored = await repo.readRules(db, providerId);
    if (!stored) return undefined;
    return { ...stored, rules: withDefaults(stored.rules) };
  }

  /** The provider's rules, read again when older than cacheMs (one read at a time per provider). */
  function current(providerId: number): Promise<Current | undefined> {
    const t = Date.now();
    const hit = cache.get(providerId);
    if (hit && t - hit.at < cacheMs) return hit.value;
    const value = load(providerId);
    cache.set(providerId, { at: t, value });
    value.catch(() => cache.delete(providerId));
    if (cache.size > 10_000) cache.delete(cache.keys().next().value as number);
    return value;
  }

  /** Each cap of `rules` with the leads of this mode counted in its current window. */
  async function capUsage(providerId: number, livemode: boolean, rules: IntakeRules, at: Date) {
    const usage = async (window: CapWindow): Promise<CapUsage | null> => {
      const limit = rules.caps[window];
      if (limit === null) return null;
      const { start, resetsAt } = capWindow(window, at, settings.zone);
      // The real count (leads before a cap was set or lowered may exceed it), bounded for cost.
      const used = await repo.countSince(db, providerId, livemode, start, Math.max(limit, USAGE_COUNT_BOUND));
      return { limit, used, remaining: Math.max(0, limit - used), resetsAt };
    };
    const [day, week, month] = await Promise.all(CAP_WINDOWS.map(usage));
    return { day: day ?? null, week: week ?? null, month: month ?? null };
  }

  function idOf(raw: RawId): number {
    const f = new Fields();
    const id = f.id({ id: raw }, "id");
    throwIfViolations(f.violations);
    return id as number;
  }

  return {
    // The intake pipeline's provider stages (pipeline.ts runs them in order).

    /** The provider's rules (its defaults when it has none), and the time they are judged at. */
    async rulesNow(owner: LeadOwner): Promise<{ rules: IntakeRules; at: Date }> {
      const at = now();
      const found = await current(owner.providerId);
      return { rules: found?.rules ?? withDefaults({}), at };
    },

    /** Pause and schedule, for live leads only: throws intake_paused or intake_closed. */
    checkOpen(owner: LeadOwner, rules: IntakeRules, at: Date): void {
      if (!owner.livemode) return;
      if (rules.paused) throw intakePaused(rules.paused_reason);
      const schedule = scheduleState(rules.schedule, at, settings.zone);
      if (!schedule.open) throw intakeClosed(schedule.opensAt, at);
    },

    /** Every criterion at once: throws outside_criteria listing each breach. */
    checkCriteria(lead: NewLead, rules: IntakeRules, at: Date): void {
      const breaches = criteriaBreaches(lead, rules, {
        shipDateInDays: daysUntil(lead.estimatedShipDate, at, settings.zone),
        disposableEmail: isDisposableEmail(lead.email),
      });
      if (breaches.length > 0) throw outsideCriteria(breaches);
    },

    /** The duplicate check and caps intake_guard() applies with the insert. */
    guardFor(rules: IntakeRules, at: Date): IntakeGuard {
      const caps = CAP_WINDOWS.flatMap((window) => {
        const limit = rules.caps[window];
        return limit === null ? [] : [{ window, start: capWindow(window, at, settings.zone).start, limit }];
      });
      return {
        matchPhone: settings.duplicateMatch.includes("phone"),
        matchEmail: settings.duplicateMatch.includes("email"),
        windowDays: settings.duplicateWindowDays,
        rejectDuplicates: rules.duplicate_policy === "reject",
        caps,
      };
    },

    /**
     * cap_reached for the full windows: the one that resets last (until then no lead gets in);
     * the longer of two that reset together (a Sunday's day and week: the week).
     */
    capReached(windows: readonly string[]): DomainError {
      const at = now();
      const full = CAP_WINDOWS.filter((w) => windows.includes(w)).map((w) => ({
        window: w,
        resetsAt: capWindow(w, at, settings.zone).resetsAt,
      }));
      const last = full.reduce((a, b) => (b.resetsAt >= a.resetsAt ? b : a));
      return capReached(last.window, last.resetsAt, at);
    },

    /** A provider's rules for administrators, with its live caps' usage now. */
    async get(rawId: RawId): Promise<VersionedRules & { caps: Readonly<Record<CapWindow, CapUsage | null>> }> {
      const id = idOf(rawId);
      const found = await load(id);
      if (!found) throw providerNotFound(id);
      const caps = await capUsage(id, true, found.rules, now());
      return { rules: found.rules, version: found.version, updatedAt: found.updatedAt, caps };
    },

    /**
     * Replaces a provider's rules (members left out take their defaults), audited with before and
     * after, and announced to the provider as an `intake_rules.changed` event in the same
     * transaction.
     */
    async set(actor: string, rawId: RawId, input: unknown): Promise<VersionedRules> {
      const id = idOf(rawId);
      const { rules, violations } = parseIntakeRules(input);
      throwIfViolations(violations);
      const next = rules as IntakeRules;
      const result = await db.transaction().execute(async (trx) => {
        const before = await repo.lockRules(trx, id);
        if (!before) throw providerNotFound(id);
        // The same rules again change nothing: no new version, audit entry or event.
        if (canonicalRules(withDefaults(before.intake_rules)) === canonicalRules(next)) return undefined;
        const written = await repo.writeRules(trx, id, next);
        await recordAudit(trx, {
          actor,
          action: "intake_rules.updated",
          targetType: "provider",
          targetId: String(id),
          details: {
            provider_id: id,
            version: written.version,
            before: withDefaults(before.intake_rules),
            after: next,
          },
        });
        const versioned = { rules: next, version: written.version, updatedAt: written.updatedAt };
        await repo.insertRulesEvent(trx, id, newEventId(), { intakeRules: versioned });
        return versioned;
      });
      if (!result) {
        const found = await load(id);
        if (!found) throw providerNotFound(id);
        return { rules: found.rules, version: found.version, updatedAt: found.updatedAt };
      }
      cache.delete(id);
      deps.onEvent?.();
      return result;
    },

    /** The rules as they apply to the calling key now (Public API). */
    async published(owner: LeadOwner): Promise<PublishedRules> {
      const at = now();
      const found = await current(owner.providerId);
      if (!found) throw providerNotFound(owner.providerId);
      const { rules } = found;
      const schedule = owner.livemode
        ? scheduleState(rules.schedule, at, settings.zone)
        : { open: true, opensAt: null, closesAt: null };
      const open = schedule.open && !(owner.livemode && rules.paused);
      const caps = await capUsage(owner.providerId, owner.livemode, rules, at);
      return {
        rules,
        version: found.version,
        updatedAt: found.updatedAt,
        livemode: owner.livemode,
        open,
        opensAt: open ? null : schedule.opensAt,
        closesAt: open ? schedule.closesAt : null,
        caps,
        duplicateWindowDays: settings.duplicateWindowDays,
        duplicateMatch: settings.duplicateMatch.map((f) => MATCH_FIELD[f]),
        zone: settings.zone,
        rateLimits: { perMinute: found.perMinute, perDay: found.perDay },
        table: INTAKE_RULES_TABLE.map((row) => ({ ...row, active: isActive(row, rules, owner.livemode) })),
      };
    },
  };
}
