/** The back office's search across providers' leads. */

import { type Kysely, sql } from "kysely";
import { customPlan } from "../db/database.ts";
import { escapeLike } from "../db/like.ts";
import type { Database } from "../db/schema.ts";
import { selectLeads, toLead } from "./lead.repository.ts";
import type { Lead, LeadState } from "./lead.ts";

type Db = Kysely<Database>;

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
 * at the same cost at any table size (docs/decisions/0024-back-office-search.md).
 */
export function wholeContact(term: string): { readonly email: string } | { readonly phoneE164: string } | null {
  if (/^[^\s@]+@[^\s@]+\.[^\s@.]+$/.test(term)) return { email: term };
  const phone = /^1?([2-9]\d{2}[2-9]\d{6})$/.exec(term);
  if (phone) return { phoneE164: `+1${phone[1]}` };
  return null;
}

/**
 * A term that reads as a first and a last name (two words or more of letters, no digit or @):
 * the first word and the rest, as leads_name_idx holds them lower-cased.
 */
export function wholeName(term: string): { readonly first: string; readonly last: string } | null {
  if (/[\d@]/.test(term)) return null;
  const m = /^(\S+)\s+(\S.*)$/.exec(term.trim());
  if (m === null) return null;
  return { first: m[1] as string, last: (m[2] as string).replace(/\s+/g, " ") };
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
  /** Leads of this mode only (a provider's portal reads one mode); overrides includeTest. */
  readonly livemode?: boolean | undefined;
  /** Leads of this sub-source only. */
  readonly subId?: string | undefined;
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
 * 1.2 µs a lead, paid by every rare term first: 3,000 rather than 10,000 (docs/decisions/0024-back-office-search.md).
 */
const SEARCH_RECENT = 3_000;

/**
 * The week of a lead's id (weeks since 2024-01-01; 0 for every sequence id), as
 * leads_search_weeks_idx holds it beside the search text's trigrams (db/indexes.ts).
 */
const SEARCH_WEEK = sql<number[]>`array[((leads.id >> 12) / 604800000)::int]`;
const WEEK_MS = 604_800_000;
export function searchWeek(id: number): number {
  return id < TIME_IDS_FROM ? 0 : Math.floor(Math.floor(id / 4096) / WEEK_MS);
}
/** The spans of weeks a substring search reads in turn below the newest leads, newest first. */
const SEARCH_SPANS_WEEKS = [4, 22] as const;

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

/** One page of leads across providers (the back office) or of one provider and mode (its portal), newest first. */
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
  if (s.livemode !== undefined) query = query.where("leads.livemode", "=", s.livemode);
  else if (!s.includeTest) query = query.where("leads.livemode", "=", true);
  if (s.subId !== undefined) query = query.where("leads.sub_id", "=", s.subId);
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
  // A whole order number or external id as typed (no space, a digit in it: not a name): that
  // lead, from the unique order number or the external_id index, before any substring search;
  // only when the filters hold none of them (on any page) is it a substring after all.
  const typed = s.q.trim();
  if (/\d/.test(typed) && !/\s/.test(typed)) {
    const exactId = (q: typeof query) =>
      q.where((eb) => eb.or([eb("leads.external_id", "=", typed), eb("leads.order_number", "=", typed.toUpperCase())]));
    const any = await customPlan(exactId(scoped).clearSelect().select("leads.id").limit(1)).executeTakeFirst();
    if (any !== undefined) return page(exactId(query), limit);
  }
  // A whole first and last name ("james smith", no digit or @): that customer's leads, newest
  // first from leads_name_idx, which stops at the page; a substring only when there are none.
  const name = wholeName(term);
  if (name !== null) {
    const exactName = (q: typeof query) =>
      q
        .where(sql<string>`lower(leads.last_name)`, "=", name.last)
        .where(sql<string>`lower(leads.first_name)`, "=", name.first);
    const any = await customPlan(exactName(scoped).clearSelect().select("leads.id").limit(1)).executeTakeFirst();
    if (any !== undefined) return page(exactName(query), limit);
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
  if (byDigits !== undefined) {
    return [...recent, ...(await byDigits(query.where("leads.id", "<", floorRow.id), limit - recent.length))];
  }
  // Below the newest, the trigram index a span of weeks at a time, newest span first: a common
  // fragment's page is found among the few matches of the last weeks, not by reading every
  // match in the table (thousands, each a heap block) and sorting them; a rare one costs a few
  // index scans that find little. The oldest span is everything before the others.
  const found = [...recent];
  const older = matching.where("leads.id", "<", floorRow.id);
  // Ordered by `id + 0`, as byDigits: the index's matches and a sort of those few, never a walk
  // down the primary key hoping to meet them.
  const fromIndex = (q: typeof query, n: number) =>
    customPlan(q.orderBy(sql`leads.id + 0`, "desc").limit(n))
      .execute()
      .then((rows) => rows.map(toLead));
  const newestWeek = searchWeek(Number(floorRow.id));
  let upTo = newestWeek;
  for (const weeks of SEARCH_SPANS_WEEKS) {
    const span = Array.from({ length: Math.min(weeks, upTo + 1) }, (_, i) => upTo - i);
    if (span.length === 0) return found;
    found.push(...(await fromIndex(older.where(sql<boolean>`${SEARCH_WEEK} && ${span}::int[]`), limit - found.length)));
    if (found.length === limit) return found;
    upTo -= weeks;
  }
  if (upTo < 0) return found;
  // The weeks up to `upTo` are the ids below its next week's first.
  const below = sql<boolean>`leads.id < (${upTo + 1}::bigint * ${WEEK_MS} * 4096)`;
  const rest = await fromIndex(older.where(below), limit - found.length);
  return [...found, ...rest];
}
