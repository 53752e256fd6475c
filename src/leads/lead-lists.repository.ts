/** The lists of leads: a provider's own, newest first, and the leads in one state (the workflow). */

import type { Kysely } from "kysely";
import { customPlan } from "../db/database.ts";
import type { Database } from "../db/schema.ts";
import { selectLeads, toLead } from "./lead.repository.ts";
import type { Lead, LeadOwner, LeadState } from "./lead.ts";

type Db = Kysely<Database>;

/** One page of leads in `state` with ids above `afterId`, oldest first; test leads only if asked. */
export async function listLeadsInState(
  db: Db,
  state: LeadState,
  afterId: number,
  limit: number,
  includeTest = false,
): Promise<Lead[]> {
  let query = selectLeads(db).where("leads.state", "=", state).where("leads.id", ">", afterId);
  if (!includeTest) query = query.where("leads.livemode", "=", true);
  const rows = await query.orderBy("leads.id").limit(limit).execute();
  return rows.map(toLead);
}

export interface ProviderLeadFilter {
  readonly state?: LeadState | undefined;
  readonly updatedAfter?: Date | undefined;
  /** Leads of this sub-source only (leads_provider_sub_id_idx). */
  readonly subId?: string | undefined;
  /** Leads with ids below this one (the list runs newest first). */
  readonly beforeId?: number | undefined;
}

/** One page of a provider's own leads of one mode, newest first. */
export async function listProviderLeads(
  db: Db,
  owner: LeadOwner,
  filter: ProviderLeadFilter,
  limit: number,
): Promise<Lead[]> {
  let query = selectLeads(db)
    .where("leads.provider_id", "=", owner.providerId)
    .where("leads.livemode", "=", owner.livemode);
  if (filter.state !== undefined) query = query.where("leads.state", "=", filter.state);
  if (filter.updatedAfter !== undefined) query = query.where("leads.updated_at", ">", filter.updatedAfter);
  if (filter.subId !== undefined) query = query.where("leads.sub_id", "=", filter.subId);
  if (filter.beforeId !== undefined) query = query.where("leads.id", "<", filter.beforeId);
  // Planned per call: 200 leads or 300,000, an updated_after of an hour or of a year.
  const rows = await customPlan(query.orderBy("leads.id", "desc").limit(limit)).execute();
  return rows.map(toLead);
}
