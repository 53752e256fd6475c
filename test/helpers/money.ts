/**
 * What the money tests share: leads no other lead duplicates, a clock a test can move, the
 * issue's terms, and a check of the whole ledger straight from the database (every account's
 * chain of balance_after gapless and adding up to its balance, every transaction balanced).
 */
import { type Kysely, sql } from "kysely";
import { expect } from "vitest";
import type { Database } from "../../src/db/schema.ts";
import { checkPhone } from "../../src/intake/contact.ts";
import { type Json, leadBody } from "./app.ts";

const usedPhones = new Set<string>();
let n = 0;

/** A valid US phone number no other lead of this process has. */
export function freshPhone(): string {
  const areas = [212, 213, 305, 312, 404, 415, 512, 617, 702, 713, 808, 917];
  for (;;) {
    const area = areas[Math.floor(Math.random() * areas.length)];
    const exchange = 200 + Math.floor(Math.random() * 700);
    const line = String(Math.floor(Math.random() * 10_000)).padStart(4, "0");
    const phone = `+1 ${area} ${exchange} ${line}`;
    const checked = checkPhone(phone);
    if ("e164" in checked && !usedPhones.has(checked.e164)) {
      usedPhones.add(checked.e164);
      return phone;
    }
  }
}

/** A valid lead that duplicates no other (its own phone and email); override any field. */
export function freshLead(overrides: Json = {}): Json {
  n += 1;
  return leadBody({
    phone_number: freshPhone(),
    email: `payee.${process.pid}.${Date.now()}.${n}@example.com`,
    ...overrides,
  });
}

export const car = (over: Json = {}) => ({
  year: 2021,
  make: "Toyota",
  model: "Camry",
  type: "CAR",
  tariff: 950,
  deposit: 150,
  ...over,
});

/** The terms of the money issue's example. */
export const ISSUE_TERMS = {
  currency: "USD",
  default_price_cents: 1500,
  extra_vehicle_cents: 500,
  price_rules: [
    { when: { sub_id: "fb-", overseas_type: "FOREIGN" }, price_cents: 2500 },
    { when: { origin_states: ["CA", "NY"], min_vehicles: 2 }, price_cents: 2000 },
  ],
  settlement_days: 7,
  returns: {
    window_hours: 72,
    max_rate: 0.15,
    contest_hours: 48,
    reasons: ["invalid_contact", "not_requested", "out_of_area", "already_shipped", "test_or_fraud", "other"],
    auto_approve: ["test_or_fraud"],
  },
};

/** A clock the app reads (`{ now }`) that a test moves forward. */
export function movableClock() {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    /** Moves to `at` (from now on the clock runs at real speed from there). */
    set(at: Date) {
      offset = at.getTime() - Date.now();
    },
    advance(ms: number) {
      offset += ms;
    },
    reset() {
      offset = 0;
    },
  };
}

interface EntryRow {
  account_id: number;
  account_version: number;
  amount_cents: number;
  balance_after_cents: number;
}

/**
 * The ledger is whole: every account's entries, in version order, are numbered 1..n without a
 * gap, each balance_after is the previous one plus the entry's amount, the last is the account's
 * balance; every transaction's entries add up to zero; the trial balance is 0.
 */
export async function expectLedgerWhole(db: Kysely<Database>): Promise<void> {
  const accounts = (
    await sql<{ id: number; balance: number; version: number }>`
      select id, balance, version from ledger_accounts order by id`.execute(db)
  ).rows;
  const entries = (
    await sql<EntryRow>`
      select account_id, account_version, amount_cents, balance_after_cents
      from ledger_entries order by account_id, account_version`.execute(db)
  ).rows;
  for (const a of accounts) {
    const chain = entries.filter((e) => Number(e.account_id) === Number(a.id));
    let balance = 0;
    chain.forEach((e, i) => {
      expect(Number(e.account_version), `account ${a.id}: version of entry ${i + 1}`).toBe(i + 1);
      balance += Number(e.amount_cents);
      expect(Number(e.balance_after_cents), `account ${a.id}: balance after entry ${i + 1}`).toBe(balance);
    });
    expect(Number(a.version), `account ${a.id}: version`).toBe(chain.length);
    expect(Number(a.balance), `account ${a.id}: balance`).toBe(balance);
  }
  const unbalanced = await sql<{ transaction_id: number }>`
    select transaction_id from ledger_entries group by transaction_id having sum(amount_cents) <> 0 or count(*) < 2`.execute(
    db,
  );
  expect(unbalanced.rows).toEqual([]);
  const total = await sql<{ total: number | null }>`select sum(balance)::bigint as total from ledger_accounts`.execute(
    db,
  );
  expect(Number(total.rows[0]?.total ?? 0)).toBe(0);
}

/** How many transactions of a type the ledger holds for a provider (and mode). */
export async function countTransactions(
  db: Kysely<Database>,
  providerId: number,
  type: string,
  livemode = true,
): Promise<number> {
  const r = await sql<{ n: number }>`
    select count(*)::int as n from ledger_transactions
    where provider_id = ${providerId} and type = ${type} and livemode = ${livemode}`.execute(db);
  return Number(r.rows[0]?.n ?? 0);
}

/** Parses the statement CSV (RFC 4180, no embedded line breaks in these tests). */
export function parseCsv(text: string): Json[] {
  const rows = text.trimEnd().split("\r\n").map(splitCsvLine);
  const [header, ...rest] = rows;
  return rest.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ""])));
}

function splitCsvLine(line: string): string[] {
  const out: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      out.push(field);
      field = "";
    } else field += c;
  }
  out.push(field);
  return out;
}

let people = 0;

/**
 * One of a provider's people, signed in to the portal through its API: invited by an
 * administrator, the invite accepted with `password`, signed in. The session cookie, and a
 * caller of `/api/v1/portal/…` from the portal's own origin with it.
 */
export async function portalPerson(
  t: { url: string; call: (method: string, path: string, options?: Json) => Promise<Response> },
  admin: string,
  providerId: number,
  password: string,
): Promise<{
  email: string;
  cookie: string;
  portal: (method: string, path: string, body?: unknown) => Promise<Response>;
}> {
  people += 1;
  const email = `payee.person${people}.${process.pid}.${Date.now()}@portal-money.example`;
  const invited = await t.call("POST", `/api/v1/lead_providers/${providerId}/portal_users/`, {
    auth: admin,
    body: { email, name: `Person ${people}` },
  });
  expect(invited.status, await invited.clone().text()).toBe(201);
  const token = String(((await invited.json()) as Json).invite_url).split("#invite=")[1] ?? "";
  const origin = { origin: t.url };
  const accepted = await t.call("POST", "/api/v1/portal/invite/accept/", {
    headers: origin,
    body: { token, password },
  });
  expect(accepted.status, await accepted.clone().text()).toBe(200);
  const signedIn = await t.call("POST", "/api/v1/portal/sign_in/", { headers: origin, body: { email, password } });
  expect(signedIn.status, await signedIn.clone().text()).toBe(200);
  const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  return {
    email,
    cookie,
    portal: (method, path, body) =>
      t.call(method, `/api/v1/portal/${path}`, {
        ...(body !== undefined && { body }),
        headers: { ...origin, cookie },
      }),
  };
}
