/** Storing a lead: INSERT_LEAD, one statement with intake_guard(), the history, the event and the purchase. */

import { type Kysely, sql } from "kysely";
import { prepare } from "../db/prepared.ts";
import type { Database } from "../db/schema.ts";
import { emailMatchKey } from "../intake/contact.ts";
import type { IntakeGuard } from "../intake/pipeline.ts";
import { type DuplicateRow, duplicateFromRow, findLeadIdentity } from "./lead.repository.ts";
import type { Duplicate, Lead, LeadOwner, LeadPrice, NewLead } from "./lead.ts";
import type { LeadPurchase } from "./lead-pricing.ts";

type Db = Kysely<Database>;

export type InsertResult =
  | { readonly kind: "created"; readonly lead: Lead }
  | { readonly kind: "duplicate"; readonly existing: { readonly id: number; readonly orderNumber: string } }
  /** intake_guard refused: a duplicate under the reject policy. Nothing was stored. */
  | { readonly kind: "duplicate_lead"; readonly duplicate: Duplicate }
  /** intake_guard refused: these cap windows are full. Nothing was stored. */
  | { readonly kind: "cap_reached"; readonly windows: readonly string[] };

/** The parameters of INSERT_LEAD. */
export interface InsertLeadParams extends Record<string, unknown> {
  readonly providerId: number;
  readonly livemode: boolean;
  readonly externalId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phoneNumber: string;
  readonly phoneE164: string | null;
  readonly emailMatch: string;
  readonly companyName: string | null;
  readonly noteFromShipper: string | null;
  readonly estimatedShipDate: string;
  readonly overseasType: string;
  readonly shipVia: string;
  readonly originZip: string;
  readonly originCity: string;
  readonly originStateId: number;
  readonly originStateCode: string;
  readonly destinationZip: string | null;
  readonly destinationCity: string | null;
  readonly destinationStateId: number | null;
  readonly destinationStateCode: string | null;
  /** JSON array of {position, year, make, model, type, tariff, deposit, vehicle_run, vin}. */
  readonly vehicles: string;
  readonly subId: string | null;
  readonly sourceUrl: string | null;
  /** JSON of the consent, or null. */
  readonly consent: string | null;
  readonly source: string | null;
  /** intake_guard's arguments. */
  readonly guardPhone: string | null;
  readonly guardEmail: string | null;
  readonly windowDays: number;
  readonly rejectDuplicates: boolean;
  readonly capWindows: string[];
  readonly capStarts: Date[];
  readonly capLimits: number[];
  readonly actor: string;
  readonly eventId: string;
  /** JSON of the NewLead: the event's lead before what the database assigns. */
  readonly lead: string;
  /** The price, posted with the lead unless it is a flagged duplicate (all null: nothing to post). */
  readonly priceCents: number | null;
  readonly priceCurrency: string | null;
  readonly priceRule: string | null;
  readonly priceTermsVersion: number | null;
  readonly settlementDays: number | null;
}

/**
 * Stores a lead, its vehicles, its first history entry, its `lead.created` event (the lead as
 * GET shows it, in the outbox) and, for a priced lead that is not a flagged duplicate, its
 * purchase in the ledger (`ledger_post_purchase()`, migration 0019) in ONE statement (atomic, one
 * round trip) of ONE text whatever the number of vehicles (they travel as a JSON array), so it is
 * prepared once per connection. The unique index on (provider_id, livemode, external_id) decides
 * a race: the loser inserts nothing and posts nothing.
 */
interface InsertRow {
  id: number | null;
  order_number: string | null;
  created_at: Date | null;
  refusal: "duplicate" | "cap_reached" | null;
  cap_windows: string[] | null;
  duplicate: DuplicateRow | null;
  /** The purchase's ledger transaction (null: nothing was posted). */
  purchase: number | null;
}

export const INSERT_LEAD = prepare<InsertLeadParams, InsertRow>(
  [
    "providerId",
    "livemode",
    "externalId",
    "firstName",
    "lastName",
    "email",
    "phoneNumber",
    "phoneE164",
    "emailMatch",
    "companyName",
    "noteFromShipper",
    "estimatedShipDate",
    "overseasType",
    "shipVia",
    "originZip",
    "originCity",
    "originStateId",
    "originStateCode",
    "destinationZip",
    "destinationCity",
    "destinationStateId",
    "destinationStateCode",
    "vehicles",
    "subId",
    "sourceUrl",
    "consent",
    "source",
    "actor",
    "eventId",
    "lead",
    "guardPhone",
    "guardEmail",
    "windowDays",
    "rejectDuplicates",
    "capWindows",
    "capStarts",
    "capLimits",
    "priceCents",
    "priceCurrency",
    "priceRule",
    "priceTermsVersion",
    "settlementDays",
  ],
  (_db, p) => sql<InsertRow>`
    with g as (
      select * from intake_guard(${p.providerId}::bigint, ${p.livemode}::boolean, ${p.externalId}::text,
        ${p.guardPhone}::text, ${p.guardEmail}::text, ${p.windowDays}::integer, ${p.rejectDuplicates}::boolean,
        ${p.capWindows}::text[], ${p.capStarts}::timestamptz[], ${p.capLimits}::integer[])
    ),
    l as (
      insert into leads (
        provider_id, livemode, external_id, state, lead_status, first_name, last_name, email, phone_number,
        phone_e164, email_match, company_name, note_from_shipper, estimated_ship_date, overseas_type, ship_via,
        origin_zip, origin_city, origin_state_id, origin_state_code,
        destination_zip, destination_city, destination_state_id, destination_state_code,
        sub_id, source_url, consent, source, duplicate, price_cents, price_currency, price_rule, price_terms_version)
      select
        ${p.providerId}::bigint, ${p.livemode}::boolean, ${p.externalId}, 'LEAD', 'LEAD', ${p.firstName}, ${p.lastName},
        ${p.email}, ${p.phoneNumber}, ${p.phoneE164}::text, ${p.emailMatch}::text, ${p.companyName}, ${p.noteFromShipper},
        ${p.estimatedShipDate}::date, ${p.overseasType}, ${p.shipVia}, ${p.originZip}, ${p.originCity},
        ${p.originStateId}::integer, ${p.originStateCode},
        ${p.destinationZip}, ${p.destinationCity}, ${p.destinationStateId}::integer, ${p.destinationStateCode},
        ${p.subId}::text, ${p.sourceUrl}::text, ${p.consent}::jsonb, ${p.source}::text, g.duplicate,
        case when g.duplicate is null then ${p.priceCents}::bigint end,
        case when g.duplicate is null then ${p.priceCurrency}::text end,
        case when g.duplicate is null then ${p.priceRule}::text end,
        case when g.duplicate is null then ${p.priceTermsVersion}::integer end
      from g where g.refusal is null
      on conflict (provider_id, livemode, external_id) do nothing
      returning id, order_number, created_at, duplicate, price_cents, price_currency, price_rule, price_terms_version
    ),
    v as (
      insert into vehicles (lead_id, position, year, make, model, type, tariff, deposit, vehicle_run, vin)
      select l.id, x.position, x.year, x.make, x.model, x.type, x.tariff, x.deposit, x.vehicle_run, x.vin
      from l, jsonb_to_recordset(${p.vehicles}::jsonb) as x(position smallint, year integer, make text,
        model text, type text, tariff bigint, deposit bigint, vehicle_run boolean, vin text)
    ),
    h as (
      insert into lead_state_history (lead_id, from_state, to_state, lead_status, changed_at, actor)
      select l.id, null, 'LEAD', 'LEAD', l.created_at, ${p.actor}::text from l
    ),
    e as (
      insert into lead_events (event_id, provider_id, lead_id, type, created_at, livemode, data)
      select ${p.eventId}::text, ${p.providerId}::bigint, l.id, 'lead.created', l.created_at, ${p.livemode}::boolean,
        jsonb_build_object('lead', ${p.lead}::jsonb || jsonb_build_object(
          'id', l.id, 'providerId', ${p.providerId}::bigint, 'livemode', ${p.livemode}::boolean, 'orderNumber', l.order_number,
          'state', 'LEAD', 'leadStatus', 'LEAD', 'duplicate', l.duplicate,
          'price', case when l.price_cents is not null then jsonb_build_object('amountCents', l.price_cents,
            'currency', l.price_currency, 'rule', l.price_rule, 'termsVersion', l.price_terms_version) end,
          'createdAt', l.created_at, 'updatedAt', l.created_at, 'stateChangedAt', l.created_at,
          'history', jsonb_build_array(jsonb_build_object(
            'fromState', null, 'toState', 'LEAD', 'leadStatus', 'LEAD', 'changedAt', l.created_at, 'actor', ${p.actor}::text))))
      from l
    ),
    p as (
      select ledger_post_purchase(l.id, ${p.providerId}::bigint, ${p.livemode}::boolean, ${p.externalId}::text,
        l.order_number, l.created_at, l.price_cents, l.price_currency, l.price_terms_version,
        ${p.settlementDays}::integer) as purchase
      from l where l.price_cents is not null
    )
    select l.id, l.order_number, l.created_at, g.refusal, g.cap_windows, g.duplicate, p.purchase
    from g left join l on true left join p on true`,
);

/** INSERT_LEAD's values for a validated lead. */
export function insertLeadParams(
  owner: LeadOwner,
  lead: NewLead,
  actor: string,
  eventId: string,
  guard: IntakeGuard,
  purchase: LeadPurchase | null = null,
): InsertLeadParams {
  const o = lead.origin;
  const d = lead.destination;
  const emailMatch = emailMatchKey(lead.email);
  let vehicles = "[";
  for (let i = 0; i < lead.vehicles.length; i++) {
    const v = lead.vehicles[i] as NewLead["vehicles"][number];
    if (i > 0) vehicles += ",";
    vehicles += JSON.stringify({
      position: i,
      year: v.year,
      make: v.make,
      model: v.model,
      type: v.type,
      tariff: v.tariff,
      deposit: v.deposit,
      vehicle_run: v.vehicleRun,
      vin: v.vin,
    });
  }
  vehicles += "]";
  return {
    providerId: owner.providerId,
    livemode: owner.livemode,
    externalId: lead.externalId,
    firstName: lead.firstName,
    lastName: lead.lastName,
    email: lead.email,
    phoneNumber: lead.phoneNumber,
    phoneE164: lead.phoneE164,
    emailMatch,
    companyName: lead.companyName,
    noteFromShipper: lead.noteFromShipper,
    estimatedShipDate: lead.estimatedShipDate,
    overseasType: lead.overseasType,
    shipVia: lead.shipVia,
    originZip: o.zip,
    originCity: o.city,
    originStateId: o.stateId,
    originStateCode: o.stateCode,
    destinationZip: d?.zip ?? null,
    destinationCity: d?.city ?? null,
    destinationStateId: d?.stateId ?? null,
    destinationStateCode: d?.stateCode ?? null,
    vehicles,
    subId: lead.subId,
    sourceUrl: lead.sourceUrl,
    consent: lead.consent === null ? null : JSON.stringify(lead.consent),
    source: lead.source ?? null,
    actor,
    eventId,
    lead: JSON.stringify(lead),
    guardPhone: guard.matchPhone ? lead.phoneE164 : null,
    guardEmail: guard.matchEmail ? emailMatch : null,
    windowDays: guard.windowDays,
    rejectDuplicates: guard.rejectDuplicates,
    capWindows: guard.caps.map((c) => c.window),
    capStarts: guard.caps.map((c) => c.start),
    capLimits: guard.caps.map((c) => c.limit),
    priceCents: purchase?.amountCents ?? null,
    priceCurrency: purchase?.currency ?? null,
    priceRule: purchase?.rule ?? null,
    priceTermsVersion: purchase?.termsVersion ?? null,
    settlementDays: purchase?.settlementDays ?? null,
  };
}

/** Tries of INSERT_LEAD when its random id or order number is already taken (about 1 in 4096 per millisecond shared). */
const MAX_ID_DRAWS = 5;

function isIdentifierCollision(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string };
  return e.code === "23505" && (e.constraint === "leads_pkey" || e.constraint === "leads_order_number_key");
}

/** Stores a lead (INSERT_LEAD); a lost race on the external id names the existing lead. */
export async function insertLead(
  db: Db,
  owner: LeadOwner,
  lead: NewLead,
  actor: string,
  eventId: string,
  guard: IntakeGuard,
  purchase: LeadPurchase | null = null,
): Promise<InsertResult> {
  const { providerId, livemode } = owner;
  const params = insertLeadParams(owner, lead, actor, eventId, guard, purchase);
  let rows: Awaited<ReturnType<typeof INSERT_LEAD.execute>>;
  for (let attempt = 1; ; attempt++) {
    try {
      rows = await INSERT_LEAD.execute(db, params);
      break;
    } catch (err) {
      // The id or order number drawn at random (migration 0006) is taken: the one statement
      // changed nothing, so draw again.
      if (attempt >= MAX_ID_DRAWS || !isIdentifierCollision(err)) throw err;
    }
  }

  const row = rows[0];
  if (row?.refusal === "duplicate" && row.duplicate) {
    return { kind: "duplicate_lead", duplicate: duplicateFromRow(row.duplicate) as Duplicate };
  }
  if (row?.refusal === "cap_reached") return { kind: "cap_reached", windows: row.cap_windows ?? [] };
  if (!row || row.id === null || row.order_number === null || row.created_at === null) {
    const existing = await findLeadIdentity(db, owner, lead.externalId);
    if (!existing) throw new Error(`the insert of ${lead.externalId} stored nothing and found no lead`);
    return { kind: "duplicate", existing };
  }
  // The stored lead is the input plus what the database assigned: no read-back round trip.
  const at = row.created_at;
  const duplicate = duplicateFromRow(row.duplicate);
  const price: LeadPrice | null =
    duplicate === null && purchase !== null
      ? {
          amountCents: purchase.amountCents,
          currency: purchase.currency,
          rule: purchase.rule,
          termsVersion: purchase.termsVersion,
        }
      : null;
  const stored: Lead = {
    ...lead,
    id: row.id,
    providerId,
    livemode,
    orderNumber: row.order_number,
    state: "LEAD",
    leadStatus: "LEAD",
    createdAt: at,
    updatedAt: at,
    stateChangedAt: at,
    history: [{ fromState: null, toState: "LEAD", leadStatus: "LEAD", changedAt: at, actor }],
    duplicate,
    price,
  };
  return { kind: "created", lead: stored };
}
