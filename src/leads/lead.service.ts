/** Lead use cases: the only place lead rules are applied, for every edge. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import { Fields, isPossibleExternalId } from "../fields.ts";
import type { IntakeService } from "../intake/intake.service.ts";
import { duplicateLead } from "../intake/intake-errors.ts";
import { intakePipeline, runIntake } from "../intake/pipeline.ts";
import { type Page, pageOf, readPageRequest } from "../paging.ts";
import type { ZipDirectory } from "../zip/zip-directory.ts";
import { findLead, findLeadIdentity } from "./lead.repository.ts";
import {
  type Consent,
  LEAD_STATES,
  type Lead,
  type LeadOwner,
  type LeadSource,
  type LeadState,
  type NewLead,
  providerDuplicate,
  providerView,
  type Warning,
} from "./lead.ts";
import { SUB_ID, validateLead } from "./lead.validation.ts";
import { insertLead } from "./lead-insert.repository.ts";
import { listProviderLeads } from "./lead-lists.repository.ts";
import type { LeadPricing } from "./lead-pricing.ts";
import { searchLeads } from "./lead-search.repository.ts";

export interface CreatedLead {
  readonly lead: Lead;
  readonly warnings: readonly Warning[];
  /** Warnings left out of `warnings` (it lists at most MAX_WARNINGS). */
  readonly warningsTruncated: number;
}

/** How a lead came in: its source, and the consent record that replaces the body's `consent` (the form's). */
export interface CreateOptions {
  readonly source: LeadSource;
  readonly consent?: Consent;
}

export interface LeadServiceDeps {
  readonly db: Kysely<Database>;
  readonly zips: ZipDirectory;
  /** The provider's intake rules: the pipeline's pause, schedule, criteria and intake_guard stages. */
  readonly intake: Pick<IntakeService, "rulesNow" | "checkOpen" | "checkCriteria" | "guardFor" | "capReached">;
  /** BUSINESS_TIMEZONE: "yesterday" for ship_date_in_past; the day another provider's original is dated to. */
  readonly zone: string;
  readonly now?: () => Date;
  /** Called after a lead is stored (metrics). */
  readonly onCreated?: (lead: Lead) => void;
  /**
   * Test mode only: the sandbox's answer to a reserved value before anything is stored (e.g. a
   * rate_limited error the integrator asked for), or nothing (sandbox/sandbox.ts).
   */
  readonly sandboxRefusal?: (lead: NewLead, now: Date) => DomainError | undefined;
  /** The price of an accepted lead, posted with it (money/); without it leads carry no price. */
  readonly pricing?: LeadPricing;
}

export type LeadService = ReturnType<typeof createLeadService>;

/** A provider's own lead list, as a caller asks for it (checked by `list`). */
export interface LeadListQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly state?: string | undefined;
  readonly updatedAfter?: Date | undefined;
  /** Leads of one sub-source (the portal). */
  readonly subId?: string | undefined;
  /** The back office's search (lead-search.repository.ts), kept to the owner's provider and mode (the portal). */
  readonly q?: string | undefined;
}

export const PROVIDER_LEAD_PAGE = { defaultSize: 20, maxSize: 100 } as const;

function duplicateExternalId(externalId: string, existing: { id: number; orderNumber: string }): DomainError {
  const message = `external_id ${externalId} was already used for lead ${existing.orderNumber} (id ${existing.id})`;
  return new DomainError("duplicate", message, {
    code: "duplicate_external_id",
    violations: [{ field: "external_id", code: "duplicate", message }],
    existingLead: existing,
  });
}

export function createLeadService(deps: LeadServiceDeps) {
  const now = deps.now ?? (() => new Date());
  const context = (at: Date) => ({ zips: deps.zips, now: at, zone: deps.zone });

  // The intake pipeline (intake/pipeline.ts): its stages, in order, each naming its rules.
  const pipeline = intakePipeline({
    validate: (input, at) => validateLead(input, context(at)),
    sandboxRefusal: deps.sandboxRefusal,
    rulesNow: (owner) => deps.intake.rulesNow(owner),
    checkOpen: (owner, rules, at) => deps.intake.checkOpen(owner, rules, at),
    checkCriteria: (lead, rules, at) => deps.intake.checkCriteria(lead, rules, at),
    guardFor: (rules, at) => deps.intake.guardFor(rules, at),
  });

  async function admitAndInsert(owner: LeadOwner, input: unknown, how: CreateOptions): Promise<CreatedLead> {
    const admitted = await runIntake(pipeline, owner, input, now());
    const { warnings, warningsTruncated, guard } = admitted;
    const lead: NewLead = { ...admitted.lead, source: how.source, consent: how.consent ?? admitted.lead.consent };
    // The pipeline's last stage, intake_guard(), runs in the insert statement.
    const actor = `provider:${owner.providerId}`;
    const eventId = newEventId();
    const insert = async () =>
      insertLead(deps.db, owner, lead, actor, eventId, guard, (await deps.pricing?.price(owner, lead)) ?? null);
    // The terms changed between the price and the insert (another instance saved them): the
    // statement stored nothing; price the lead under the new terms.
    const result = await insert().catch((err: unknown) => {
      if (deps.pricing?.isStale(err)) return insert();
      throw err;
    });
    if (result.kind === "cap_reached") throw deps.intake.capReached(result.windows);
    if (result.kind === "duplicate_lead") {
      throw duplicateLead(providerDuplicate(result.duplicate, deps.zone));
    }
    if (result.kind === "duplicate") throw duplicateExternalId(lead.externalId, result.existing);
    deps.onCreated?.(result.lead);
    return { lead: providerView(result.lead, deps.zone), warnings, warningsTruncated };
  }

  /**
   * A refused create whose external_id the provider already used answers duplicate_external_id,
   * naming that lead, whatever else would refuse it now (a full cap, a pause, tighter rules): a
   * provider retrying after a timeout must learn that its lead exists, not that it was not taken.
   */
  async function resendOf(owner: LeadOwner, input: unknown, err: unknown): Promise<unknown> {
    if (!(err instanceof DomainError) || err.code === "duplicate_external_id") return err;
    if (err.kind !== "invalid_argument" && err.kind !== "rate_limited") return err;
    const externalId = (input as { external_id?: unknown } | null)?.external_id;
    if (typeof externalId !== "string" || !isPossibleExternalId(externalId)) return err;
    // The refusal stands if the lead cannot be looked up (the database is what failed).
    const existing = await findLeadIdentity(deps.db, owner, externalId).catch(() => undefined);
    return existing ? duplicateExternalId(externalId, existing) : err;
  }

  return {
    /**
     * Runs the intake pipeline (intake/pipeline.ts) and stores the lead; a refusal stores
     * nothing. Besides the pipeline's refusals, throws `duplicate` naming the provider's existing
     * lead of the same mode with the same external_id.
     */
    async create(owner: LeadOwner, input: unknown, how: CreateOptions = { source: "api" }): Promise<CreatedLead> {
      try {
        return await admitAndInsert(owner, input, how);
      } catch (err) {
        throw await resendOf(owner, input, err);
      }
    },

    /**
     * The provider's lead with this external_id, in the caller's mode; another provider's lead,
     * or a lead of the other mode, is not found alike.
     */
    async get(owner: LeadOwner, externalId: string): Promise<Lead> {
      const { providerId, livemode } = owner;
      // An id that could never have been stored is not looked up (NUL would also upset Postgres).
      const lead = isPossibleExternalId(externalId)
        ? await findLead(deps.db, { providerId, externalId, livemode })
        : undefined;
      if (!lead) {
        throw new DomainError("not_found", `no lead with external_id ${externalId}`, { code: "lead_not_found" });
      }
      return providerView(lead, deps.zone);
    },

    /** The provider's own leads of the caller's mode, newest first, one cursor page at a time. */
    async list(owner: LeadOwner, q: LeadListQuery): Promise<Page<Lead>> {
      const f = new Fields();
      const page = readPageRequest(f, q, PROVIDER_LEAD_PAGE);
      const state = f.oneOf({ state: q.state }, "state", LEAD_STATES, false) as LeadState | undefined;
      const updatedAfter = f.instant(q.updatedAfter, "updated_after");
      const subId = f.text({ sub_id: q.subId }, "sub_id", { max: 64 });
      if (subId !== undefined && !SUB_ID.test(subId)) {
        f.add("sub_id", "invalid_format", "sub_id must be 1 to 64 of A-Z a-z 0-9 . _ : -");
      }
      const search = f.text({ q: q.q }, "q", { max: 128, noControl: true });
      if (search && updatedAfter !== undefined) {
        f.add("q", "invalid_argument", "q cannot be combined with updated_after");
      }
      throwIfViolations(f.violations);
      const filter = { state, updatedAfter, subId: subId || undefined, beforeId: page.afterId };
      // A search is the back office's, held to this provider and this mode: never another's lead.
      const found = search
        ? await searchLeads(
            deps.db,
            { ...filter, providerId: owner.providerId, livemode: owner.livemode, q: search },
            page.size + 1,
          )
        : await listProviderLeads(deps.db, owner, filter, page.size + 1);
      const rows = found.map((l) => providerView(l, deps.zone));
      return pageOf(rows, page.size, (l) => l.id);
    },

    /** The violations of a submission without storing it (an edge words schema rejections with them). */
    violations(input: unknown) {
      return validateLead(input, context(now())).violations;
    },
  };
}
