/**
 * The hook through which a lead gets its price when it is accepted. Leads know only this
 * interface; money/ implements it (terms, prices, the ledger) and app.ts wires it, so nothing here
 * imports money.
 */
import type { LeadOwner, LeadPrice, NewLead } from "./lead.ts";

/** A price with what the insert needs to post the purchase in the same statement as the lead. */
export interface LeadPurchase extends LeadPrice {
  /** Days from acceptance until the purchase moves from pending to available. */
  readonly settlementDays: number;
}

export interface LeadPricing {
  /**
   * The price the lead earns now, if it is billable (a flagged duplicate gets none: the insert
   * decides that); null when nothing is to be posted. The insert stores the price on the lead and
   * posts the purchase with `ledger_post_purchase()` (money's migration) in the same statement.
   */
  price(owner: LeadOwner, lead: NewLead): Promise<LeadPurchase | null>;
  /**
   * Whether the insert failed because the terms `price` used are no longer the current ones
   * (changed on another instance meanwhile); the caller then asks `price` again and retries.
   */
  isStale(err: unknown): boolean;
}
