/**
 * Returns and disputes: types, the states and the pure rules (no I/O, no clock). A broker returns
 * a billable lead with a reason; the provider may contest it with evidence; an approval reverses
 * the lead's purchase. JSON shapes live here too: events store a return as the API shows it.
 */
import type { LedgerLead } from "../money/money.ts";
import { RETURN_REASONS, type ReturnReason } from "../money/terms.ts";

export { RETURN_REASONS, type ReturnReason };

export const RETURN_STATES = ["requested", "contested", "approved", "denied", "withdrawn"] as const;
export type ReturnState = (typeof RETURN_STATES)[number];

/** A return the broker may still withdraw or decide; its lead is held back from settlement. */
export const OPEN_STATES: readonly ReturnState[] = ["requested", "contested"];
/** The states that count against the monthly cap (a denied or withdrawn return does not). */
export const COUNTED_STATES: readonly ReturnState[] = ["requested", "contested", "approved"];

export const RETURN_EVENT_TYPES = [
  "lead.return_requested",
  "lead.return_contested",
  "lead.return_approved",
  "lead.return_denied",
  "lead.return_withdrawn",
] as const;
export type ReturnEventType = (typeof RETURN_EVENT_TYPES)[number];

export const MAX_NOTE = 1000;
export const MAX_STATEMENT = 2000;
export const MAX_URL = 2048;
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_NAME = 200;

export interface Evidence {
  readonly consentCertificateUrl: string | null;
  readonly recordingUrl: string | null;
  readonly attachments: ReadonlyArray<{ readonly name: string; readonly url: string }>;
}

export interface Contest {
  readonly statement: string;
  readonly evidence: Evidence;
  readonly contestedAt: Date;
}

export interface LeadReturn {
  /** ret_ + 32 hex digits. */
  readonly id: string;
  readonly lead: LedgerLead;
  readonly providerId: number;
  readonly livemode: boolean;
  readonly state: ReturnState;
  readonly reason: ReturnReason;
  readonly note: string | null;
  readonly requestedAt: Date;
  readonly contestDeadline: Date;
  readonly contest: Contest | null;
  readonly decidedAt: Date | null;
  readonly decisionNote: string | null;
  /** The purchase an approval reverses (the lead's price). */
  readonly amountCents: number;
  readonly currency: string;
}

/** The return as the lead's GET shows it. */
export interface LeadReturnSummary {
  readonly id: string;
  readonly state: ReturnState;
  readonly reason: ReturnReason;
  readonly note: string | null;
  readonly requestedAt: Date;
  readonly contestDeadline: Date;
  readonly decidedAt: Date | null;
  readonly decisionNote: string | null;
}

export const isOpen = (state: ReturnState): boolean => OPEN_STATES.includes(state);

/** The most returns a month may count: max_rate of its billable leads, rounded down. */
export function monthlyCap(maxRate: number, billableLeads: number): number {
  return Math.floor(maxRate * billableLeads + 1e-9);
}

/** An https URL (evidence is stored, never fetched). */
export function isHttpsUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === "https:" && u.hostname !== "" && u.username === "" && u.password === "";
  } catch {
    return false;
  }
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export function evidenceJson(e: Evidence) {
  return {
    ...(e.consentCertificateUrl !== null && { consent_certificate_url: e.consentCertificateUrl }),
    ...(e.recordingUrl !== null && { recording_url: e.recordingUrl }),
    attachments: e.attachments.map((a) => ({ name: a.name, url: a.url })),
  };
}

/** A return as the API shows it: administrators see the provider's id, providers do not. */
export function returnJson(r: LeadReturn, view: "admin" | "provider") {
  return {
    id: r.id,
    lead: { id: r.lead.id, external_id: r.lead.externalId, order_number: r.lead.orderNumber },
    ...(view === "admin" && { provider_id: r.providerId }),
    livemode: r.livemode,
    state: r.state,
    reason: r.reason,
    note: r.note,
    requested_at: r.requestedAt.toISOString(),
    contest_deadline: r.contestDeadline.toISOString(),
    contest:
      r.contest === null
        ? null
        : {
            statement: r.contest.statement,
            evidence: evidenceJson(r.contest.evidence),
            contested_at: r.contest.contestedAt.toISOString(),
          },
    decided_at: iso(r.decidedAt),
    decision_note: r.decisionNote,
    amount_cents: r.amountCents,
    currency: r.currency,
  };
}

export function summaryOf(r: LeadReturn): LeadReturnSummary {
  return {
    id: r.id,
    state: r.state,
    reason: r.reason,
    note: r.note,
    requestedAt: r.requestedAt,
    contestDeadline: r.contestDeadline,
    decidedAt: r.decidedAt,
    decisionNote: r.decisionNote,
  };
}

export function summaryJson(s: LeadReturnSummary) {
  return {
    id: s.id,
    state: s.state,
    reason: s.reason,
    note: s.note,
    requested_at: s.requestedAt.toISOString(),
    contest_deadline: s.contestDeadline.toISOString(),
    decided_at: iso(s.decidedAt),
    decision_note: s.decisionNote,
  };
}
