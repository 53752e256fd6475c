/**
 * Commercial terms for every edge: administrators read and replace a provider's terms (audited,
 * announced as `terms.changed`), providers read them and ask what a lead would earn, and the lead
 * service prices every lead it accepts through `pricing` (the LeadPricing hook leads/ defines).
 */
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, type FieldViolation, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import type { RawId } from "../fields.ts";
import type { LeadOwner } from "../leads/lead.ts";
import { validateLead } from "../leads/lead.validation.ts";
import type { LeadPricing, LeadPurchase } from "../leads/lead-pricing.ts";
import { lockProvider } from "../providers/provider.repository.ts";
import { providerId as readProviderId } from "../providers/provider.service.ts";
import type { ZipDirectory } from "../zip/zip-directory.ts";
import * as repo from "./money.repository.ts";
import { sameTerms, versionedTermsJson } from "./money.ts";
import {
  defaultTerms,
  type PriceBreakdown,
  parseTerms,
  priceOf,
  type Terms,
  termsWithDefaults,
  type VersionedTerms,
} from "./terms.ts";

export interface TermsServiceDeps {
  readonly db: Kysely<Database>;
  /** LEDGER_CURRENCY. */
  readonly currency: string;
  readonly zips: ZipDirectory;
  /** BUSINESS_TIMEZONE (a quoted lead is checked as a created one is). */
  readonly zone: string;
  readonly now?: () => Date;
  /** LEDGER_ENABLED: false prices no lead (nothing is posted). */
  readonly enabled?: boolean;
  /** Called after a terms.changed event is stored (wakes the webhook worker). */
  readonly onEvent?: () => void;
}

/** The error the purchase raises when the terms changed after the price was worked out (migration 0019). */
const TERMS_CHANGED = "LPT01";
/** Providers whose terms are kept in memory at most (a stale copy is caught by the insert). */
const CACHE_LIMIT = 10_000;

export interface Quote extends PriceBreakdown {
  readonly currency: string;
  readonly termsVersion: number;
  readonly livemode: boolean;
}

/** What a lead would earn under a provider's current terms, or under draft terms (an administrator's preview). */
export interface PreviewQuote extends PriceBreakdown {
  readonly currency: string;
  /** The current terms' version; null for draft terms. */
  readonly termsVersion: number | null;
  readonly draft: boolean;
}

export type TermsService = ReturnType<typeof createTermsService>;

const PREVIEW_MEMBERS = ["lead", "terms"];

/** Violations of a member of a bigger body, named from the body (`lead.origin_zip`, `terms.price_rules[0]…`). */
function within(member: string, violations: readonly FieldViolation[]): FieldViolation[] {
  return violations.map((v) =>
    v.field === "body"
      ? { ...v, field: member, message: `${member} must be a JSON object` }
      : {
          ...v,
          field: `${member}.${v.field}`,
          message: v.message.startsWith(v.field) ? `${member}.${v.message}` : v.message,
        },
  );
}

function providerNotFound(id: number): DomainError {
  return new DomainError("not_found", `no provider with id ${id}`, { code: "provider_not_found" });
}

export function createTermsService(deps: TermsServiceDeps) {
  const { db, currency } = deps;
  const now = deps.now ?? (() => new Date());
  const enabled = deps.enabled ?? true;
  /**
   * Each provider's terms as last read. No time limit: the purchase checks in the insert that the
   * version priced with is still the current one (LPT01 otherwise), so a change saved on another
   * instance is caught by the next lead, which is then priced again.
   */
  const cache = new Map<number, Promise<VersionedTerms>>();

  /** The provider's current terms (the defaults as version 0 when never set). */
  async function load(id: number, on: Kysely<Database> = db): Promise<VersionedTerms> {
    const stored = await repo.readTerms(on, id);
    if (stored === null) throw providerNotFound(id);
    if (stored === undefined) return { terms: defaultTerms(currency), version: 0, effectiveAt: null };
    return {
      terms: termsWithDefaults(stored.terms, currency),
      version: stored.version,
      effectiveAt: stored.effectiveAt,
    };
  }

  function cached(id: number): Promise<VersionedTerms> {
    let hit = cache.get(id);
    if (hit === undefined) {
      hit = load(id);
      hit.catch(() => cache.delete(id));
      if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as number);
      cache.set(id, hit);
    }
    return hit;
  }

  const pricing: LeadPricing = {
    async price(owner, lead): Promise<LeadPurchase | null> {
      if (!enabled) return null;
      const { terms, version } = await cached(owner.providerId);
      const p = priceOf(terms, lead);
      return {
        amountCents: p.amountCents,
        currency: terms.currency,
        rule: p.rule,
        termsVersion: version,
        settlementDays: terms.settlement_days,
      };
    },
    isStale(err) {
      if ((err as { code?: unknown } | null)?.code !== TERMS_CHANGED) return false;
      cache.clear();
      return true;
    },
  };

  /** A preview's body `{lead, terms?}` read: the lead, the draft terms (undefined: the current ones), or every bad member named. */
  function readPreview(input: unknown) {
    const violations: FieldViolation[] = [];
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      violations.push({ field: "body", code: "invalid_type", message: "the body must be a JSON object" });
      return { violations };
    }
    const body = input as Record<string, unknown>;
    for (const k of Object.keys(body)) {
      if (!PREVIEW_MEMBERS.includes(k)) {
        violations.push({ field: k, code: "unknown_field", message: `${k} is not a member (lead, terms)` });
      }
    }
    let lead: ReturnType<typeof validateLead>["lead"];
    if (body.lead === undefined || body.lead === null) {
      violations.push({ field: "lead", code: "required", message: "lead is required: the lead to price" });
    } else {
      const checked = validateLead(body.lead, { zips: deps.zips, now: now(), zone: deps.zone });
      violations.push(...within("lead", checked.violations));
      lead = checked.lead;
    }
    let draft: Terms | undefined;
    if (body.terms !== undefined && body.terms !== null) {
      const parsed = parseTerms(body.terms, currency);
      violations.push(...within("terms", parsed.violations));
      draft = parsed.terms;
    }
    return { violations, lead, draft };
  }

  return {
    pricing,

    /** A terms body's violations (an edge words a schema rejection with them). */
    violations: (input: unknown) => parseTerms(input, currency).violations,
    /** A quoted lead's violations, as a create names them. */
    quoteViolations: (input: unknown) =>
      validateLead(input, { zips: deps.zips, now: now(), zone: deps.zone }).violations,

    /** A preview body's violations (an edge words a schema rejection with them). */
    previewViolations: (input: unknown) => readPreview(input).violations,

    /**
     * What a lead would earn under the provider's current terms, or under the draft `terms` of
     * the body (checked as a PUT checks them, each bad member named `terms.…`): an
     * administrator's preview before saving. Stores nothing.
     */
    async preview(rawId: RawId, input: unknown): Promise<PreviewQuote> {
      const id = readProviderId(rawId);
      const { violations, lead, draft } = readPreview(input);
      throwIfViolations(violations);
      if (!lead) throw new Error("validation returned no lead and no violations");
      if (draft !== undefined) {
        if ((await repo.readTerms(db, id)) === null) throw providerNotFound(id);
        return { ...priceOf(draft, lead), currency: draft.currency, termsVersion: null, draft: true };
      }
      const { terms, version } = await load(id);
      return { ...priceOf(terms, lead), currency: terms.currency, termsVersion: version, draft: false };
    },

    /** A provider's terms with their version (administrators). */
    get(rawId: RawId): Promise<VersionedTerms> {
      return load(readProviderId(rawId));
    },

    /**
     * Replaces a provider's terms from now on (leads already accepted keep their price): a new
     * version, audited with before and after, announced to the provider as `terms.changed`, in
     * one transaction. The same terms again change nothing.
     */
    async set(actor: string, rawId: RawId, input: unknown): Promise<VersionedTerms> {
      const id = readProviderId(rawId);
      const { terms, violations } = parseTerms(input, currency);
      throwIfViolations(violations);
      const next = terms as Terms;
      const changed = await db.transaction().execute(async (trx) => {
        // Changes of one provider's terms are serialized on its row.
        if (!(await lockProvider(trx, id))) throw providerNotFound(id);
        const before = await load(id, trx);
        if (before.version > 0 && sameTerms(before.terms, next)) return undefined;
        const version = before.version + 1;
        const effectiveAt = await repo.insertTerms(trx, id, version, next, actor);
        const after: VersionedTerms = { terms: next, version, effectiveAt };
        await recordAudit(trx, {
          actor,
          action: "terms.updated",
          targetType: "provider",
          targetId: String(id),
          details: { provider_id: id, version, before: before.terms, after: next },
        });
        await repo.insertMoneyEvent(trx, {
          eventId: newEventId(),
          providerId: id,
          livemode: true,
          type: "terms.changed",
          data: { terms: versionedTermsJson(after) },
        });
        return after;
      });
      cache.delete(id);
      if (changed === undefined) return load(id);
      deps.onEvent?.();
      return changed;
    },

    /** The calling provider's terms now (the Public API). */
    published(owner: LeadOwner): Promise<VersionedTerms> {
      return load(owner.providerId);
    },

    /**
     * What `input` (a lead body, checked as a create checks it) would earn now under the current
     * terms, and which rule set it. Stores nothing, counts against no cap; a duplicate would earn
     * nothing, which only the create can tell.
     */
    async quote(owner: LeadOwner, input: unknown): Promise<Quote> {
      const { lead, violations } = validateLead(input, { zips: deps.zips, now: now(), zone: deps.zone });
      throwIfViolations(violations);
      if (!lead) throw new Error("validation returned no lead and no violations");
      const { terms, version } = await load(owner.providerId);
      return { ...priceOf(terms, lead), currency: terms.currency, termsVersion: version, livemode: owner.livemode };
    },
  };
}
