/**
 * The back office's substring search looks among the newest leads first and goes to the trigram
 * index only for the rest: whichever way a page is found, it is exactly the matching
 * leads in the list's order, page after page. A whole email or phone is one customer's leads.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { searchLeads, wholeContact, wholeName } from "../src/leads/lead-search.repository.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

describe.each(BACKENDS)("lead search pages ($name)", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(backend);
  });
  afterAll(() => t?.stop());

  it("finds every match in order, within the newest leads, beyond them, and across the two", async () => {
    const p = await t.provider();
    const ids: number[] = [];
    const matching: number[] = [];
    // 30 leads, oldest first; every third one's customer is a Kowalczyk.
    for (let i = 0; i < 30; i++) {
      const last = i % 3 === 0 ? "Kowalczyk" : "Other";
      const r = await t.call("POST", "/api/v1/public/leads/", {
        auth: p.key,
        body: leadBody({ external_id: `search-${i}`, last_name: last, email: `c${i}.${last}@example.com` }),
      });
      expect(r.status).toBe(201);
      const id = ((await r.json()) as Json).id as number;
      ids.push(id);
      if (last === "Kowalczyk") matching.push(id);
    }
    const newestFirst = [...matching].reverse();
    const db = t.app.database.db;
    // Windows of 4 (the page is filled beyond them), 12 (within them at first) and all.
    for (const window of [4, 12, 1000]) {
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await searchLeads(db, { q: "kowalczyk", providerId: p.id, beforeId: before }, 3, window);
        seen.push(...page.map((l) => l.id));
        if (page.length < 3) break;
        before = page.at(-1)?.id;
      }
      expect(seen, `window ${window}`).toEqual(newestFirst);
    }
    // A term matching nothing, and one matching a single old lead.
    expect(await searchLeads(db, { q: "nobody-at-all", providerId: p.id }, 3, 4)).toEqual([]);
    const oldest = await searchLeads(db, { q: "c0.kowalczyk", providerId: p.id }, 3, 4);
    expect(oldest.map((l) => l.id)).toEqual([ids[0]]);
  });

  it("finds every match in order when the matches lie weeks and years apart, and before time-based ids", async () => {
    const p = await t.provider();
    const tag = `w${Date.now().toString(36)}`;
    const r = await t.call("POST", "/api/v1/public/leads/", {
      auth: p.key,
      body: leadBody({ external_id: `${tag}-seed`, last_name: "Wozniakowska", email: `x.${tag}@example.com` }),
    });
    expect(r.status).toBe(201);
    const seedId = BigInt(((await r.json()) as Json).id as number);
    const db = t.app.database.db;
    // Copies of that lead whose ids are weeks older (an id is its creation millisecond << 12):
    // in each span the search reads (4 weeks, the 22 before them, everything older) and on their
    // edges, and one with a sequence id from before time-based ids.
    const week = 604_800_000n * 4096n;
    const weeksAgo = [0n, 1n, 3n, 4n, 5n, 25n, 26n, 27n, 80n];
    const ids = [...weeksAgo.map((w, i) => seedId - w * week - BigInt(i + 1)), 1_000_000n + (seedId % 1000n)];
    for (const [i, id] of ids.entries()) {
      await sql`
        insert into leads
        select (jsonb_populate_record(null::leads, to_jsonb(l) || jsonb_build_object(
          'id', ${String(id)}::bigint, 'external_id', ${`${tag}-${i}`}::text, 'order_number', ${`LPW-${tag}-${i}`}::text))).*
        from leads l where l.id = ${String(seedId)}::bigint`.execute(db);
    }
    const expected = [seedId, ...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)).map(String);
    for (const pageSize of [1, 3, 20]) {
      const seen: string[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await searchLeads(db, { q: "wozniakowsk", providerId: p.id, beforeId: before }, pageSize, 2);
        seen.push(...page.map((l) => String(l.id)));
        if (page.length < pageSize) break;
        before = page.at(-1)?.id;
      }
      expect(seen, `pages of ${pageSize}`).toEqual(expected);
    }
  });

  it("finds one customer's leads by a whole email or phone exactly, newest first, not those that merely contain it", async () => {
    const p = await t.provider();
    const other = await t.provider();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const email = `dana.${tag}@example.com`;
    const phone = `(617) 55${String(Date.now() % 100_000).padStart(5, "0")}`;
    const create = async (auth: string, body: Json) => {
      const r = await t.call("POST", "/api/v1/public/leads/", { auth, body: leadBody(body) });
      expect(r.status, await r.clone().text()).toBe(201);
      return ((await r.json()) as Json).id as number;
    };
    const first = await create(p.key, { external_id: `whole-1-${tag}`, email: email.toUpperCase() });
    const second = await create(other.key, { external_id: `whole-2-${tag}`, email, phone_number: phone });
    // Contains the whole email, and the phone's digits within a longer external id: not the customer.
    await create(p.key, { external_id: `1${phone.replace(/\D/g, "")}9-${tag}`, email: `big${email}` });
    const db = t.app.database.db;
    const ids = async (q: string, providerId?: number) =>
      (await searchLeads(db, { q, providerId }, 5)).map((l) => l.id);
    expect(await ids(` Dana.${tag}@Example.COM `)).toEqual([second, first]);
    expect(await ids(email, p.id)).toEqual([first]);
    const digits = phone.replace(/\D/g, "");
    for (const q of [phone, digits, `+1 ${digits}`, `1-${digits.slice(0, 3)}-${digits.slice(3, 6)}-${digits.slice(6)}`])
      expect(await ids(q), q).toEqual([second]);
    // Part of an email or phone is still a substring search.
    expect(await ids(`${tag}@example`)).toHaveLength(3);
    expect((await ids(digits.slice(2))).length).toBe(2);
  });

  it("finds a run of digits in any field through the digit index, exactly, page after page", async () => {
    const p = await t.provider();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    // Seven digits nobody else here has, and five shared by ten leads.
    const seven = `9${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
    const five = seven.slice(1, 6);
    const create = async (body: Json) => {
      const r = await t.call("POST", "/api/v1/public/leads/", { auth: p.key, body: leadBody(body) });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()) as Json;
    };
    const inEmail = await create({ external_id: `e-${tag}`, email: `z.${seven}@example.com` });
    const inId = await create({ external_id: `crm-${seven}-${tag}` });
    // All of the seven digits' 5-grams, but in two runs: not the term.
    const split = await create({ external_id: `${seven.slice(0, 6)}-${seven.slice(1)}-${tag}` });
    const shared: number[] = [];
    for (let i = 0; i < 10; i++) shared.push((await create({ external_id: `s${i}x${five}-${tag}` })).id);
    const db = t.app.database.db;
    const ids = async (q: string, window?: number, beforeId?: number) =>
      (await searchLeads(db, { q, providerId: p.id, beforeId }, 4, window)).map((l) => l.id);
    expect(await ids(seven)).toEqual([inId.id, inEmail.id]);
    expect(await ids(`Z.${seven}@EXAMPLE`)).toEqual([inEmail.id]);
    expect(await ids(`crm-${seven}`)).toEqual([inId.id]);
    // A split run's second run is found, the whole seven digits are not.
    expect(await ids(seven.slice(2))).toContain(split.id);
    expect(await ids(seven)).not.toContain(split.id);
    // Five digits: the newest leads first, the digit index for the rest; every page in order.
    const expected = [...shared].reverse().concat([split.id, inId.id, inEmail.id]);
    for (const window of [2, 6, 1000]) {
      const seen: number[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await ids(five, window, before);
        seen.push(...page);
        if (page.length < 4) break;
        before = page.at(-1);
      }
      expect(seen, `window ${window}`).toEqual(expected);
    }
  });

  it("still finds an external id that reads as a phone or an email, and a partial email that reads as whole", async () => {
    const p = await t.provider();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    // Ten digits shaped as a North American number nobody here has: a CRM's numeric id.
    const seconds = `646555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    const create = async (body: Json) => {
      const r = await t.call("POST", "/api/v1/public/leads/", { auth: p.key, body: leadBody(body) });
      expect(r.status, await r.clone().text()).toBe(201);
      return ((await r.json()) as Json).id as number;
    };
    const numeric = await create({ external_id: seconds, email: `n.${tag}@example.com` });
    const mailId = await create({ external_id: `Order.${tag}@crm.example`, email: `m.${tag}@example.com` });
    const ann = await create({ external_id: `ann-${tag}`, email: `ann.${tag}@gmail.com` });
    const db = t.app.database.db;
    const ids = async (q: string) => (await searchLeads(db, { q, providerId: p.id }, 5)).map((l) => l.id);
    // A 10-digit id: no such phone, so the id as typed (and as a substring, before).
    expect(await ids(seconds)).toEqual([numeric]);
    expect(await ids(`Order.${tag}@crm.example`)).toEqual([mailId]);
    // An email cut short that still reads as an address: nobody has it exactly, so a substring.
    expect(await ids(`ann.${tag}@gmail.co`)).toEqual([ann]);
    expect(await ids(`${tag}@gmail.com`)).toEqual([ann]);
  });

  it("finds a whole order number, external id or first and last name exactly, not those that merely contain it", async () => {
    const p = await t.provider();
    const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const create = async (body: Json) => {
      const r = await t.call("POST", "/api/v1/public/leads/", { auth: p.key, body: leadBody(body) });
      expect(r.status, await r.clone().text()).toBe(201);
      return (await r.json()) as Json;
    };
    // A surname of letters only (a name has no digit).
    const surname = `Q${tag.replace(/\d/g, (d) => "abcdefghij"[Number(d)] as string)}`;
    const exact = await create({ external_id: `crm-${tag}-7`, first_name: "Wren", last_name: surname });
    const longer = await create({ external_id: `crm-${tag}-77`, first_name: "Wren", last_name: `${surname}son` });
    const db = t.app.database.db;
    const ids = async (q: string) => (await searchLeads(db, { q, providerId: p.id }, 5)).map((l) => l.id);
    // The order number in any case, the external id as typed: that lead only.
    expect(await ids(exact.order_number.toLowerCase())).toEqual([exact.id]);
    expect(await ids(`crm-${tag}-7`)).toEqual([exact.id]);
    // A whole name: that customer; a name nobody has whole is a substring like any other.
    expect(await ids(`wren ${surname.toLowerCase()}`)).toEqual([exact.id]);
    expect(await ids(`WREN  ${surname.toUpperCase()}SON`)).toEqual([longer.id]);
    expect(await ids(`ren ${surname}`)).toEqual([longer.id, exact.id]);
    // Part of an external id is a substring: both.
    expect(await ids(`crm-${tag}`)).toEqual([longer.id, exact.id]);
  });

  it("reads a first and last name only from words without digits or @", () => {
    expect(wholeName("james smith")).toEqual({ first: "james", last: "smith" });
    expect(wholeName("mary ann  de la cruz")).toEqual({ first: "mary", last: "ann de la cruz" });
    expect(wholeName("smith")).toBeNull();
    expect(wholeName("james smith1")).toBeNull();
    expect(wholeName("james@smith")).toBeNull();
  });

  it("reads only North American numbers as whole phones", () => {
    expect(wholeContact("6465550142")).toEqual({ phoneE164: "+16465550142" });
    expect(wholeContact("16465550142")).toEqual({ phoneE164: "+16465550142" });
    expect(wholeContact("0123456789")).toBeNull(); // no area code starts with 0 or 1
    expect(wholeContact("6461550142")).toBeNull(); // nor an exchange
    expect(wholeContact("26465550142")).toBeNull();
    expect(wholeContact("ann@gmail.com")).toEqual({ email: "ann@gmail.com" });
    expect(wholeContact("ann@gmail")).toBeNull();
  });
});
