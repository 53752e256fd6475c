/** Lead events: what happened to a lead, with the lead as it was at that moment. */
import { randomUUID } from "node:crypto";
import type { VersionedRules } from "../intake/intake-rules.ts";
import type { Lead, LeadState } from "../leads/lead.ts";
import type { EventType } from "./event-types.ts";

export { EVENT_TYPE_DESCRIPTIONS, EVENT_TYPES, type EventType, isEventType } from "./event-types.ts";

export interface LeadEvent {
  /** Stable public id, `evt_` + 32 hex digits. */
  readonly id: string;
  /** Position in the outbox (cursor paging, ordering). */
  readonly sequence: number;
  readonly providerId: number;
  readonly type: EventType;
  readonly createdAt: Date;
  /** False for a test lead's event (the feed of a test key lists only these). */
  readonly livemode: boolean;
  /** The lead as GET showed it when the event happened; absent for intake_rules.changed. */
  readonly lead?: Lead;
  /** intake_rules.changed: the new rules. */
  readonly intakeRules?: VersionedRules;
  /**
   * Events about money (terms.changed, payout.created, adjustment.created) and returns
   * (lead.return_*: `data.return`): the data as published, already in the API's shape (money/ and
   * returns/ write it so), passed on as it is.
   */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** What an event's `data` column holds. */
export interface EventData {
  readonly lead?: unknown;
  readonly intakeRules?: { rules: unknown; version: number; updatedAt: string | null };
  readonly terms?: unknown;
  readonly payout?: unknown;
  readonly adjustment?: unknown;
}

/** An intake_rules.changed event's rules, as stored, with its time as a Date again. */
export function rulesFromSnapshot(s: NonNullable<EventData["intakeRules"]>): VersionedRules {
  return {
    rules: s.rules as VersionedRules["rules"],
    version: s.version,
    updatedAt: s.updatedAt === null ? null : new Date(s.updatedAt),
  };
}

export function newEventId(): string {
  return `evt_${randomUUID().replaceAll("-", "")}`;
}

/** The event a change from `from` to `to` announces: a status-only change when the state stays. */
export function eventTypeOfChange(from: LeadState, to: LeadState): EventType {
  if (from === to) return "lead.status_changed";
  return to === "ORDER" ? "lead.ordered" : "lead.quoted";
}
