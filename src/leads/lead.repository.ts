/** All SQL about leads. Functions take the database (or a transaction) first; rows map to domain types here. */
import { type Kysely, sql } from "kysely";
import { jsonArrayFrom } from "kysely/helpers/postgres";
import { customPlan } from "../db/database.ts";
import { escapeLike } from "../db/like.ts";
import { prepare } from "../db/prepared.ts";
import type { Database } from "../db/schema.ts";
import { emailMatchKey } from "../intake/contact.ts";
import type { IntakeGuard } from "../intake/pipeline.ts";
import type {
  Consent,
  Duplicate,
  Lead,
  LeadOwner,
  LeadPrice,
  LeadState,
  NewLead,
  OverseasType,
  ShipVia,
  StateChange,
  VehicleType,
} from "./lead.ts";
import type { LeadPurchase } from "./lead-pricing.ts";

type Db = Kysely<Database>;

export type InsertResult =
  | { readonly kind: "created"; readonly lead: Lead }
  | { readonly kind: "duplicate"; readonly existing: { readonly id: number; readonly orderNumber: string } }
  /** intake_guard refused: a duplicate under the reject policy. Nothing was stored. */
  | { readonly kind: "duplicate_lead"; readonly duplicate: Duplicate }
  /** intake_guard refused: these cap windows are full. Nothing was stored. */
  | { readonly kind: "cap_reached"; readonly windows: readonly string[] };

/** The duplicate record as intake_guard builds it (snake_case JSON, in the column and in events). */
export interface DuplicateRow {
  matched_on: string[];
  first_seen_at: string;
  same_provider: boolean;
  original: { id: number; provider_id: number; order_number: string; external_id: string };
}

export function duplicateFromRow(d: DuplicateRow | null | undefined): Duplicate | null {
  if (!d) return null;
  const o = d.original;
  return {
    matchedOn: d.matched_on,
    firstSeenAt: new Date(d.first_seen_at),
    sameProvider: d.same_provider,
    original: {
      id: Number(o.id),
      providerId: Number(o.provider_id),
      orderNumber: o.order_number,
      externalId: o.external_id,
    },
  };
}

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
        sub_id, source_url, consent, duplicate, price_cents, price_currency, price_rule, price_terms_version)
      select
        ${p.providerId}::bigint, ${p.livemode}::boolean, ${p.externalId}, 'LEAD', 'LEAD', ${p.firstName}, ${p.lastName},
        ${p.email}, ${p.phoneNumber}, ${p.phoneE164}::text, ${p.emailMatch}::text, ${p.companyName}, ${p.noteFromShipper},
        ${p.estimatedShipDate}::date, ${p.overseasType}, ${p.shipVia}, ${p.originZip}, ${p.originCity},
        ${p.originStateId}::integer, ${p.originStateCode},
        ${p.destinationZip}, ${p.destinationCity}, ${p.destinationStateId}::integer, ${p.destinationStateCode},
        ${p.subId}::text, ${p.sourceUrl}::text, ${p.consent}::jsonb, g.duplicate,
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

/** The id and order number of the provider's lead of this mode with this external_id, if any. */
export async function findLeadIdentity(
  db: Db,
  owner: LeadOwner,
  externalId: string,
): Promise<{ id: number; orderNumber: string } | undefined> {
  const row = await db
    .selectFrom("leads")
    .select(["id", "order_number"])
    .where("provider_id", "=", owner.providerId)
    .where("livemode", "=", owner.livemode)
    .where("external_id", "=", externalId)
    .executeTakeFirst();
  return row && { id: row.id, orderNumber: row.order_number };
}

/** The ways to name one lead. */
export type LeadKey =
  | { readonly id: number }
  | { readonly orderNumber: string }
  /** `livemode` undefined: either mode, the live lead first when both exist. */
  | { readonly providerId: number; readonly externalId: string; readonly livemode?: boolean | undefined };

// Named, not `*`: prepared statements must not change shape when a migration adds a column.
const LEAD_COLUMNS = [
  "leads.id",
  "leads.provider_id",
  "leads.external_id",
  "leads.order_number",
  "leads.livemode",
  "leads.state",
  "leads.lead_status",
  "leads.first_name",
  "leads.last_name",
  "leads.email",
  "leads.phone_number",
  "leads.phone_e164",
  "leads.company_name",
  "leads.note_from_shipper",
  "leads.estimated_ship_date",
  "leads.overseas_type",
  "leads.ship_via",
  "leads.origin_zip",
  "leads.origin_city",
  "leads.origin_state_id",
  "leads.origin_state_code",
  "leads.destination_zip",
  "leads.destination_city",
  "leads.destination_state_id",
  "leads.destination_state_code",
  "leads.created_at",
  "leads.updated_at",
  "leads.state_changed_at",
  "leads.sub_id",
  "leads.source_url",
  "leads.consent",
  "leads.duplicate",
  "leads.price_cents",
  "leads.price_currency",
  "leads.price_rule",
  "leads.price_terms_version",
] as const;

function selectLeads(db: Db) {
  return db
    .selectFrom("leads")
    .select(LEAD_COLUMNS)
    .select((eb) => [
      jsonArrayFrom(
        eb
          .selectFrom("vehicles")
          .select(["year", "make", "model", "type", "tariff", "deposit", "vehicle_run", "vin"])
          .whereRef("vehicles.lead_id", "=", "leads.id")
          .orderBy("position"),
      ).as("vehicles"),
      jsonArrayFrom(
        eb
          .selectFrom("lead_state_history")
          .select(["from_state", "to_state", "lead_status", "changed_at", "actor"])
          .whereRef("lead_state_history.lead_id", "=", "leads.id")
          .orderBy("lead_state_history.id"),
      ).as("history"),
    ]);
}

type LeadRow = Awaited<ReturnType<ReturnType<typeof selectLeads>["executeTakeFirstOrThrow"]>>;

/** The reads of one lead, one compiled query per way of naming it. */
export const FIND_LEAD = {
  byId: prepare<{ id: number }, LeadRow>(["id"], (db, p) => selectLeads(db).where("leads.id", "=", p.id)),
  byOrderNumber: prepare<{ orderNumber: string }, LeadRow>(["orderNumber"], (db, p) =>
    selectLeads(db).where("leads.order_number", "=", p.orderNumber),
  ),
  /** A provider's lead of one mode: what every GET of the Public API reads. */
  byExternalId: prepare<{ providerId: number; externalId: string; livemode: boolean }, LeadRow>(
    ["providerId", "externalId", "livemode"],
    (db, p) =>
      selectLeads(db)
        .where("leads.provider_id", "=", p.providerId)
        .where("leads.external_id", "=", p.externalId)
        .where("leads.livemode", "=", p.livemode),
  ),
  /** Either mode, the live lead first when both exist. */
  byExternalIdAnyMode: prepare<{ providerId: number; externalId: string }, LeadRow>(
    ["providerId", "externalId"],
    (db, p) =>
      selectLeads(db)
        .where("leads.provider_id", "=", p.providerId)
        .where("leads.external_id", "=", p.externalId)
        .orderBy("leads.livemode", "desc")
        .limit(1),
  ),
};

/** One lead with its vehicles and history, in one query. */
export async function findLead(db: Db, key: LeadKey): Promise<Lead | undefined> {
  let rows: LeadRow[];
  if ("id" in key) rows = await FIND_LEAD.byId.execute(db, key);
  else if ("orderNumber" in key) rows = await FIND_LEAD.byOrderNumber.execute(db, key);
  else if (key.livemode === undefined) rows = await FIND_LEAD.byExternalIdAnyMode.execute(db, key);
  else rows = await FIND_LEAD.byExternalId.execute(db, { ...key, livemode: key.livemode });
  const row = rows[0];
  return row ? toLead(row) : undefined;
}

export function toLead(row: LeadRow): Lead {
  return {
    id: row.id,
    providerId: row.provider_id,
    livemode: row.livemode,
    externalId: row.external_id,
    orderNumber: row.order_number,
    state: row.state as LeadState,
    leadStatus: row.lead_status,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phoneNumber: row.phone_number,
    phoneE164: row.phone_e164,
    companyName: row.company_name,
    noteFromShipper: row.note_from_shipper,
    estimatedShipDate: row.estimated_ship_date,
    overseasType: row.overseas_type as OverseasType,
    shipVia: row.ship_via as ShipVia,
    origin: {
      zip: row.origin_zip,
      city: row.origin_city,
      stateCode: row.origin_state_code,
      stateId: row.origin_state_id,
    },
    destination:
      row.destination_zip === null
        ? null
        : {
            zip: row.destination_zip,
            city: row.destination_city ?? "",
            stateCode: row.destination_state_code ?? "",
            stateId: row.destination_state_id ?? 0,
          },
    vehicles: row.vehicles.map((v) => ({
      year: v.year,
      make: v.make,
      model: v.model,
      type: v.type as VehicleType,
      tariff: Number(v.tariff),
      deposit: Number(v.deposit),
      vehicleRun: v.vehicle_run,
      vin: v.vin,
    })),
    subId: row.sub_id,
    sourceUrl: row.source_url,
    consent: row.consent as Consent | null,
    duplicate: duplicateFromRow(row.duplicate as DuplicateRow | null),
    price:
      row.price_cents === null
        ? null
        : {
            amountCents: Number(row.price_cents),
            currency: row.price_currency ?? "",
            rule: row.price_rule ?? "",
            termsVersion: row.price_terms_version ?? 0,
          },
    history: row.history.map(
      (h): StateChange => ({
        fromState: h.from_state as LeadState | null,
        toState: h.to_state as LeadState,
        leadStatus: h.lead_status,
        changedAt: new Date(h.changed_at as unknown as string),
        actor: h.actor,
      }),
    ),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    stateChangedAt: row.state_changed_at,
  };
}

/** The lead's current state, locked for the rest of the transaction (serialises concurrent moves). */
export async function lockLeadState(db: Db, leadId: number) {
  return db
    .selectFrom("leads")
    .select(["id", "state", "lead_status", "livemode", "provider_id", "external_id", "order_number"])
    .where("id", "=", leadId)
    .forUpdate()
    .executeTakeFirst();
}

export interface Transition {
  readonly leadId: number;
  readonly from: LeadState;
  readonly to: LeadState;
  readonly leadStatus: string;
  readonly actor: string;
  /** Sent with NOTIFY on `channel` when the transaction commits. */
  readonly channel: string;
  readonly payload: (changedAt: Date) => string;
}

/**
 * Moves the lead (or, when `from` equals `to`, changes only its lead_status), records the history
 * entry and queues the notification, in the caller's transaction.
 */
export async function applyTransition(db: Db, t: Transition): Promise<Date> {
  const row = await db
    .updateTable("leads")
    .set({
      state: t.to,
      lead_status: t.leadStatus,
      updated_at: sql<Date>`now()`,
      ...(t.from !== t.to && { state_changed_at: sql<Date>`now()` }),
      // When it first reached QUOTE or ORDER (stats); a lead moved back and forth keeps the first.
      ...(t.from !== t.to && t.to === "QUOTE" && { quoted_at: sql<Date>`coalesce(quoted_at, now())` }),
      ...(t.from !== t.to && t.to === "ORDER" && { ordered_at: sql<Date>`coalesce(ordered_at, now())` }),
    })
    .where("id", "=", t.leadId)
    .returning("updated_at as changed_at")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("lead_state_history")
    .values({
      lead_id: t.leadId,
      from_state: t.from,
      to_state: t.to,
      lead_status: t.leadStatus,
      changed_at: row.changed_at,
      actor: t.actor,
    })
    .execute();
  await sql`select pg_notify(${t.channel}, ${t.payload(row.changed_at)})`.execute(db);
  return row.changed_at;
}

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
  if (filter.beforeId !== undefined) query = query.where("leads.id", "<", filter.beforeId);
  // Planned per call: 200 leads or 300,000, an updated_after of an hour or of a year.
  const rows = await customPlan(query.orderBy("leads.id", "desc").limit(limit)).execute();
  return rows.map(toLead);
}

/** The text the back office searches, exactly as migration 0009's trigram index holds it. */
const LEAD_SEARCH_TEXT = sql<string>`lower(leads.first_name || ' ' || leads.last_name || ' ' || leads.email || ' ' || leads.external_id || ' ' || leads.order_number || ' ' || coalesce(leads.phone_e164, ''))`;

/**
 * What to look for: lower-cased; a term that reads as a phone number in any format
 * ("(310) 555-0142", "+1 310.555.0142") becomes its digits, which phone_e164 holds.
 */
export function searchTerm(q: string): string {
  const trimmed = q.trim().toLowerCase();
  const digits = trimmed.replace(/[\s().+-]/g, "");
  return /^\d{4,}$/.test(digits) && /^[\d\s().+-]+$/.test(trimmed) ? digits : trimmed;
}

/**
 * A term that is a whole contact, as the duplicate check keys it: a complete email address
 * (lower-cased) or a complete North American number (10 digits, area code and exchange not
 * starting with 0 or 1, optionally after a 1; searchTerm has made a phone its digits). Such a
 * term is looked up by the contact's own index rather than as a substring: one person's leads,
 * at the same cost at any table size (docs/decisions.md).
 */
export function wholeContact(term: string): { readonly email: string } | { readonly phoneE164: string } | null {
  if (/^[^\s@]+@[^\s@]+\.[^\s@.]+$/.test(term)) return { email: term };
  const phone = /^1?([2-9]\d{2}[2-9]\d{6})$/.exec(term);
  if (phone) return { phoneE164: `+1${phone[1]}` };
  return null;
}

export interface LeadSearch {
  readonly providerId?: number | undefined;
  readonly state?: LeadState | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
  /**
   * Any part of the customer's name, email, phone, the external_id or the order number, in any
   * case (3 characters or more; a shorter term matches an external_id or order number exactly). A
   * whole email address or US phone number finds that customer's leads exactly (wholeContact),
   * and leads with that external_id; only when there are none is it a substring.
   */
  readonly q?: string | undefined;
  /** Test leads too (by default live ones only). */
  readonly includeTest?: boolean | undefined;
  /** Only leads flagged as duplicates (true), or only the others (false). */
  readonly duplicate?: boolean | undefined;
  /** Leads with ids below this one (the list runs newest first). */
  readonly beforeId?: number | undefined;
}

/**
 * Lead ids since migration 0006 are the creation millisecond (from 2024-01-01) shifted left 12
 * bits, plus 12 random bits; ids from before it are small sequence numbers, all below this.
 */
const ID_EPOCH_MS = 1_704_067_200_000;
const TIME_IDS_FROM = 2 ** 38;
/** An insert's id is taken at most this long after its created_at (one short transaction). */
const ID_SLACK_MS = 60_000;
const idAt = (ms: number) => Math.max(0, Math.floor(ms - ID_EPOCH_MS)) * 4096;

/** The creation time of the newest lead with a sequence id (none: null), looked up once per database. */
const legacyEnds = new WeakMap<Db, Promise<Date | null>>();
function legacyEnd(db: Db): Promise<Date | null> {
  let end = legacyEnds.get(db);
  if (end === undefined) {
    end = db
      .selectFrom("leads")
      .select("created_at")
      .where("id", "<", TIME_IDS_FROM)
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst()
      .then((r) => r?.created_at ?? null);
    legacyEnds.set(db, end);
  }
  return end;
}

/**
 * A substring search first looks among this many of the newest leads (below the page's cursor),
 * in the list's own order: a common term (a surname, a domain) fills the page there in a few
 * milliseconds. Only a term with fewer matches there goes to the trigram index for the rest, where
 * it is rare, so what the index finds is small. Either way the page is exact. Walking costs about
 * 1.2 µs a lead, paid by every rare term first: 3,000 rather than 10,000 (docs/decisions.md).
 */
const SEARCH_RECENT = 3_000;

/** The length of the digit n-grams of leads_search_digits_idx (migration 0014). */
const DIGIT_GRAM = 5;
/**
 * A term with this many digits in a row is rare (a phone's local number, an order number): it
 * goes to the digit index at once, without looking among the newest leads first.
 */
const RARE_DIGITS = 7;

/** The longest run of digits in `term` ("" when none). */
export function longestDigitRun(term: string): string {
  return (term.match(/\d+/g) ?? []).reduce((a, b) => (b.length > a.length ? b : a), "");
}

/** Every distinct `DIGIT_GRAM`-digit substring of `digits`. */
function digitGrams(digits: string): string[] {
  const grams = new Set<string>();
  for (let i = 0; i + DIGIT_GRAM <= digits.length; i += 1) grams.add(digits.slice(i, i + DIGIT_GRAM));
  return [...grams];
}

/** One page of leads across providers, newest first (the back office). */
export async function searchLeads(db: Db, s: LeadSearch, limit: number, recentWindow = SEARCH_RECENT): Promise<Lead[]> {
  let query = selectLeads(db);
  if (s.providerId !== undefined) query = query.where("leads.provider_id", "=", s.providerId);
  if (s.state !== undefined) query = query.where("leads.state", "=", s.state);
  // A creation window is also an id range, which the primary key (the list's order) can walk:
  // an id is taken in the insert, at or just after created_at, so created_at < B means id below
  // B + a minute's slack; and created_at > A means id above A's, once A is past the last lead
  // with an older sequence id. Without it a window a year back walked every newer lead.
  if (s.createdAfter !== undefined) {
    query = query.where("leads.created_at", ">", s.createdAfter);
    const end = await legacyEnd(db);
    if (end === null || s.createdAfter.getTime() > end.getTime())
      query = query.where("leads.id", ">", idAt(s.createdAfter.getTime() - ID_SLACK_MS));
  }
  if (s.createdBefore !== undefined) {
    query = query.where("leads.created_at", "<", s.createdBefore);
    query = query.where("leads.id", "<", idAt(s.createdBefore.getTime() + ID_SLACK_MS));
  }
  if (!s.includeTest) query = query.where("leads.livemode", "=", true);
  if (s.duplicate === true) query = query.where("leads.duplicate", "is not", null);
  if (s.duplicate === false) query = query.where("leads.duplicate", "is", null);
  const scoped = query; // every filter but the page's cursor
  if (s.beforeId !== undefined) query = query.where("leads.id", "<", s.beforeId);
  const page = (q: typeof query, n: number) =>
    customPlan(q.orderBy("leads.id", "desc").limit(n))
      .execute()
      .then((rows) => rows.map(toLead));
  if (s.q === undefined) return page(query, limit);
  const term = searchTerm(s.q);
  if (term.length < 3) {
    const q = s.q;
    return page(
      query.where((eb) => eb.or([eb("leads.external_id", "=", q), eb("leads.order_number", "=", q.toUpperCase())])),
      limit,
    );
  }
  const contact = wholeContact(term);
  if (contact !== null) {
    // That customer's leads, or a lead whose external_id is the term as typed. Only when the
    // filters hold none of them (on any page, so every page of one search reads the same way)
    // is the term a substring after all: `ann@gmail.co`, or a 10-digit id inside a longer one.
    const external = s.q.trim();
    const exact = (q: typeof query) =>
      q.where((eb) =>
        eb.or([
          "email" in contact
            ? eb("leads.email_match", "=", contact.email)
            : eb("leads.phone_e164", "=", contact.phoneE164),
          eb("leads.external_id", "=", external),
        ]),
      );
    const any = await customPlan(exact(scoped).clearSelect().select("leads.id").limit(1)).executeTakeFirst();
    if (any !== undefined) return page(exact(query), limit);
  }
  const matching = query.where(LEAD_SEARCH_TEXT, "like", `%${escapeLike(term)}%`);
  // A term with 5 or more digits in a row: the leads holding all their 5-grams (the digit index),
  // then the term itself on those few. Ordered by `id + 0` so the plan is always that index and a
  // sort of what it found, never a walk down the primary key hoping to meet them (1.3 s at 5M
  // leads for digits only old order numbers hold).
  const run = longestDigitRun(term);
  const byDigits =
    run.length >= DIGIT_GRAM
      ? (q: typeof query, n: number) =>
          customPlan(
            q
              .where(sql<boolean>`lead_search_digit_grams(${LEAD_SEARCH_TEXT}) @> ${digitGrams(run)}::text[]`)
              .where(sql<boolean>`strpos(${LEAD_SEARCH_TEXT}, ${term}) > 0`)
              .orderBy(sql`leads.id + 0`, "desc")
              .limit(n),
          )
            .execute()
            .then((rows) => rows.map(toLead))
      : undefined;
  if (byDigits !== undefined && run.length >= RARE_DIGITS) return byDigits(query, limit);
  // The id of the SEARCH_RECENT-th newest lead below the cursor (read off the primary key).
  let floor = db.selectFrom("leads").select("id");
  if (s.beforeId !== undefined) floor = floor.where("id", "<", s.beforeId);
  const floorRow = await floor
    .orderBy("id", "desc")
    .offset(recentWindow - 1)
    .limit(1)
    .executeTakeFirst();
  if (floorRow === undefined) return page(matching, limit); // fewer leads than that in all
  const recent = await page(matching.where("leads.id", ">=", floorRow.id), limit);
  if (recent.length === limit) return recent;
  const older =
    byDigits !== undefined
      ? byDigits(query.where("leads.id", "<", floorRow.id), limit - recent.length)
      : page(matching.where("leads.id", "<", floorRow.id), limit - recent.length);
  return [...recent, ...(await older)];
}
