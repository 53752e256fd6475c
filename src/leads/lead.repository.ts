/**
 * The SQL of one lead: how a lead is read (its columns, vehicles and history, mapped to the domain
 * Lead), found, looked up by external_id, locked and moved. Storing a lead is in
 * lead-insert.repository.ts, the lists in lead-lists.repository.ts, the back office's search in
 * lead-search.repository.ts. Functions take the database (or a transaction) first.
 */

import { type Kysely, sql } from "kysely";
import { jsonArrayFrom } from "kysely/helpers/postgres";
import { prepare } from "../db/prepared.ts";
import type { Database } from "../db/schema.ts";
import type {
  Consent,
  Duplicate,
  Lead,
  LeadOwner,
  LeadReturnStatus,
  LeadSource,
  LeadState,
  OverseasType,
  ShipVia,
  StateChange,
  VehicleType,
} from "./lead.ts";

type Db = Kysely<Database>;

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
  "leads.source",
] as const;

/** Every lead column with its vehicles and history (the lists and the search read leads with it too). */
export function selectLeads(db: Db) {
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
      // The lead's return (returns/, migration 0020): at most one, by its unique lead_id.
      sql<ReturnRow | null>`(select json_build_object('id', r.public_id, 'state', r.state, 'reason', r.reason,
        'note', r.note, 'requested_at', r.requested_at, 'contest_deadline', r.contest_deadline,
        'decided_at', r.decided_at, 'decision_note', r.decision_note)
        from lead_returns r where r.lead_id = leads.id)`.as("lead_return"),
    ]);
}

interface ReturnRow {
  id: string;
  state: string;
  reason: string;
  note: string | null;
  requested_at: string;
  contest_deadline: string;
  decided_at: string | null;
  decision_note: string | null;
}

function returnOf(r: ReturnRow | string | null): LeadReturnStatus | null {
  const row = typeof r === "string" ? (JSON.parse(r) as ReturnRow) : r;
  if (row === null) return null;
  return {
    id: row.id,
    state: row.state,
    reason: row.reason,
    note: row.note,
    requestedAt: new Date(row.requested_at),
    contestDeadline: new Date(row.contest_deadline),
    decidedAt: row.decided_at === null ? null : new Date(row.decided_at),
    decisionNote: row.decision_note,
  };
}

export type LeadRow = Awaited<ReturnType<ReturnType<typeof selectLeads>["executeTakeFirstOrThrow"]>>;

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
    source: row.source as LeadSource | null,
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
    return: returnOf(row.lead_return),
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
