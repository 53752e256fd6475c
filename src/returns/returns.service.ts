/**
 * Returns' use cases for every edge: a broker files a return of a billable lead (refused, nothing
 * stored, outside the window, twice, or over the provider's monthly cap), withdraws it or decides
 * a contested one; the provider contests it with evidence; a job approves what was not contested
 * in time. Each change is one transaction with its audit entry and its event; an approval posts
 * the reversal of the lead's purchase (idempotency key lead:{id}:return) in that transaction.
 */
import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { recordAudit } from "../audit/audit.repository.ts";
import type { Database } from "../db/schema.ts";
import { DomainError, type DomainErrorOptions, throwIfViolations } from "../errors.ts";
import { newEventId } from "../events/event.ts";
import { Fields, type RawId } from "../fields.ts";
import * as money from "../money/money.repository.ts";
import type { Book } from "../money/money.ts";
import { monthOf, periodOf } from "../money/statement.ts";
import { type ReturnsPolicy, termsWithDefaults } from "../money/terms.ts";
import type { Page } from "../paging.ts";
import * as repo from "./returns.repository.ts";
import {
  isHttpsUrl,
  isOpen,
  type LeadReturn,
  type LeadReturnSummary,
  MAX_ATTACHMENT_NAME,
  MAX_ATTACHMENTS,
  MAX_NOTE,
  MAX_STATEMENT,
  MAX_URL,
  monthlyCap,
  RETURN_REASONS,
  RETURN_STATES,
  type ReturnEventType,
  type ReturnReason,
  type ReturnState,
  returnJson,
  summaryOf,
} from "./returns.ts";

/** A refusal with members of its own (closed_at, the cap's numbers): REST adds them to the problem. */
export class ReturnRefusal extends DomainError {
  readonly extras: Readonly<Record<string, string | number>>;
  constructor(message: string, options: DomainErrorOptions, extras: Record<string, string | number> = {}) {
    super("failed_precondition", message, options);
    this.extras = extras;
  }
}

export interface ReturnsServiceDeps {
  readonly db: Kysely<Database>;
  /** LEDGER_CURRENCY (a provider's default terms). */
  readonly currency: string;
  /** BUSINESS_TIMEZONE: the cap's calendar month. */
  readonly zone: string;
  readonly now?: () => Date;
  /** After a return's event was committed (metrics, webhook wake-up). */
  readonly onEvent?: (type: ReturnEventType, livemode: boolean) => void;
}

export const RETURN_PAGE = { defaultSize: 20, maxSize: 100 } as const;
const RETURN_ID = /^ret_[0-9a-f]{32}$/;
const HOUR = 3_600_000;

export interface ReturnQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly state?: string | undefined;
  readonly reason?: string | undefined;
  readonly providerId?: RawId | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

/** Who did it, as a provider may see it (roles only). */
function roleOf(actor: string): "broker" | "provider" | "system" {
  if (actor.startsWith("system:")) return "system";
  if (actor.startsWith("provider:") || actor.startsWith("portal:")) return "provider";
  return "broker";
}

const returnNotFound = (what: string) =>
  new DomainError("not_found", `no return ${what}`, { code: "return_not_found" });
const leadNotFound = (what: string) => new DomainError("not_found", `no lead ${what}`, { code: "lead_not_found" });

function bodyOf(input: unknown): Record<string, unknown> {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    throwIfViolations([{ field: "body", code: "invalid_type", message: "the body must be a JSON object" }]);
  }
  return input as Record<string, unknown>;
}

function unknownMembers(f: Fields, body: Record<string, unknown>, known: readonly string[], prefix = "") {
  for (const k of Object.keys(body)) {
    if (!known.includes(k))
      f.add(`${prefix}${k}`, "unknown_field", `${prefix}${k} is not a member (${known.join(", ")})`);
  }
}

function readUrl(f: Fields, obj: Record<string, unknown>, key: string, prefix: string): string | undefined {
  const url = f.text(obj, key, { max: MAX_URL, noControl: true }, prefix);
  if (url !== undefined && !isHttpsUrl(url)) {
    f.add(`${prefix}.${key}`, "invalid_format", `${prefix}.${key} must be an https URL`);
    return undefined;
  }
  return url;
}

export type ReturnsService = ReturnType<typeof createReturnsService>;

export function createReturnsService(deps: ReturnsServiceDeps) {
  const { db, currency, zone } = deps;
  const now = deps.now ?? (() => new Date());

  async function policyOf(trx: Kysely<Database>, providerId: number): Promise<ReturnsPolicy> {
    const stored = await money.readTerms(trx, providerId);
    return termsWithDefaults(stored?.terms ?? {}, currency).returns;
  }

  /** The audit entry and the event of a change, in its transaction. */
  async function record(
    trx: Kysely<Database>,
    actor: string,
    type: ReturnEventType,
    r: LeadReturn,
    extra: Record<string, unknown> = {},
  ) {
    await recordAudit(trx, {
      actor,
      action: type,
      targetType: "lead",
      targetId: String(r.lead.id),
      details: { provider_id: r.providerId, livemode: r.livemode, return: returnJson(r, "admin"), ...extra },
    });
    await repo.insertReturnEvent(trx, {
      eventId: newEventId(),
      type,
      r,
      data: { return: { ...returnJson(r, "provider"), actor: roleOf(actor) } },
    });
  }

  /**
   * Approves an open return in `trx`: the state, then the reversal of the purchase: off pending
   * while the lead has not settled (its queue row goes), else off available (which may go below
   * zero). The idempotency key posts it once whatever happens.
   */
  async function approveIn(trx: Kysely<Database>, actor: string, r: LeadReturn, note: string | null) {
    const approved = await repo.setDecision(trx, r.id, { state: "approved", at: now(), by: actor, note });
    const book: Book = { providerId: r.providerId, livemode: r.livemode };
    let from: "pending" | "available" | null = null;
    if (await repo.purchasePosted(trx, r.lead.id)) {
      from = (await repo.unqueueSettlement(trx, r.lead.id)) ? "pending" : "available";
      await money.post(trx, {
        book,
        type: "return",
        key: `lead:${r.lead.id}:return`,
        publicId: `txn_${randomUUID().replaceAll("-", "")}`,
        at: now(),
        currency: r.currency,
        legs: [
          { account: from, cents: -r.amountCents },
          { account: "lead_expense", cents: r.amountCents },
        ],
        lead: r.lead,
        reference: r.id,
        description: `Returned: lead ${r.lead.orderNumber} (${r.reason})`,
        details: { return: r.id, reason: r.reason },
        createdBy: actor,
        noOverdraft: null,
      });
    }
    await record(trx, actor, "lead.return_approved", approved, { reversed_from: from });
    return approved;
  }

  function readRequest(input: unknown) {
    const body = bodyOf(input);
    const f = new Fields();
    unknownMembers(f, body, ["reason", "note"]);
    const reason = f.oneOf(body, "reason", RETURN_REASONS, true) as ReturnReason | undefined;
    const note = f.text(body, "note", { max: MAX_NOTE, allowEmpty: true });
    if (reason === "other" && (note === undefined || note.trim() === "")) {
      f.add("note", "required", "note is required when the reason is other");
    }
    throwIfViolations(f.violations);
    return { reason: reason as ReturnReason, note: note === undefined || note === "" ? null : note };
  }

  function readContest(input: unknown) {
    const body = bodyOf(input);
    const f = new Fields();
    unknownMembers(f, body, ["statement", "evidence"]);
    const statement = f.text(body, "statement", { max: MAX_STATEMENT, required: true });
    if (statement !== undefined && statement.trim() === "") f.add("statement", "required", "statement is required");
    let consent: string | undefined;
    let recording: string | undefined;
    const attachments: { name: string; url: string }[] = [];
    const ev = body.evidence;
    if (ev !== undefined && ev !== null) {
      if (typeof ev !== "object" || Array.isArray(ev)) f.add("evidence", "invalid_type", "evidence must be an object");
      else {
        const e = ev as Record<string, unknown>;
        unknownMembers(f, e, ["consent_certificate_url", "recording_url", "attachments"], "evidence.");
        consent = readUrl(f, e, "consent_certificate_url", "evidence");
        recording = readUrl(f, e, "recording_url", "evidence");
        const list = e.attachments;
        if (list !== undefined && list !== null) {
          if (!Array.isArray(list))
            f.add("evidence.attachments", "invalid_type", "evidence.attachments must be a list");
          else if (list.length > MAX_ATTACHMENTS) {
            f.add("evidence.attachments", "too_many_items", `evidence.attachments holds at most ${MAX_ATTACHMENTS}`);
          } else {
            list.forEach((a, i) => {
              const path = `evidence.attachments[${i}]`;
              if (a === null || typeof a !== "object" || Array.isArray(a)) {
                f.add(path, "invalid_type", `${path} must be an object with name and url`);
                return;
              }
              const item = a as Record<string, unknown>;
              unknownMembers(f, item, ["name", "url"], `${path}.`);
              const name = f.text(item, "name", { max: MAX_ATTACHMENT_NAME, required: true, noControl: true }, path);
              if (item.url === undefined || item.url === null)
                f.add(`${path}.url`, "required", `${path}.url is required`);
              const url = readUrl(f, item, "url", path);
              if (name !== undefined && url !== undefined) attachments.push({ name, url });
            });
          }
        }
      }
    }
    throwIfViolations(f.violations);
    return {
      statement: statement as string,
      evidence: { consent_certificate_url: consent ?? null, recording_url: recording ?? null, attachments },
    };
  }

  function readDecision(input: unknown) {
    const body = bodyOf(input);
    const f = new Fields();
    unknownMembers(f, body, ["decision", "note"]);
    const decision = f.oneOf(body, "decision", ["approve", "deny"], true) as "approve" | "deny" | undefined;
    const note = f.text(body, "note", { max: MAX_NOTE, allowEmpty: true });
    throwIfViolations(f.violations);
    return { decision: decision as "approve" | "deny", note: note === undefined || note === "" ? null : note };
  }

  function readReturnId(raw: string): string {
    if (!RETURN_ID.test(raw)) throw returnNotFound(raw.length <= 40 ? raw : `${raw.slice(0, 40)}…`);
    return raw;
  }

  async function list(
    q: ReturnQuery,
    scope: { providerId?: number; livemode?: boolean },
    order: "newest" | "deadline",
  ): Promise<Page<LeadReturn>> {
    const f = new Fields();
    const size =
      f.integer({ page_size: q.pageSize ?? RETURN_PAGE.defaultSize }, "page_size", 1, RETURN_PAGE.maxSize) ?? 1;
    const state =
      q.state === ""
        ? undefined
        : (f.oneOf({ state: q.state }, "state", RETURN_STATES, false) as ReturnState | undefined);
    const reason =
      q.reason === ""
        ? undefined
        : (f.oneOf({ reason: q.reason }, "reason", RETURN_REASONS, false) as ReturnReason | undefined);
    const providerId =
      q.providerId === undefined || q.providerId === ""
        ? scope.providerId
        : f.id({ provider_id: q.providerId }, "provider_id");
    const createdAfter = f.instant(q.createdAfter, "created_after");
    const createdBefore = f.instant(q.createdBefore, "created_before");
    const filter: repo.ReturnFilter = {
      providerId,
      livemode: scope.livemode,
      state,
      reason,
      createdAfter,
      createdBefore,
    };
    let position: { seq: number; deadline: Date } | undefined;
    if (q.pageToken !== undefined && q.pageToken !== "") {
      const id = /^[A-Za-z0-9_-]+$/.test(q.pageToken) ? Buffer.from(q.pageToken, "base64url").toString("utf8") : "";
      position = RETURN_ID.test(id) ? await repo.positionOf(db, id, filter) : undefined;
      if (position === undefined)
        f.add("page_token", "invalid_format", "page_token is not a token this service issued");
    }
    throwIfViolations(f.violations);
    const rows =
      order === "newest"
        ? await repo.listNewest(db, filter, position?.seq, size + 1)
        : await repo.listByDeadline(db, filter, position, size + 1);
    const items = rows.slice(0, size).map(({ seq: _, ...r }) => r);
    const last = items.at(-1);
    return { items, nextPageToken: rows.length > size && last ? Buffer.from(last.id).toString("base64url") : "" };
  }

  const notify = (events: ReadonlyArray<{ type: ReturnEventType; livemode: boolean }>) => {
    for (const e of events) deps.onEvent?.(e.type, e.livemode);
  };

  return {
    requestViolations: (input: unknown) => violationsOf(() => readRequest(input)),
    contestViolations: (input: unknown) => violationsOf(() => readContest(input)),
    decisionViolations: (input: unknown) => violationsOf(() => readDecision(input)),

    /** Files a return of the lead (an administrator, or the workflow over gRPC). */
    async request(actor: string, rawLeadId: RawId, input: unknown): Promise<LeadReturn> {
      const f = new Fields();
      const leadId = f.id({ lead_id: rawLeadId }, "lead_id");
      throwIfViolations(f.violations);
      const { reason, note } = readRequest(input);
      const done = await db.transaction().execute(async (trx) => {
        const lead = await repo.leadById(trx, leadId as number);
        if (lead === undefined) throw leadNotFound(`with id ${leadId}`);
        // Every return of the provider waits here: the cap is checked and the return stored as one.
        await repo.lockProvider(trx, lead.providerId);
        if (lead.priceCents === null) {
          throw new ReturnRefusal(`lead ${lead.id} is not billable (a flagged duplicate, or stored before prices)`, {
            code: "not_billable",
          });
        }
        const policy = await policyOf(trx, lead.providerId);
        if (!policy.reasons.includes(reason)) {
          throwIfViolations([
            {
              field: "reason",
              code: "not_allowed",
              message: `reason must be one of the provider's return reasons: ${policy.reasons.join(", ")}`,
            },
          ]);
        }
        const at = now();
        const closedAt = new Date(lead.acceptedAt.getTime() + policy.window_hours * HOUR);
        if (at.getTime() > closedAt.getTime()) {
          throw new ReturnRefusal(
            `lead ${lead.id} can no longer be returned: the ${policy.window_hours}-hour window closed at ${closedAt.toISOString()}`,
            { code: "return_window_closed" },
            { closed_at: closedAt.toISOString() },
          );
        }
        const existing = await repo.returnOfLead(trx, lead.id);
        if (existing !== undefined) {
          throw new ReturnRefusal(
            `lead ${lead.id} already has a return (${existing.id}, ${existing.state})`,
            { code: "already_returned" },
            { return_id: existing.id, return_state: existing.state },
          );
        }
        const book = { providerId: lead.providerId, livemode: lead.livemode };
        const period = periodOf(monthOf(at, zone), zone);
        const counts = await repo.monthCounts(trx, book, period.start, period.end);
        const cap = monthlyCap(policy.max_rate, counts.billable);
        if (counts.returns + 1 > cap) {
          throw new ReturnRefusal(
            `the provider's returns this month would be ${counts.returns + 1}, over its cap of ${cap} ` +
              `(max_rate ${policy.max_rate} of ${counts.billable} billable leads in ${period.month})`,
            { code: "return_cap_reached" },
            {
              month: period.month,
              returns_this_month: counts.returns,
              billable_leads_this_month: counts.billable,
              max_rate: policy.max_rate,
              max_returns: cap,
            },
          );
        }
        const created = await repo.insertReturn(trx, {
          publicId: `ret_${randomUUID().replaceAll("-", "")}`,
          lead,
          reason,
          note,
          amountCents: lead.priceCents,
          currency: lead.currency ?? currency,
          requestedAt: at,
          requestedBy: actor,
          contestDeadline: new Date(at.getTime() + policy.contest_hours * HOUR),
        });
        await repo.holdSettlement(trx, lead.id, true);
        await record(trx, actor, "lead.return_requested", created);
        const events: { type: ReturnEventType; livemode: boolean }[] = [
          { type: "lead.return_requested", livemode: lead.livemode },
        ];
        if (!policy.auto_approve.includes(reason)) return { r: created, events };
        const approved = await approveIn(
          trx,
          "system:auto_approve",
          created,
          `approved at once: ${reason} is approved without a contest`,
        );
        events.push({ type: "lead.return_approved", livemode: lead.livemode });
        return { r: approved, events };
      });
      notify(done.events);
      return done.r;
    },

    /** The broker takes back a return not yet decided. */
    async withdraw(actor: string, rawId: string, input: unknown): Promise<LeadReturn> {
      const id = readReturnId(rawId);
      const body = input === undefined || input === null ? {} : bodyOf(input);
      const f = new Fields();
      unknownMembers(f, body, ["note"]);
      const note = f.text(body, "note", { max: MAX_NOTE, allowEmpty: true });
      throwIfViolations(f.violations);
      const r = await db.transaction().execute(async (trx) => {
        const current = await repo.findReturn(trx, id, true);
        if (current === undefined) throw returnNotFound(id);
        if (!isOpen(current.state)) {
          throw new ReturnRefusal(
            `return ${id} is ${current.state}; only a requested or contested return can be withdrawn`,
            {
              code: "return_decided",
              currentState: current.state,
            },
          );
        }
        const withdrawn = await repo.setDecision(trx, id, {
          state: "withdrawn",
          at: now(),
          by: actor,
          note: note === undefined || note === "" ? null : note,
        });
        await repo.holdSettlement(trx, current.lead.id, false);
        await record(trx, actor, "lead.return_withdrawn", withdrawn);
        return withdrawn;
      });
      notify([{ type: "lead.return_withdrawn", livemode: r.livemode }]);
      return r;
    },

    /** The broker decides a contested return: approve (the reversal is posted) or deny (nothing is). */
    async decide(actor: string, rawId: string, input: unknown): Promise<LeadReturn> {
      const id = readReturnId(rawId);
      const { decision, note } = readDecision(input);
      const r = await db.transaction().execute(async (trx) => {
        const current = await repo.findReturn(trx, id, true);
        if (current === undefined) throw returnNotFound(id);
        if (current.state !== "contested") {
          throw new ReturnRefusal(
            `return ${id} is ${current.state}; only a contested return is decided (an uncontested one is approved when its contest deadline passes)`,
            { code: "return_not_contested", currentState: current.state },
          );
        }
        if (decision === "approve") return approveIn(trx, actor, current, note);
        const denied = await repo.setDecision(trx, id, { state: "denied", at: now(), by: actor, note });
        await repo.holdSettlement(trx, current.lead.id, false);
        await record(trx, actor, "lead.return_denied", denied);
        return denied;
      });
      notify([{ type: decision === "approve" ? "lead.return_approved" : "lead.return_denied", livemode: r.livemode }]);
      return r;
    },

    /** The provider contests its lead's return, once, before the contest deadline. */
    async contest(actor: string, book: Book, externalId: string, input: unknown): Promise<LeadReturn> {
      const { statement, evidence } = readContest(input);
      const r = await db.transaction().execute(async (trx) => {
        const current = await repo.findOwnReturn(trx, book, externalId);
        if (current === undefined) throw returnNotFound(`of a lead with external_id ${externalId}`);
        if (current.state === "contested") {
          throw new ReturnRefusal(`the return of ${externalId} was already contested`, {
            code: "already_contested",
            currentState: current.state,
          });
        }
        if (current.state !== "requested") {
          throw new ReturnRefusal(`the return of ${externalId} is ${current.state}; it can no longer be contested`, {
            code: "return_decided",
            currentState: current.state,
          });
        }
        const at = now();
        if (at.getTime() > current.contestDeadline.getTime()) {
          throw new ReturnRefusal(
            `the return of ${externalId} could be contested until ${current.contestDeadline.toISOString()}`,
            { code: "contest_window_closed" },
            { closed_at: current.contestDeadline.toISOString() },
          );
        }
        const contested = await repo.setContest(trx, current.id, {
          statement,
          evidence,
          contested_at: at.toISOString(),
          contested_by: actor,
        });
        await record(trx, actor, "lead.return_contested", contested);
        return contested;
      });
      notify([{ type: "lead.return_contested", livemode: r.livemode }]);
      return r;
    },

    async get(rawId: string): Promise<LeadReturn> {
      const r = await repo.findReturn(db, readReturnId(rawId));
      if (r === undefined) throw returnNotFound(rawId);
      return r;
    },

    /** Every return (administrators), by contest deadline, soonest first. */
    list: (q: ReturnQuery) => list(q, {}, "deadline"),

    /** The book's own returns, newest first (a provider key or the portal). */
    listOwn: (book: Book, q: ReturnQuery) =>
      list({ ...q, providerId: undefined }, { providerId: book.providerId, livemode: book.livemode }, "newest"),

    /** The lead's return, as its GET shows it (null: none). */
    async ofLead(leadId: number): Promise<LeadReturnSummary | null> {
      const r = await repo.returnOfLead(db, leadId);
      return r === undefined ? null : summaryOf(r);
    },

    /**
     * Approves one requested return whose contest deadline has passed (SKIP LOCKED, its own
     * transaction); false when none is due. The job's step.
     */
    async approveOneDue(): Promise<boolean> {
      const approved = await db.transaction().execute(async (trx) => {
        const id = await repo.claimDue(trx, now());
        if (id === undefined) return undefined;
        const current = (await repo.findReturn(trx, id, true)) as LeadReturn;
        return approveIn(trx, "system:returns", current, "approved: not contested before the deadline");
      });
      if (approved) notify([{ type: "lead.return_approved", livemode: approved.livemode }]);
      return approved !== undefined;
    },
  };
}

function violationsOf(check: () => unknown) {
  try {
    check();
    return [];
  } catch (err) {
    if (err instanceof DomainError) return [...err.violations];
    throw err;
  }
}
