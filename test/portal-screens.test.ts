/**
 * What the portal's screens read beyond the Public API's answers (docs/portal.md): the lead search
 * (`q`) and the sub-source filter held to the session's provider and mode, the stats' billable
 * count, acceptance rate and CSV totals row, a resend counted nowhere, and a refusal that names
 * the rule of the rule table that failed — over HTTP against the real service.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

const PASSWORD = "violet tundra harbor 87 quay";

for (const backend of BACKENDS) {
  describe(`portal screens API (${backend.name})`, () => {
    let t: TestApp;
    let admin: string;
    let a: { id: number; key: string };
    let b: { id: number; key: string };
    let cookie: string;
    let testKey: string;

    const portal = (path: string, headers: Record<string, string> = {}) =>
      t.call("GET", `/api/v1/portal/${path}`, { headers: { origin: t.url, cookie, ...headers } });
    const create = (key: string, body: Json) => t.call("POST", "/api/v1/public/leads/", { auth: key, body });

    beforeAll(async () => {
      t = await startTestApp(backend);
      admin = await t.token();
      a = await t.provider(`Screens A ${backend.name} ${Date.now()}`);
      b = await t.provider(`Screens B ${backend.name} ${Date.now()}`);
      const email = `screens.${Date.now()}@${backend.name}.example`;
      const invited = await t.call("POST", `/api/v1/lead_providers/${a.id}/portal_users/`, {
        auth: admin,
        body: { email, name: "Dana Ruiz" },
      });
      const token = String(((await invited.json()) as Json).invite_url).split("#invite=")[1];
      const headers = { origin: t.url };
      await t.call("POST", "/api/v1/portal/invite/accept/", { body: { token, password: PASSWORD }, headers });
      const signed = await t.call("POST", "/api/v1/portal/sign_in/", { body: { email, password: PASSWORD }, headers });
      cookie = (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      const issued = await t.call("POST", `/api/v1/lead_providers/${a.id}/generate_api_key/`, {
        auth: admin,
        body: { mode: "test" },
      });
      testKey = ((await issued.json()) as Json).api_key;
    });
    afterAll(() => t?.stop());

    it("searches the provider's own leads of one mode by a phone fragment, never another provider's", async () => {
      const phone = "+1 (415) 555-0175";
      const mine = leadBody({ phone_number: phone, sub_id: "fb-spring", email: "ann.lee@example.com" });
      const other = leadBody({ phone_number: phone, first_name: "Other", email: "other@example.com" });
      const test = leadBody({ phone_number: phone, first_name: "Testy", email: "testy@example.com" });
      const unrelated = leadBody({ phone_number: "+1 (212) 555-0187", sub_id: "fb-spring", email: "x@example.com" });
      for (const [key, body] of [
        [a.key, mine],
        [b.key, other],
        [testKey, test],
        [a.key, unrelated],
      ] as const) {
        expect((await create(key, body)).status).toBe(201);
      }
      for (const q of ["555-0175", "4155550175", "(415) 555", "0175"]) {
        const page = (await (await portal(`leads/?q=${encodeURIComponent(q)}`)).json()) as Json;
        // "0175" is under 5 digits but 4 characters: a substring of the search text, still held to A's live leads.
        expect(
          page.results.map((l: Json) => l.external_id),
          q,
        ).toEqual([mine.external_id]);
      }
      const inTest = (await (await portal("leads/?mode=test&q=555-0175")).json()) as Json;
      expect(inTest.results.map((l: Json) => l.external_id)).toEqual([test.external_id]);
      // B's lead is not found by its own external id either.
      const byId = (await (await portal(`leads/?q=${encodeURIComponent(String(other.external_id))}`)).json()) as Json;
      expect(byId.results).toEqual([]);

      const bySub = (await (await portal("leads/?sub_id=fb-spring")).json()) as Json;
      expect(bySub.results.map((l: Json) => l.external_id).sort()).toEqual(
        [mine.external_id, unrelated.external_id].sort(),
      );
      expect(bySub.results.every((l: Json) => l.sub_id === "fb-spring")).toBe(true);
      const both = (await (await portal("leads/?sub_id=fb-spring&q=Jane")).json()) as Json;
      expect(both.results.map((l: Json) => l.external_id).sort()).toEqual(
        [mine.external_id, unrelated.external_id].sort(),
      );
    });

    it("answers a bad sub_id or a q with updated_after with 400 naming the field, never 500", async () => {
      const bad = await portal("leads/?sub_id=%20%3Cx%3E");
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await bad.json())).toContain("sub_id");
      const mixed = await portal("leads/?q=jane&updated_after=2026-01-01T00:00:00Z");
      expect(mixed.status).toBe(400);
      expect(JSON.stringify(await mixed.json())).toContain("updated_after");
    });

    it("counts billable leads and the acceptance rate, and the CSV carries them with a totals row", async () => {
      const p = await t.provider(`Screens stats ${backend.name} ${Date.now()}`);
      const phone = "+1 (646) 555-0133";
      const email = (n: number) => `stats${n}.${backend.name}.${p.id}@example.com`;
      expect((await create(p.key, leadBody({ phone_number: phone, email: email(1), sub_id: "s1" }))).status).toBe(201);
      // The same phone again: accepted, flagged as a duplicate, not billable.
      expect((await create(p.key, leadBody({ phone_number: phone, email: email(2), sub_id: "s1" }))).status).toBe(201);
      const third = leadBody({ phone_number: "+1 (646) 555-0134", email: email(3), sub_id: "s2" });
      expect((await create(p.key, third)).status).toBe(201);
      const refused = leadBody({ origin_zip: "00000" });
      expect((await create(p.key, refused)).status).toBe(400);
      // A resend of a stored lead is answered duplicate_external_id and counted nowhere.
      const stored = leadBody({ phone_number: "+1 (646) 555-0135", email: email(4) });
      expect((await create(p.key, stored)).status).toBe(201);
      const resend = await create(p.key, stored);
      expect(resend.status).toBe(400);
      expect(((await resend.json()) as Json).code).toBe("duplicate_external_id");
      await t.app.requestLog?.flush();

      const stats = (await (await t.call("GET", "/api/v1/public/stats/", { auth: p.key })).json()) as Json;
      expect(stats.totals).toMatchObject({ submitted: 5, accepted: 4, duplicates: 1, billable: 3 });
      expect(stats.totals.acceptance_rate).toBe(0.8);
      expect(stats.totals.rejected.duplicate_external_id).toBeUndefined();

      const csv = await t.call("GET", "/api/v1/public/stats/?group_by=sub_id&totals=true", {
        auth: p.key,
        headers: { accept: "text/csv" },
      });
      const rows = (await csv.text())
        .trimEnd()
        .split("\r\n")
        .map((r) => r.split(","));
      const header = rows[0] ?? [];
      // The columns readers already had come first, in their order.
      expect(header.slice(0, 6)).toEqual([
        "period",
        "sub_id",
        "submitted",
        "accepted",
        "rejected",
        "rejected_invalid_zip",
      ]);
      expect(header.slice(-4)).toEqual(["returned", "return_rate", "billable", "acceptance_rate"]);
      const col = (row: string[] | undefined, name: string) => row?.[header.indexOf(name)];
      const total = rows.at(-1);
      expect(total?.[0]).toBe("total");
      expect(col(total, "submitted")).toBe("5");
      expect(col(total, "billable")).toBe("3");
      expect(col(total, "acceptance_rate")).toBe("0.8");
      const s1 = rows.find((r) => r[1] === "s1");
      expect([col(s1, "accepted"), col(s1, "duplicates"), col(s1, "billable")]).toEqual(["2", "1", "1"]);

      // Without totals=true the CSV is what it was: no total row.
      const plain = await t.call("GET", "/api/v1/public/stats/", { auth: p.key, headers: { accept: "text/csv" } });
      expect(await plain.text()).not.toContain("\r\ntotal,");
    });

    it("records which rule refused a lead, in the portal's request log entry", async () => {
      const p = await t.provider(`Screens rules ${backend.name} ${Date.now()}`);
      const set = await t.call("PUT", `/api/v1/lead_providers/${p.id}/intake_rules/`, {
        auth: admin,
        body: { origin_states: ["NY"], max_vehicles: 1 },
      });
      expect(set.status).toBe(200);
      const res = await create(p.key, leadBody({ origin_zip: "73301" }));
      expect(res.status).toBe(400);
      const requestId = res.headers.get("x-request-id");
      await t.app.requestLog?.flush();
      const entry = (await (
        await t.call("GET", `/api/v1/public/requests/${requestId}/`, { auth: p.key })
      ).json()) as Json;
      expect(entry.code).toBe("outside_criteria");
      expect(entry.errors).toEqual([
        expect.objectContaining({
          field: "origin_zip",
          code: "origin_state_not_accepted",
          message: expect.stringContaining("TX"),
        }),
      ]);
    });
  });
}
