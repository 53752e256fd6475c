/** Lead domain types and pure rules (no I/O): vocabularies, the ship_via rule, the state machine. */
import { DateTime } from "luxon";
import type { DuplicateMatch } from "../errors.ts";

/** A US ZIP code's place (zip/zip-directory.ts looks it up; declared here, free of Node). */
export interface Place {
  readonly zip: string;
  readonly city: string;
  readonly stateCode: string;
  readonly stateId: number;
}

/**
 * The most vehicles one lead may list: the submission's own limit (lead.validation.ts), the
 * highest max_vehicles an intake rule may set (intake-rules.ts) and the highest vehicle count a
 * price rule may name (money/terms.ts).
 */
export const MAX_VEHICLES = 20;

export const OVERSEAS_TYPES = ["DOMESTIC", "FOREIGN"] as const;
export type OverseasType = (typeof OVERSEAS_TYPES)[number];

export const SHIP_VIA_BY_OVERSEAS_TYPE = {
  DOMESTIC: ["OPEN", "ENCLOSED", "DRIVE_AWAY"],
  FOREIGN: ["CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"],
} as const satisfies Record<OverseasType, readonly string[]>;
export type ShipVia = (typeof SHIP_VIA_BY_OVERSEAS_TYPE)[OverseasType][number];
export const SHIP_VIAS: readonly ShipVia[] = [
  ...SHIP_VIA_BY_OVERSEAS_TYPE.DOMESTIC,
  ...SHIP_VIA_BY_OVERSEAS_TYPE.FOREIGN,
];

export const VEHICLE_TYPES = [
  "CAR",
  "SUV",
  "PICKUP",
  "VAN",
  "MINIVAN",
  "MOTORCYCLE",
  "ATV",
  "BOAT",
  "RV",
  "TRAILER",
  "HEAVY_EQUIPMENT",
  "OTHER",
] as const;
export type VehicleType = (typeof VEHICLE_TYPES)[number];

export const LEAD_STATES = ["LEAD", "QUOTE", "ORDER"] as const;
export type LeadState = (typeof LEAD_STATES)[number];

export interface Vehicle {
  readonly year: number;
  readonly make: string;
  readonly model: string;
  readonly type: VehicleType;
  readonly tariff: number;
  readonly deposit: number;
  readonly vehicleRun: boolean | null;
  /** Upper case; checked (17 characters, check digit). */
  readonly vin: string | null;
}

/**
 * TCPA consent evidence: what a provider sends with a lead (every member optional), or the record
 * the drop-in form made (forms/form-consent.ts: the members below `pageUrl` as well).
 */
export interface Consent {
  readonly trustedFormCertUrl: string | null;
  readonly jornayaLeadId: string | null;
  readonly consentText: string | null;
  /** RFC 3339, as sent; for a form lead, the service's time at submission. */
  readonly consentedAt: string | null;
  readonly ipAddress: string | null;
  readonly userAgent: string | null;
  readonly pageUrl: string | null;
  /** The form's consent record only: its id (cns_…). */
  readonly id?: string;
  /** The form's consent record only: SHA-256 (hex) of consentText, as the form showed it. */
  readonly textSha256?: string;
  /** The form's consent record only: the box was ticked (a form lead is never stored without it). */
  readonly accepted?: boolean;
  /** The form's consent record only: the browser's clock when the box was ticked, as sent. */
  readonly browserTime?: string | null;
  /** The form's consent record only: the page's Origin. */
  readonly origin?: string;
  /** The form's consent record only: the version of the form script. */
  readonly formVersion?: string;
  /** The form's consent record only: the lead's fields as submitted. */
  readonly fields?: Readonly<Record<string, unknown>>;
}

/** Where a lead came in: the Public API over REST, the drop-in form, or gRPC (Connect, gRPC-Web). */
export const LEAD_SOURCES = ["api", "form", "grpc"] as const;
export type LeadSource = (typeof LEAD_SOURCES)[number];

/** What a duplicate lead matched: errors.ts's DuplicateMatch, which a duplicate_lead refusal carries. */
export type Duplicate = DuplicateMatch;

/** A lead that passed every rule, ready to store. */
export interface NewLead {
  readonly externalId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phoneNumber: string;
  /**
   * The phone as libphonenumber reads it (E.164): the duplicate check's key. Null only for a lead
   * stored before the check existed whose number was not a plain US one.
   */
  readonly phoneE164: string | null;
  readonly companyName: string | null;
  readonly noteFromShipper: string | null;
  readonly estimatedShipDate: string;
  readonly overseasType: OverseasType;
  readonly shipVia: ShipVia;
  readonly origin: Place;
  readonly destination: Place | null;
  readonly vehicles: readonly Vehicle[];
  /** The provider's sub-source (1–64 of A-Za-z0-9._:-). */
  readonly subId: string | null;
  readonly sourceUrl: string | null;
  readonly consent: Consent | null;
  /** Where it came in; null for a lead stored before sources were kept (set by the service, not the caller). */
  readonly source?: LeadSource | null;
}

export interface StateChange {
  readonly fromState: LeadState | null;
  readonly toState: LeadState;
  readonly leadStatus: string;
  readonly changedAt: Date;
  readonly actor: string;
}

/**
 * What a provider is shown as the actor of a change: a role, never a person. `provider` (the
 * provider itself, through its key), `sandbox` (the test-mode mover), `system` (the service's own
 * jobs) or `staff` (anyone of the broker's who signed a change with a JWT: an administrator or an
 * internal system; their `sub` is shown to admins only).
 */
export const ACTOR_ROLES = ["provider", "staff", "system", "sandbox"] as const;
export type ActorRole = (typeof ACTOR_ROLES)[number];

export function actorRole(actor: string): ActorRole {
  if (actor === "provider" || actor.startsWith("provider:")) return "provider";
  if (actor === "sandbox") return "sandbox";
  if (actor === "system" || actor.startsWith("system:")) return "system";
  return "staff";
}

/**
 * The lead as its provider sees it: every history actor replaced by its role, and a duplicate as
 * providerDuplicate words it (`zone`: BUSINESS_TIMEZONE).
 */
export function providerView(lead: Lead, zone: string): Lead {
  const duplicate = lead.duplicate && providerDuplicate(lead.duplicate, zone);
  return { ...lead, duplicate, history: lead.history.map((h) => ({ ...h, actor: actorRole(h.actor) })) };
}

/**
 * A duplicate as its provider may see it: the original only when it is the provider's own lead
 * (never another provider's id or numbers), and when it was first seen exactly only then too.
 * Another provider's original is dated to its business day: `firstSeenAt` is that day's start,
 * 00:00 in `zone` (BUSINESS_TIMEZONE), so the answer tells whether someone sent the phone or
 * email within the window and on which day, never at what time.
 */
export function providerDuplicate(d: Duplicate, zone: string): Duplicate {
  const firstSeenAt = d.sameProvider ? d.firstSeenAt : businessDayStart(d.firstSeenAt, zone);
  return { ...d, firstSeenAt, original: d.sameProvider && d.original ? { ...d.original } : null };
}

/** The start (00:00 in `zone`) of the day `at` falls on there. */
function businessDayStart(at: Date, zone: string): Date {
  return DateTime.fromJSDate(at, { zone }).startOf("day").toJSDate();
}

/**
 * Whether the broker pays for the lead: one that duplicates none. A test lead is billable in its
 * own book (test money), exactly as a live one is in the live book.
 */
export function isBillable(lead: Pick<Lead, "duplicate">): boolean {
  return lead.duplicate === null;
}

/** The price of a billable lead, fixed when it was accepted (money/terms.ts works it out). */
export interface LeadPrice {
  readonly amountCents: number;
  readonly currency: string;
  /** What set the base price: `price_rules[i]` or `default_price_cents`. */
  readonly rule: string;
  /** The version of the provider's terms it was worked out with (0: the defaults). */
  readonly termsVersion: number;
}

/** The lead's return, if it has one (returns/ files and decides it; the lead's GET shows it). */
export interface LeadReturnStatus {
  readonly id: string;
  readonly state: string;
  readonly reason: string;
  readonly note: string | null;
  readonly requestedAt: Date;
  readonly contestDeadline: Date;
  readonly decidedAt: Date | null;
  readonly decisionNote: string | null;
}

/** Whose lead: a provider, in live or test mode (the key's mode; test leads are the sandbox's). */
export interface LeadOwner {
  readonly providerId: number;
  readonly livemode: boolean;
}

export interface Lead extends NewLead {
  readonly id: number;
  readonly providerId: number;
  /** False for a test lead (created with an `lp_test_` key). */
  readonly livemode: boolean;
  readonly orderNumber: string;
  readonly state: LeadState;
  readonly leadStatus: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly stateChangedAt: Date;
  readonly history: readonly StateChange[];
  /** Null unless the intake pipeline flagged the lead as a duplicate. */
  readonly duplicate: Duplicate | null;
  /** Null for a duplicate (not billable) and for a lead stored before leads had prices. */
  readonly price: LeadPrice | null;
  /** Its return (null or absent: none; a lead just created has none). */
  readonly return?: LeadReturnStatus | null;
}

/** Something the service accepted but tells the provider about: an ignored field, a disposable email. */
export interface Warning {
  readonly field: string;
  readonly code: "unknown_field" | "deprecated_field" | "disposable_email";
  readonly message: string;
}

export function shipViaAllowed(overseasType: OverseasType, shipVia: string): boolean {
  return (SHIP_VIA_BY_OVERSEAS_TYPE[overseasType] as readonly string[]).includes(shipVia);
}

/** The state a lead may move to from `from`, or undefined at the end of the line. */
export function nextState(from: LeadState): LeadState | undefined {
  const i = LEAD_STATES.indexOf(from);
  return LEAD_STATES[i + 1];
}

export type TransitionCheck = { readonly kind: "move" } | { readonly kind: "noop" } | { readonly kind: "refuse" };

/** Forward, adjacent moves only; moving to the current state again is a no-op (safe retries). */
export function checkTransition(from: LeadState, to: LeadState): TransitionCheck {
  if (from === to) return { kind: "noop" };
  return nextState(from) === to ? { kind: "move" } : { kind: "refuse" };
}
