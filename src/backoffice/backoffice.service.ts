/**
 * What the back office reads beyond the provider operations: leads across providers, the audit
 * trail, and a provider's usage of its rate limits now. Administrators only (the edge's surface).
 */
import type { Kysely } from "kysely";
import { type AuditRecord, listAudit, withTargetNames } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import { LEAD_STATES, type Lead, type LeadState } from "../leads/lead.ts";
import { searchLeads } from "../leads/lead-search.repository.ts";
import { type Page, pageOf, readPageRequest } from "../paging.ts";
import { findProvider } from "../providers/provider.repository.ts";
import { notFound, providerId } from "../providers/provider.service.ts";
import type { Admission } from "../rate-limit/admission.ts";

export const ADMIN_PAGE = { defaultSize: 25, maxSize: 100 } as const;

export interface LeadSearchQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly providerId?: RawId | undefined;
  readonly state?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  readonly q?: string | undefined;
  readonly includeTest?: boolean | undefined;
  /** Only flagged duplicates (true) or only the rest (false). */
  readonly duplicate?: boolean | undefined;
}

export interface AuditQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly providerId?: RawId | undefined;
  readonly actor?: string | undefined;
}

export interface WindowUsage {
  readonly used: number | null;
  readonly limit: number;
  readonly resetSeconds: number;
}

export interface ProviderUsage {
  readonly live: { readonly minute: WindowUsage; readonly day: WindowUsage };
  readonly test: { readonly minute: WindowUsage; readonly day: WindowUsage };
}

export type Backoffice = ReturnType<typeof createBackoffice>;

export function createBackoffice(deps: { readonly db: Kysely<Database>; readonly admission: Admission }) {
  const { db } = deps;
  return {
    /** Leads of every provider (live only unless asked), newest first, filtered. */
    async leads(q: LeadSearchQuery): Promise<Page<Lead>> {
      const f = new Fields();
      const page = readPageRequest(f, q, ADMIN_PAGE);
      const provider = q.providerId === undefined ? undefined : f.id({ provider_id: q.providerId }, "provider_id");
      const state = f.oneOf({ state: q.state }, "state", LEAD_STATES, false) as LeadState | undefined;
      const createdAfter = f.instant(q.createdAfter, "created_after");
      const createdBefore = f.instant(q.createdBefore, "created_before");
      const search = f.text({ q: q.q }, "q", { max: 128, noControl: true });
      throwIfViolations(f.violations);
      const filter = {
        providerId: provider,
        state,
        createdAfter,
        createdBefore,
        q: search === "" ? undefined : search,
        includeTest: q.includeTest,
        duplicate: q.duplicate,
        beforeId: page.afterId,
      };
      return pageOf(await searchLeads(db, filter, page.size + 1), page.size, (l) => l.id);
    },

    /** Who did what and when, newest first; by provider (its own entries and its leads') and by actor (JWT `sub`). */
    async audit(q: AuditQuery): Promise<Page<AuditRecord>> {
      const f = new Fields();
      const page = readPageRequest(f, q, ADMIN_PAGE);
      const provider = q.providerId === undefined ? undefined : f.id({ provider_id: q.providerId }, "provider_id");
      const actor = f.text({ actor: q.actor }, "actor", { max: 200, noControl: true });
      throwIfViolations(f.violations);
      const filter = { providerId: provider, actor: actor === "" ? undefined : actor, beforeId: page.afterId };
      const result = pageOf(await listAudit(db, filter, page.size + 1), page.size, (a) => a.id);
      return { ...result, items: await withTargetNames(db, result.items) };
    },

    /** The provider's requests this minute and today against its limits, live and test, from the limiter. */
    async usage(rawId: RawId): Promise<ProviderUsage> {
      const id = providerId(rawId);
      const provider = await findProvider(db, id);
      if (!provider) throw notFound(id);
      const limits = { minute: provider.rateLimitPerMinute, day: provider.rateLimitPerDay };
      const mode = async (livemode: boolean) => {
        const u = await deps.admission.usage(id, livemode);
        const window = (w: "minute" | "day"): WindowUsage => ({
          used: u[w].used ?? null,
          limit: limits[w],
          resetSeconds: u[w].resetSeconds,
        });
        return { minute: window("minute"), day: window("day") };
      };
      const [live, test] = await Promise.all([mode(true), mode(false)]);
      return { live, test };
    },
  };
}
