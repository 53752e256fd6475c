/** Lead domain types and pure rules (no I/O): vocabularies, the ship_via rule, the state machine. */
import type { Place } from "../zip/zip-directory.ts";

export type { Place };

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
}

/** A lead that passed every rule, ready to store. */
export interface NewLead {
  readonly externalId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly phoneNumber: string;
  readonly companyName: string | null;
  readonly noteFromShipper: string | null;
  readonly estimatedShipDate: string;
  readonly overseasType: OverseasType;
  readonly shipVia: ShipVia;
  readonly origin: Place;
  readonly destination: Place | null;
  readonly vehicles: readonly Vehicle[];
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

/** The lead as its provider sees it: every history actor replaced by its role. */
export function providerView(lead: Lead): Lead {
  return { ...lead, history: lead.history.map((h) => ({ ...h, actor: actorRole(h.actor) })) };
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
}

/** A field the service ignored: unknown, or deprecated. */
export interface Warning {
  readonly field: string;
  readonly code: "unknown_field" | "deprecated_field";
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
