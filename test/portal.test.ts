/**
 * The provider portal's API (docs/portal.md) against the real service: invites, passwords, sessions in
 * a `__Host-` cookie, same-origin writes, sign-in throttling, TOTP, and a provider's people seeing
 * only their own provider — over HTTP, plus the administrators' operations over gRPC.
 */
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { sql } from "kysely";
import { generate as totpCode } from "otplib";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderService } from "../generated/proto/leadprovider/v1/provider_service_pb.ts";
import { createLogger } from "../src/logger.ts";
import { type Json, leadBody, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";
import { startReceiver } from "./helpers/receiver.ts";

const PASSWORD = "violet tundra harbor 87 quay";

for (const backend of BACKENDS) {
  describe(`provider portal API (${backend.name})`, () => {
    let t: TestApp;
    let admin: string;
    let origin: string;
    const logs: string[] = [];
    let providerA: { id: number; key: string };
    let providerB: { id: number; key: string };
    /** The service's clock: sign-in failures are counted per minute of it. */
    const clock = minuteClock();

    beforeAll(async () => {
      const sink = new Writable({
        write(chunk, _enc, done) {
          logs.push(String(chunk));
          done();
        },
      });
      t = await startTestApp(backend, {}, { logger: createLogger("debug", sink), now: clock });
      admin = await t.token();
      origin = t.url;
      providerA = await t.provider(`Portal A ${backend.name} ${Date.now()}`);
      providerB = await t.provider(`Portal B ${backend.name} ${Date.now()}`);
    });
    afterAll(() => t?.stop());

    /** A call from the portal's own pages: the service's Origin, and the session cookie if given. */
    const portal = (
      method: string,
      path: string,
      cookie?: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) =>
      t.call(method, `/api/v1/portal/${path}`, {
        ...(body !== undefined && { body }),
        headers: { origin, ...(cookie && { cookie }), ...headers },
      });

    let emails = 0;
    async function invite(
      providerId: number,
      name = "Dana Ruiz",
    ): Promise<{ token: string; body: Json; email: string }> {
      emails += 1;
      const email = `person${emails}.${Date.now()}@${backend.name}.example`;
      const res = await t.call("POST", `/api/v1/lead_providers/${providerId}/portal_users/`, {
        auth: admin,
        body: { email, name },
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Json;
      const token = String(body.invite_url).split("#invite=")[1] ?? "";
      return { token, body, email };
    }

    async function signIn(email: string, password = PASSWORD, extra: Json = {}) {
      const res = await portal("POST", "sign_in/", undefined, { email, password, ...extra });
      const setCookie = res.headers.get("set-cookie") ?? "";
      return { res, setCookie, cookie: setCookie.split(";")[0] ?? "" };
    }

    async function activeUser(providerId: number) {
      const { token, email, body } = await invite(providerId);
      expect((await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD })).status).toBe(200);
      const { cookie } = await signIn(email);
      return { email, cookie, userId: body.user.id as number };
    }

    it("invites a person: a 72-hour link whose token only the fragment carries, listed as invited, audited", async () => {
      const before = Date.now();
      const { body, token, email } = await invite(providerA.id);
      expect(body.user).toMatchObject({ email, name: "Dana Ruiz", status: "invited", second_factor: false });
      expect(body.invite_url).toMatch(new RegExp(`^${origin}/portal/#invite=[A-Za-z0-9_-]{43}$`));
      expect(body.emailed).toBe(false);
      const ttl = Date.parse(body.invite_expires_at) - before;
      expect(ttl).toBeGreaterThan(72 * 3600_000 - 60_000);
      expect(ttl).toBeLessThan(72 * 3600_000 + 60_000);

      const list = (await (
        await t.call("GET", `/api/v1/lead_providers/${providerA.id}/portal_users/`, { auth: admin })
      ).json()) as Json;
      expect(list.results.map((u: Json) => [u.email, u.status])).toContainEqual([email, "invited"]);

      const info = await portal("POST", "invite/", undefined, { token });
      expect(info.status).toBe(200);
      expect(await info.json()).toMatchObject({
        email,
        name: "Dana Ruiz",
        provider_name: expect.stringContaining("Portal A"),
      });

      // Unique across providers, in any case.
      const again = await t.call("POST", `/api/v1/lead_providers/${providerB.id}/portal_users/`, {
        auth: admin,
        body: { email: email.toUpperCase(), name: "Someone Else" },
      });
      expect(again.status).toBe(400);
      expect(((await again.json()) as Json).code).toBe("duplicate_portal_user_email");

      const audit = (await (
        await t.call("GET", `/api/v1/admin/audit_log/?provider_id=${providerA.id}`, { auth: admin })
      ).json()) as Json;
      expect(audit.results.map((e: Json) => e.action)).toContain("portal_user.invited");
      expect(JSON.stringify(audit)).not.toContain(token);
    });

    it("refuses a weak password, then a used, replaced or expired invite", async () => {
      const { token, email, body } = await invite(providerA.id, "Morgan Weak");
      for (const weak of ["short1!", "password1234", `${email}`, "Summer2026!!!!", "x".repeat(300)]) {
        const res = await portal("POST", "invite/accept/", undefined, { token, password: weak });
        expect(res.status, weak).toBe(400);
        const problem = (await res.json()) as Json;
        expect(problem.code === "weak_password" || problem.code === "validation_error", weak).toBe(true);
        expect(problem.errors[0].field).toBe("password");
      }
      expect((await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD })).status).toBe(200);
      const used = await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD });
      expect(used.status).toBe(404);
      expect(((await used.json()) as Json).code).toBe("invite_invalid");

      // A fresh invite replaces the previous link.
      const first = await invite(providerA.id, "Riley Replaced");
      const reissued = await t.call(
        "POST",
        `/api/v1/lead_providers/${providerA.id}/portal_users/${first.body.user.id}/invite/`,
        { auth: admin },
      );
      expect(reissued.status).toBe(200);
      expect((await portal("POST", "invite/", undefined, { token: first.token })).status).toBe(404);
      const fresh = String(((await reissued.json()) as Json).invite_url).split("#invite=")[1];
      expect((await portal("POST", "invite/", undefined, { token: fresh })).status).toBe(200);

      // An expired one (moved 73 hours back in the database).
      const late = await invite(providerA.id, "Casey Late");
      await sql`update portal_users set invite_expires_at = now() - interval '1 hour' where id = ${late.body.user.id}`.execute(
        t.app.database.db,
      );
      const expired = await portal("POST", "invite/accept/", undefined, { token: late.token, password: PASSWORD });
      expect(expired.status).toBe(404);
      expect(((await expired.json()) as Json).code).toBe("invite_invalid");
      expect(body.user.id).toBeGreaterThan(0);
    });

    it("signs in with a __Host- cookie (HttpOnly, Secure, SameSite=Strict, Path=/, no Domain); sign-out ends it", async () => {
      const { token, email } = await invite(providerA.id);
      await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD });
      const { res, setCookie, cookie } = await signIn(email);
      expect(res.status).toBe(200);
      expect(setCookie).toMatch(/^__Host-portal=[A-Za-z0-9_-]{43};/);
      const attributes = setCookie.split(";").map((a) => a.trim().toLowerCase());
      expect(attributes).toEqual(expect.arrayContaining(["path=/", "httponly", "secure", "samesite=strict"]));
      expect(attributes.some((a) => a.startsWith("domain"))).toBe(false);
      expect(attributes.find((a) => a.startsWith("max-age="))).toBe("max-age=604800");

      const me = await portal("GET", "me/", cookie);
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({
        user: { email, status: "active" },
        provider: { name: expect.stringContaining("Portal A") },
      });

      // Rotated at sign-in: a second sign-in from the same browser ends the first session.
      const second = await portal("POST", "sign_in/", cookie, { email, password: PASSWORD });
      const rotated = (second.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      expect(rotated).not.toBe(cookie);
      expect((await portal("GET", "me/", cookie)).status).toBe(401);

      const out = await portal("POST", "sign_out/", rotated);
      expect(out.status).toBe(204);
      expect(out.headers.get("set-cookie")).toMatch(/^__Host-portal=;.*Max-Age=0/i);
      const after = await portal("GET", "me/", rotated);
      expect(after.status).toBe(401);
      expect(((await after.json()) as Json).code).toBe("session_required");
    });

    it("refuses a change from another origin or with no Origin, and API keys and admin JWTs on every portal route", async () => {
      const { cookie } = await activeUser(providerA.id);
      for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }]) {
        const res = await t.call("PUT", "/api/v1/portal/webhook/", {
          body: { webhook_url: null },
          headers: { ...headers, cookie },
        });
        expect(res.status).toBe(403);
        expect(((await res.json()) as Json).code).toBe("cross_origin_refused");
      }
      const bare = await t.call("POST", "/api/v1/portal/keys/test/", { headers: { cookie } });
      expect(bare.status).toBe(403);
      const signInElsewhere = await t.call("POST", "/api/v1/portal/sign_in/", {
        body: { email: "x@example.com", password: PASSWORD },
        headers: { origin: "https://evil.example" },
      });
      expect(signInElsewhere.status).toBe(403);

      for (const credential of [providerA.key, admin]) {
        for (const path of ["me/", "leads/", "requests/", "stats/", "webhook/", "keys/", "intake_rules/"]) {
          const res = await t.call("GET", `/api/v1/portal/${path}`, { auth: credential });
          expect(res.status, path).toBe(401);
          expect(((await res.json()) as Json).code).toBe("session_required");
        }
        // Not even next to a valid session.
        const both = await t.call("GET", "/api/v1/portal/me/", { auth: credential, headers: { cookie } });
        expect(both.status).toBe(401);
      }
    });

    it("shows only the user's own provider: another provider's lead, request and delivery ids are 404, like ids that do not exist", async () => {
      const receiver = await startReceiver();
      try {
        const { cookie } = await activeUser(providerA.id);
        // Each provider has a lead, a request and a delivery.
        const ids: Record<string, { externalId: string; requestId: string; deliveryId: number }> = {};
        for (const [name, p] of [
          ["A", providerA],
          ["B", providerB],
        ] as const) {
          await t.call("PATCH", `/api/v1/lead_providers/${p.id}/`, {
            auth: admin,
            body: { webhook_url: receiver.url },
          });
          const body = leadBody();
          const created = await t.call("POST", "/api/v1/public/leads/", { auth: p.key, body });
          expect(created.status).toBe(201);
          const leadId = ((await created.json()) as Json).id;
          await receiver.waitFor(() => receiver.ofType("lead.created", leadId).length > 0, 10_000, "lead.created");
          const deliveries = (await (
            await t.call("GET", `/api/v1/lead_providers/${p.id}/webhook_deliveries/`, { auth: admin })
          ).json()) as Json;
          ids[name] = {
            externalId: String(body.external_id),
            requestId: String(created.headers.get("x-request-id")),
            deliveryId: deliveries.results[0].id,
          };
        }
        await t.app.requestLog?.flush();
        const a = ids.A as (typeof ids)["A"];
        const b = ids.B as (typeof ids)["A"];

        const leads = (await (await portal("GET", "leads/", cookie)).json()) as Json;
        expect(leads.results.map((l: Json) => l.external_id)).toContain(a.externalId);
        expect(leads.results.map((l: Json) => l.external_id)).not.toContain(b.externalId);
        expect((await portal("GET", `leads/${a.externalId}/`, cookie)).status).toBe(200);
        expect((await portal("GET", `requests/${a.requestId}/`, cookie)).status).toBe(200);
        expect((await portal("GET", `webhook/deliveries/${a.deliveryId}/`, cookie)).status).toBe(200);

        const pairs: [string, string, string][] = [
          [`leads/${b.externalId}/`, "leads/no-such-lead/", "lead_not_found"],
          [`requests/${b.requestId}/`, "requests/00000000-0000-4000-8000-000000000000/", "request_not_found"],
          [`webhook/deliveries/${b.deliveryId}/`, "webhook/deliveries/999999999/", "delivery_not_found"],
        ];
        for (const [theirs, none, code] of pairs) {
          const [x, y] = [await portal("GET", theirs, cookie), await portal("GET", none, cookie)];
          expect([x.status, y.status], theirs).toEqual([404, 404]);
          const [px, py] = [(await x.json()) as Json, (await y.json()) as Json];
          expect([px.code, py.code]).toEqual([code, code]);
          expect(Object.keys(px).sort()).toEqual(Object.keys(py).sort());
        }
        const replay = await portal("POST", `webhook/deliveries/${b.deliveryId}/replay/`, cookie);
        expect(replay.status).toBe(404);
        const stats = (await (await portal("GET", "stats/", cookie)).json()) as Json;
        expect(stats.totals.submitted).toBe(1);
      } finally {
        await receiver.close();
      }
    });

    it("sets the webhook URL, sends a test event the receiver verifies with the shown secret, issues a test key that creates a test lead", async () => {
      const receiver = await startReceiver();
      try {
        const { cookie } = await activeUser(providerB.id);
        const set = await portal("PUT", "webhook/", cookie, { webhook_url: receiver.url });
        expect(set.status).toBe(200);
        const endpoint = (await set.json()) as Json;
        expect(endpoint.url).toBe(receiver.url);
        const sent = (await (await portal("POST", "webhook/test/", cookie)).json()) as Json;
        expect(sent).toMatchObject({ delivered: true, status_code: 204 });
        const got = receiver.ofType("webhook.test")[0];
        expect(got).toBeDefined();
        const verified = new Webhook(endpoint.secret).verify(got?.body ?? "", got?.headers ?? {}) as Json;
        expect(verified.type).toBe("webhook.test");
        expect(got?.headers["webhook-id"]).toBe(sent.event_id);

        const bad = await portal("PUT", "webhook/", cookie, { webhook_url: "ftp://example.com/x" });
        expect(bad.status).toBe(400);
        expect(((await bad.json()) as Json).errors[0].field).toBe("webhook_url");

        const keys = (await (await portal("GET", "keys/", cookie)).json()) as Json;
        expect(keys.live.masked).toMatch(/^lp_live_/);
        expect(JSON.stringify(keys)).not.toContain(providerB.key);
        const issued = await portal("POST", "keys/test/", cookie);
        expect(issued.status).toBe(201);
        const testKey = String(((await issued.json()) as Json).api_key);
        expect(testKey).toMatch(/^lp_test_/);
        expect(((await (await portal("GET", "keys/test/", cookie)).json()) as Json).api_key).toBe(testKey);
        const lead = leadBody();
        expect((await t.call("POST", "/api/v1/public/leads/", { auth: testKey, body: lead })).status).toBe(201);
        const testLeads = (await (await portal("GET", "leads/?mode=test", cookie)).json()) as Json;
        expect(testLeads.results.map((l: Json) => [l.external_id, l.livemode])).toContainEqual([
          lead.external_id,
          false,
        ]);
        const liveLeads = (await (await portal("GET", "leads/", cookie)).json()) as Json;
        expect(liveLeads.results.map((l: Json) => l.external_id)).not.toContain(lead.external_id);
      } finally {
        await receiver.close();
      }
    });

    it("ends a disabled user's open session at once, and it cannot sign in again", async () => {
      const { cookie, email, userId } = await activeUser(providerA.id);
      expect((await portal("GET", "me/", cookie)).status).toBe(200);
      const disabled = await t.call("POST", `/api/v1/lead_providers/${providerA.id}/portal_users/${userId}/disable/`, {
        auth: admin,
      });
      expect(disabled.status).toBe(200);
      expect(((await disabled.json()) as Json).status).toBe("disabled");
      expect((await portal("GET", "leads/", cookie)).status).toBe(401);
      const again = await signIn(email);
      expect(again.res.status).toBe(401);
      expect(((await again.res.json()) as Json).detail).toBe("email or password is incorrect");
      // Another provider's id in the path is not found.
      const wrong = await t.call("POST", `/api/v1/lead_providers/${providerB.id}/portal_users/${userId}/disable/`, {
        auth: admin,
      });
      expect(wrong.status).toBe(404);
    });

    it("throttles after 5 wrong passwords with one message, whether or not the email exists", async () => {
      const { email } = await activeUser(providerA.id);
      clock.nextMinute(); // the 14 wrong passwords and the right one in one minute, however slow argon2 is
      const ghost = `ghost.${Date.now()}@nowhere.example`;
      const answers: Record<string, { status: number; body: Json }[]> = { real: [], ghost: [] };
      for (const [who, address] of [
        ["real", email],
        ["ghost", ghost],
      ] as const) {
        for (let i = 0; i < 7; i++) {
          const { res } = await signIn(address, `wrong password number ${i} xyz`);
          answers[who]?.push({ status: res.status, body: (await res.json()) as Json });
        }
      }
      const shape = (a: { status: number; body: Json }) => [
        a.status,
        a.body.code,
        a.body.detail?.replace(/\d+ s$/, "N s"),
      ];
      expect(answers.real?.map(shape)).toEqual(answers.ghost?.map(shape));
      expect(answers.real?.slice(0, 5).map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
      expect(answers.real?.[0]?.body.detail).toBe("email or password is incorrect");
      expect(answers.real?.slice(5).map((a) => a.status)).toEqual([429, 429]);
      // Throttled means throttled: the right password is refused too until the minute ends.
      expect((await signIn(email)).res.status).toBe(429);
    });

    it("keeps passwords out of the database and the logs", async () => {
      const { email } = await activeUser(providerA.id);
      const row = await sql<{
        password_hash: string;
      }>`select password_hash from portal_users where email = ${email}`.execute(t.app.database.db);
      expect(row.rows[0]?.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      const users = await sql`select * from portal_users`.execute(t.app.database.db);
      const audit = await sql`select actor, details from audit_log`.execute(t.app.database.db);
      expect(JSON.stringify([users.rows, audit.rows])).not.toContain(PASSWORD);
      const sessions = await sql<{ digest: string }>`select digest from portal_sessions`.execute(t.app.database.db);
      expect(sessions.rows.every((s) => /^[0-9a-f]{64}$/.test(s.digest))).toBe(true);
      expect(logs.length).toBeGreaterThan(0);
      expect(logs.join("\n")).not.toContain(PASSWORD);
      expect(logs.join("\n")).not.toMatch(/__Host-portal=[A-Za-z0-9_-]{10}/);
    });

    it("a TOTP second factor: set up with a current code, asked for at sign-in, each code once, not replaceable by a session, removed by a fresh invite", async () => {
      const { cookie, email, userId } = await activeUser(providerA.id);
      const setup = (await (await portal("POST", "me/second_factor/", cookie)).json()) as Json;
      expect(setup.otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
      const wrong = await portal("POST", "me/second_factor/confirm/", cookie, { totp_code: "000000" });
      expect(wrong.status).toBe(400);
      const ok = await portal("POST", "me/second_factor/confirm/", cookie, {
        // Codes by the service's clock (minuteClock runs ahead of real time), as an app in step with it.
        totp_code: await totpCode({ secret: setup.secret, epoch: Math.floor(clock().getTime() / 1000) }),
      });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Json).second_factor).toBe(true);

      // A session cannot swap the factor for one of its own.
      const swap = await portal("POST", "me/second_factor/", cookie);
      expect(swap.status).toBe(409);
      expect(((await swap.json()) as Json).code).toBe("second_factor_already_on");

      const withoutCode = await signIn(email);
      expect(withoutCode.res.status).toBe(401);
      expect(((await withoutCode.res.json()) as Json).code).toBe("second_factor_required");
      const badCode = await signIn(email, PASSWORD, { totp_code: "000000" });
      expect(badCode.res.status).toBe(401);
      expect(((await badCode.res.json()) as Json).code).toBe("invalid_totp_code");
      // The next step's code (the confirmation used this one), typed as apps show it: "123 456".
      const next = await totpCode({ secret: setup.secret, epoch: Math.floor(clock().getTime() / 1000) + 30 });
      const withCode = await signIn(email, PASSWORD, { totp_code: `${next.slice(0, 3)} ${next.slice(3)}` });
      expect(withCode.res.status).toBe(200);
      // The same code again is refused: a code works once.
      const replayed = await signIn(email, PASSWORD, { totp_code: next });
      expect(replayed.res.status).toBe(401);
      expect(((await replayed.res.json()) as Json).code).toBe("invalid_totp_code");

      // Lost the authenticator: an administrator's fresh invite removes the factor with the password.
      const reissued = (await (
        await t.call("POST", `/api/v1/lead_providers/${providerA.id}/portal_users/${userId}/invite/`, { auth: admin })
      ).json()) as Json;
      expect(reissued.user.second_factor).toBe(false);
      const fresh = String(reissued.invite_url).split("#invite=")[1];
      expect((await portal("POST", "invite/accept/", undefined, { token: fresh, password: PASSWORD })).status).toBe(
        200,
      );
      expect((await signIn(email)).res.status).toBe(200);
    });

    it("administrators manage portal users over gRPC too", async () => {
      const client = createClient(ProviderService, createGrpcTransport({ baseUrl: t.url }));
      const headers = { authorization: `Bearer ${admin}` };
      const email = `grpc.${Date.now()}@${backend.name}.example`;
      const invited = await client.invitePortalUser(
        { id: BigInt(providerB.id), email, name: "Grpc Person" },
        { headers },
      );
      expect(invited.user?.status).toBe("invited");
      expect(invited.inviteUrl).toMatch(/\/portal\/#invite=/);
      const listed = await client.listPortalUsers({ id: BigInt(providerB.id) }, { headers });
      expect(listed.users.map((u) => u.email)).toContain(email);
      const reissued = await client.reissuePortalInvite(
        { id: BigInt(providerB.id), userId: invited.user?.id ?? 0n },
        { headers },
      );
      expect(reissued.inviteUrl).not.toBe(invited.inviteUrl);
      const disabled = await client.disablePortalUser(
        { id: BigInt(providerB.id), userId: invited.user?.id ?? 0n },
        { headers },
      );
      expect(disabled.user?.status).toBe("disabled");
    });
  });
}

describe("provider portal with PORTAL_REQUIRE_2FA", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { PORTAL_REQUIRE_2FA: "true" });
  });
  afterAll(() => t?.stop());

  it("opens nothing but the second factor's set-up until it is confirmed", async () => {
    const admin = await t.token();
    const p = await t.provider("Two factor provider");
    const invited = (await (
      await t.call("POST", `/api/v1/lead_providers/${p.id}/portal_users/`, {
        auth: admin,
        body: { email: "tf@example.com", name: "Two Factor" },
      })
    ).json()) as Json;
    const token = String(invited.invite_url).split("#invite=")[1];
    const headers = { origin: t.url };
    const info = (await (await t.call("POST", "/api/v1/portal/invite/", { body: { token }, headers })).json()) as Json;
    expect(info.second_factor_required).toBe(true);
    await t.call("POST", "/api/v1/portal/invite/accept/", { body: { token, password: PASSWORD }, headers });
    const signed = await t.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: "tf@example.com", password: PASSWORD },
      headers,
    });
    const cookie = (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const leads = await t.call("GET", "/api/v1/portal/leads/", { headers: { cookie } });
    expect(leads.status).toBe(403);
    expect(((await leads.json()) as Json).code).toBe("second_factor_required");
    const me = (await (await t.call("GET", "/api/v1/portal/me/", { headers: { cookie } })).json()) as Json;
    expect(me.second_factor_required).toBe(true);
    const setup = (await (
      await t.call("POST", "/api/v1/portal/me/second_factor/", { headers: { ...headers, cookie } })
    ).json()) as Json;
    await t.call("POST", "/api/v1/portal/me/second_factor/confirm/", {
      body: { totp_code: await totpCode({ secret: setup.secret }) },
      headers: { ...headers, cookie },
    });
    expect((await t.call("GET", "/api/v1/portal/leads/", { headers: { cookie } })).status).toBe(200);
  });
});

describe("provider portal sessions and invites by e-mail", () => {
  let t: TestApp;
  let smtp: SMTPServer;
  const mails: { to: string; text: string }[] = [];
  let offset = 0;
  const now = () => new Date(Date.now() + offset);

  beforeAll(async () => {
    // A real SMTP server on port 0 receives the invites nodemailer sends.
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address).join(","),
            text: Buffer.concat(chunks).toString(),
          });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await startTestApp(
      { name: "pglite" },
      { SMTP_URL: `smtp://127.0.0.1:${port}`, SMTP_FROM: "Portal <portal@broker.example>" },
      { now },
    );
  });
  afterAll(async () => {
    await t?.stop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("e-mails the invite link with SMTP_URL set", async () => {
    const p = await t.provider("Mailed provider");
    const res = await t.call("POST", `/api/v1/lead_providers/${p.id}/portal_users/`, {
      auth: await t.token(),
      body: { email: "mailed@example.com", name: "Mailed Person" },
    });
    const invite = (await res.json()) as Json;
    expect(invite.emailed).toBe(true);
    const mail = mails.find((m) => m.to === "mailed@example.com");
    expect(mail?.text).toContain("Mailed provider");
    // Quoted-printable may wrap the long link: compare it unwrapped.
    expect(mail?.text.replace(/=\r?\n/g, "").replace(/=3D/g, "=")).toContain(String(invite.invite_url));
  });

  it("ends a session after 12 idle hours, and after 7 days however active", async () => {
    const p = await t.provider("Clocked provider");
    const invited = (await (
      await t.call("POST", `/api/v1/lead_providers/${p.id}/portal_users/`, {
        auth: await t.token(),
        body: { email: "clocked@example.com", name: "Clocked Person" },
      })
    ).json()) as Json;
    const token = String(invited.invite_url).split("#invite=")[1];
    const headers = { origin: t.url };
    await t.call("POST", "/api/v1/portal/invite/accept/", { body: { token, password: PASSWORD }, headers });
    const signIn = async () => {
      const res = await t.call("POST", "/api/v1/portal/sign_in/", {
        body: { email: "clocked@example.com", password: PASSWORD },
        headers,
      });
      return (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    };
    const me = (cookie: string) => t.call("GET", "/api/v1/portal/me/", { headers: { cookie } });

    offset = 0;
    const idle = await signIn();
    offset = 11 * 3600_000;
    expect((await me(idle)).status).toBe(200); // 11 idle hours: still on (and seen now)
    offset = 22 * 3600_000 + 59 * 60_000;
    expect((await me(idle)).status).toBe(200); // 11 h 59 min after the last request
    offset = 35 * 3600_000;
    const gone = await me(idle);
    expect(gone.status).toBe(401);
    expect(((await gone.json()) as Json).detail).toBe("the session has expired; sign in again");

    offset = 0;
    const busy = await signIn();
    for (let hours = 10; hours < 7 * 24; hours += 10) {
      offset = hours * 3600_000;
      expect((await me(busy)).status, `${hours} h`).toBe(200);
    }
    offset = 7 * 24 * 3600_000 + 1000;
    expect((await me(busy)).status).toBe(401);
    offset = 0;
  });
});
