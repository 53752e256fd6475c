/**
 * The portal's own team and passwords after the invite (docs/portal.md), against the real service
 * with a real SMTP server receiving its mail: the password rule at every place a password is set
 * (invite, reset, change), a provider's portal admin managing its own people (and only them), and
 * a forgotten password reset by e-mail: one answer for every email, a link that works once for an
 * hour, the sign-in throttle, sessions ended, everything audited.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, minuteClock, startTestApp, type TestApp } from "./helpers/app.ts";
import { BACKENDS } from "./helpers/database.ts";

const PASSWORD = "violet tundra harbor 87 quay";
const NEW_PASSWORD = "copper lantern orbit 19 meadow";

/** A real SMTP server on port 0; mail to an address in `slow` is taken only after `delayMs`. */
async function startMailbox(slow: Set<string>, delayMs: number) {
  const mails: { to: string; text: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onRcptTo(address, _session, done) {
      if (slow.has(address.address)) setTimeout(done, delayMs);
      else done();
    },
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        // Quoted-printable may wrap a long link: keep the text unwrapped.
        const text = Buffer.concat(chunks)
          .toString()
          .replace(/=\r?\n/g, "")
          .replace(/=3D/g, "=");
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(","), text });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    mails,
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const backend of BACKENDS) {
  describe(`portal team and passwords (${backend.name})`, () => {
    let t: TestApp;
    let admin: string;
    let mailbox: Awaited<ReturnType<typeof startMailbox>>;
    const slow = new Set<string>();
    /** Counts per minute of the service's clock; `later` moves it on (link expiry). */
    const clock = minuteClock();
    let later = 0;
    const now = () => new Date(clock().getTime() + later);

    beforeAll(async () => {
      mailbox = await startMailbox(slow, 2500);
      t = await startTestApp(
        backend,
        { SMTP_URL: `smtp://127.0.0.1:${mailbox.port}`, SMTP_FROM: "Portal <portal@broker.example>" },
        { now },
      );
      admin = await t.token();
    });
    afterAll(async () => {
      await t?.stop();
      await mailbox?.close();
    });

    const portal = (method: string, path: string, cookie?: string, body?: unknown) =>
      t.call(method, `/api/v1/portal/${path}`, {
        ...(body !== undefined && { body }),
        headers: { origin: t.url, ...(cookie && { cookie }) },
      });

    let people = 0;
    /** A person invited by the broker's administrators into the provider (role as the service decides, or asked). */
    async function invited(providerId: number, name: string, emailAt: string, role?: string) {
      people += 1;
      const [local, domain] = emailAt.split("@");
      const email = `${local}.${people}@${domain}`;
      const res = await t.call("POST", `/api/v1/lead_providers/${providerId}/portal_users/`, {
        auth: admin,
        body: { email, name, ...(role && { role }) },
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Json;
      return { email, body, token: String(body.invite_url).split("#invite=")[1] ?? "", id: body.user.id as number };
    }

    async function signIn(email: string, password = PASSWORD) {
      const res = await portal("POST", "sign_in/", undefined, { email, password });
      return { res, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
    }

    /** An active, signed-in person. */
    async function person(providerId: number, name: string, emailAt: string, role?: string) {
      const p = await invited(providerId, name, emailAt, role);
      expect((await portal("POST", "invite/accept/", undefined, { token: p.token, password: PASSWORD })).status).toBe(
        200,
      );
      return { ...p, cookie: (await signIn(p.email)).cookie };
    }

    async function audit(providerId: number): Promise<Json[]> {
      const res = await t.call("GET", `/api/v1/admin/audit_log/?provider_id=${providerId}`, { auth: admin });
      return ((await res.json()) as Json).results as Json[];
    }

    /** The reset link of the newest mail to `to`, waiting for it to arrive. */
    async function resetMail(to: string, count = 1): Promise<string> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const mine = resetMails(to);
        if (mine.length >= count) {
          const link = /(http:\/\/\S+\/portal\/#reset=[A-Za-z0-9_-]{43})/.exec(mine.at(-1)?.text ?? "")?.[1];
          expect(link, "the mail carries a reset link").toBeDefined();
          return link as string;
        }
        if (Date.now() > deadline) throw new Error(`no reset mail to ${to}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    /** The reset mails sent to `to` (invites go to the same mailbox). */
    const resetMails = (to: string) => mailbox.mails.filter((m) => m.to === to && m.text.includes("#reset="));
    const tokenOf = (link: string) => link.split("#reset=")[1] ?? "";

    describe("the password rule, wherever a password is set", () => {
      /** Each forbidden part, in another case, embedded among words and digits. */
      const hostile = (email: string) => [
        "AcmeShippingJaneMorrison2026",
        "violet SHIPPING tundra 87 quay",
        "violet tundra aCmE harbor 87",
        "violet tundra jAnE harbor 87",
        "MORRISON violet tundra 87 quay",
        "violet tundra Quokka harbor 87",
        "violet FREIGHT tundra 87 quay",
        `violet ${email.toUpperCase()} 87`,
      ];
      /** Shares two or three letters with each part, but contains none. */
      const sharesLetters = "jazz violet tundra 87 acorn quay mop";

      async function expectRefused(res: Response, what: string) {
        expect(res.status, what).toBe(400);
        expect(res.headers.get("content-type"), what).toContain("application/problem+json");
        const problem = (await res.json()) as Json;
        expect(problem.code, what).toBe("weak_password");
        expect(problem.detail, what).toBe(
          "password must not contain your email address, your name or your provider's name",
        );
        expect(problem.errors, what).toEqual([expect.objectContaining({ field: "password", code: "weak_password" })]);
      }

      it("refuses the person's email, names and provider's name in any case at invite, reset and change", async () => {
        const p = await t.provider("Acme Shipping");
        const jane = await invited(p.id, "Jane Morrison", "jane.morrison@quokka-freight.example");
        for (const bad of hostile(jane.email))
          await expectRefused(
            await portal("POST", "invite/accept/", undefined, { token: jane.token, password: bad }),
            bad,
          );
        // The link is still good; a password that only shares letters is fine.
        const accepted = await portal("POST", "invite/accept/", undefined, {
          token: jane.token,
          password: sharesLetters,
        });
        expect(accepted.status).toBe(200);

        const { cookie } = await signIn(jane.email, sharesLetters);
        for (const bad of hostile(jane.email)) {
          const res = await portal("POST", "me/password/", cookie, { current_password: sharesLetters, password: bad });
          await expectRefused(res, `change: ${bad}`);
        }

        clock.nextMinute();
        expect((await portal("POST", "password_reset/", undefined, { email: jane.email })).status).toBe(202);
        const token = tokenOf(await resetMail(jane.email));
        for (const bad of hostile(jane.email)) {
          const res = await portal("POST", "password_reset/confirm/", undefined, { token, password: bad });
          await expectRefused(res, `reset: ${bad}`);
        }
        const reset = await portal("POST", "password_reset/confirm/", undefined, {
          token,
          password: `${sharesLetters} x`,
        });
        expect(reset.status).toBe(200);
      });
    });

    describe("a password with a 3-letter name", () => {
      it("refuses a 3-letter surname in another case, and passes a password sharing 2 letters", async () => {
        const p = await t.provider("Quay Haulage");
        const li = await invited(p.id, "Li Doe", "li@doe-haulage.example");
        for (const bad of ["violet tundra DOE harbor 87", "violetdOetundra harbor 87"]) {
          const res = await portal("POST", "invite/accept/", undefined, { token: li.token, password: bad });
          expect(res.status, bad).toBe(400);
          expect(((await res.json()) as Json).code, bad).toBe("weak_password");
        }
        // "li" (2 letters) is ignored: "violin" and "lilac" may stay.
        const ok = await portal("POST", "invite/accept/", undefined, {
          token: li.token,
          password: "violin tundra lilac harbor 87",
        });
        expect(ok.status).toBe(200);
      });
    });

    describe("a provider's own team", () => {
      it("makes a provider's first person its admin and the next ones members; the console may ask for either", async () => {
        const p = await t.provider("Team roles");
        expect((await invited(p.id, "First Person", "first@roles.example")).body.user.role).toBe("admin");
        expect((await invited(p.id, "Second Person", "second@roles.example")).body.user.role).toBe("member");
        expect((await invited(p.id, "Third Person", "third@roles.example", "admin")).body.user.role).toBe("admin");
        const bad = await t.call("POST", `/api/v1/lead_providers/${p.id}/portal_users/`, {
          auth: admin,
          body: { email: "owner@roles.example", name: "Owner", role: "owner" },
        });
        expect(bad.status).toBe(400);
        expect(((await bad.json()) as Json).errors[0].field).toBe("role");
      });

      it("lets a portal admin list, invite, disable and re-invite its own people, audited as the portal user", async () => {
        const p = await t.provider("Team managed");
        const boss = await person(p.id, "Robin Admin", "robin@team.example");
        expect(boss.body.user.role).toBe("admin");

        const inv = await portal("POST", "users/", boss.cookie, { email: "sam.lee@team.example", name: "Sam Lee" });
        expect(inv.status).toBe(201);
        const issued = (await inv.json()) as Json;
        expect(issued.user).toMatchObject({ email: "sam.lee@team.example", role: "member", status: "invited" });
        expect(issued.emailed).toBe(true);
        const token = String(issued.invite_url).split("#invite=")[1];
        expect((await portal("POST", "invite/accept/", undefined, { token, password: PASSWORD })).status).toBe(200);
        const sam = await signIn("sam.lee@team.example");
        expect(sam.res.status).toBe(200);

        const list = (await (await portal("GET", "users/", boss.cookie)).json()) as Json;
        expect(list.results.map((u: Json) => [u.email, u.role, u.status])).toEqual([
          [boss.email, "admin", "active"],
          ["sam.lee@team.example", "member", "active"],
        ]);

        const disabled = await portal("POST", `users/${issued.user.id}/disable/`, boss.cookie, {});
        expect(disabled.status).toBe(200);
        expect(((await disabled.json()) as Json).status).toBe("disabled");
        expect((await portal("GET", "me/", sam.cookie)).status).toBe(401);
        expect((await signIn("sam.lee@team.example")).res.status).toBe(401);

        const again = await portal("POST", `users/${issued.user.id}/invite/`, boss.cookie, {});
        expect(again.status).toBe(200);
        expect(((await again.json()) as Json).user.status).toBe("invited");

        // The admin's own account is not theirs to disable or re-invite here.
        for (const action of ["disable", "invite"]) {
          const own = await portal("POST", `users/${boss.id}/${action}/`, boss.cookie, {});
          expect(own.status, action).toBe(409);
          expect(((await own.json()) as Json).code).toBe("own_portal_account");
        }

        const entries = await audit(p.id);
        const byBoss = entries.filter((e) => e.actor === `portal:${boss.email}`).map((e) => e.action);
        expect(byBoss).toEqual(
          expect.arrayContaining(["portal_user.invited", "portal_user.disabled", "portal_user.reinvited"]),
        );
      });

      it("refuses a member (403) and never reaches another provider's people (404, like an unknown id)", async () => {
        const mine = await t.provider("Team mine");
        const theirs = await t.provider("Team theirs");
        const boss = await person(mine.id, "Kim Admin", "kim@mine.example");
        const member = await person(mine.id, "Lou Member", "lou@mine.example");
        const stranger = await person(theirs.id, "Ari Other", "ari@theirs.example");
        expect(member.body.user.role).toBe("member");

        for (const [method, path] of [
          ["GET", "users/"],
          ["POST", "users/"],
          ["POST", `users/${boss.id}/disable/`],
          ["POST", `users/${stranger.id}/invite/`],
        ] as const) {
          const res = await portal(
            method,
            path,
            member.cookie,
            method === "POST" ? { email: "x@mine.example", name: "X" } : undefined,
          );
          expect(res.status, path).toBe(403);
          expect(((await res.json()) as Json).code, path).toBe("portal_admin_required");
        }

        for (const id of [stranger.id, 987_654_321]) {
          for (const action of ["disable", "invite"]) {
            const res = await portal("POST", `users/${id}/${action}/`, boss.cookie, {});
            expect(res.status, `${action} ${id}`).toBe(404);
            expect(((await res.json()) as Json).code).toBe("portal_user_not_found");
          }
        }
        expect((await portal("GET", "me/", stranger.cookie)).status).toBe(200); // untouched
        const listed = (await (await portal("GET", "users/", boss.cookie)).json()) as Json;
        expect(listed.results.map((u: Json) => u.email)).not.toContain(stranger.email);

        const bad = await portal("POST", "users/abc/disable/", boss.cookie, {});
        expect(bad.status).toBe(400);
      });
    });

    describe("changing a role", () => {
      const consoleRole = (providerId: number, userId: number, body: unknown) =>
        t.call("POST", `/api/v1/lead_providers/${providerId}/portal_users/${userId}/role/`, { auth: admin, body });

      it("lets the administrators make any user of the provider an admin or a member, audited", async () => {
        const p = await t.provider("Roles console");
        const other = await t.provider("Roles console other");
        const first = await invited(p.id, "Ada First", "ada@rc.example");
        const second = await person(p.id, "Bo Second", "bo@rc.example");
        expect(second.body.user.role).toBe("member");

        const promoted = await consoleRole(p.id, second.id, { role: "admin" });
        expect(promoted.status).toBe(200);
        expect((await promoted.json()) as Json).toMatchObject({ id: second.id, role: "admin", status: "active" });
        // It holds from the next request: the promoted person's session now reaches the team.
        expect((await portal("GET", "users/", second.cookie)).status).toBe(200);

        // The administrators may leave a provider without an admin (they can name one again).
        for (const id of [first.id, second.id]) {
          const res = await consoleRole(p.id, id, { role: "member" });
          expect(res.status).toBe(200);
          expect(((await res.json()) as Json).role).toBe("member");
        }
        expect((await portal("GET", "users/", second.cookie)).status).toBe(403);
        // The same role again changes nothing and writes nothing.
        expect((await consoleRole(p.id, second.id, { role: "member" })).status).toBe(200);

        const changes = (await audit(p.id)).filter((e) => e.action === "portal_user.role_changed");
        expect(changes.map((e) => [e.details.user_id, e.details.from, e.details.to])).toEqual(
          expect.arrayContaining([
            [second.id, "member", "admin"],
            [first.id, "admin", "member"],
            [second.id, "admin", "member"],
          ]),
        );
        expect(changes).toHaveLength(3);

        // Another provider's user, an unknown provider, a bad role.
        const wrong = await consoleRole(other.id, second.id, { role: "admin" });
        expect(wrong.status).toBe(404);
        expect(((await wrong.json()) as Json).code).toBe("portal_user_not_found");
        expect((await consoleRole(987_654_321, second.id, { role: "admin" })).status).toBe(404);
        for (const body of [{}, { role: "owner" }, { role: 1 }]) {
          const res = await consoleRole(p.id, second.id, body);
          expect(res.status, JSON.stringify(body)).toBe(400);
          expect(((await res.json()) as Json).errors[0].field).toBe("role");
        }
      });

      it("lets a portal admin change its people's roles, never another provider's, never the last admin's own", async () => {
        const p = await t.provider("Roles portal");
        const theirs = await t.provider("Roles portal theirs");
        const boss = await person(p.id, "Cy Boss", "cy@rp.example");
        const member = await person(p.id, "Di Member", "di@rp.example");
        const stranger = await person(theirs.id, "Ed Other", "ed@rp-theirs.example", "member");
        expect(boss.body.user.role).toBe("admin");

        // A member cannot change anyone's role, their own included.
        for (const id of [member.id, boss.id]) {
          const res = await portal("POST", `users/${id}/role/`, member.cookie, { role: "admin" });
          expect(res.status).toBe(403);
          expect(((await res.json()) as Json).code).toBe("portal_admin_required");
        }
        // Another provider's person is 404, like an unknown id, and is untouched.
        for (const id of [stranger.id, 987_654_321]) {
          const res = await portal("POST", `users/${id}/role/`, boss.cookie, { role: "admin" });
          expect(res.status, String(id)).toBe(404);
          expect(((await res.json()) as Json).code).toBe("portal_user_not_found");
        }
        expect((await portal("GET", "users/", stranger.cookie)).status).toBe(403);

        // The last active admin cannot step down.
        const alone = await portal("POST", `users/${boss.id}/role/`, boss.cookie, { role: "member" });
        expect(alone.status).toBe(409);
        expect(alone.headers.get("content-type")).toContain("application/problem+json");
        const problem = (await alone.json()) as Json;
        expect(problem.code).toBe("last_portal_admin");
        expect(problem.detail).toBe(
          "you are your provider's last active administrator: make someone else an administrator before becoming a member",
        );

        // Once another person is an admin, the first may step down; the new admin manages the team.
        const promoted = await portal("POST", `users/${member.id}/role/`, boss.cookie, { role: "admin" });
        expect(promoted.status).toBe(200);
        expect(((await promoted.json()) as Json).role).toBe("admin");
        expect((await portal("GET", "users/", member.cookie)).status).toBe(200);
        const stepped = await portal("POST", `users/${boss.id}/role/`, boss.cookie, { role: "member" });
        expect(stepped.status).toBe(200);
        expect(((await stepped.json()) as Json).role).toBe("member");
        expect((await portal("GET", "users/", boss.cookie)).status).toBe(403);
        // Now the other one is the last active admin.
        const last = await portal("POST", `users/${member.id}/role/`, member.cookie, { role: "member" });
        expect(last.status).toBe(409);
        expect(((await last.json()) as Json).code).toBe("last_portal_admin");

        const bad = await portal("POST", `users/${boss.id}/role/`, member.cookie, { role: "owner" });
        expect(bad.status).toBe(400);
        expect(((await bad.json()) as Json).errors[0].field).toBe("role");

        const changes = (await audit(p.id)).filter((e) => e.action === "portal_user.role_changed");
        expect(changes.map((e) => [e.actor, e.details.user_id, e.details.to])).toEqual(
          expect.arrayContaining([
            [`portal:${boss.email}`, member.id, "admin"],
            [`portal:${boss.email}`, boss.id, "member"],
          ]),
        );
        expect(changes).toHaveLength(2);
      });
    });

    describe("a forgotten password", () => {
      it("answers every email the same; mails a link only to an active person, and not before answering", async () => {
        const p = await t.provider("Reset answers");
        const active = await person(p.id, "Noor Active", "noor@answers.example");
        const waiting = await invited(p.id, "Ivo Invited", "ivo@answers.example");
        clock.nextMinute();

        const answers: { status: number; body: string }[] = [];
        for (const email of ["nobody.here@answers.example", waiting.email]) {
          const res = await portal("POST", "password_reset/", undefined, { email });
          answers.push({ status: res.status, body: await res.text() });
        }
        // The mail server takes 2.5 s for this address: the answer must not wait for it.
        slow.add(active.email);
        const started = performance.now();
        const known = await portal("POST", "password_reset/", undefined, { email: active.email });
        const took = performance.now() - started;
        answers.push({ status: known.status, body: await known.text() });
        expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
        expect(new Set(answers.map((a) => a.body)).size).toBe(1);
        expect(JSON.parse(answers[0]?.body ?? "{}").message).toMatch(/^If an active account has this email/);
        expect(took, "answered before the mail server took the message").toBeLessThan(2500);

        await resetMail(active.email);
        slow.delete(active.email);
        expect([...resetMails("nobody.here@answers.example"), ...resetMails(waiting.email)]).toEqual([]);

        const entries = await audit(p.id);
        expect(entries.filter((e) => e.action === "portal_user.password_reset_requested").length).toBe(2);
      });

      it("sets a new password once with the link, ends every session, and refuses the link after", async () => {
        const p = await t.provider("Reset once");
        const ana = await person(p.id, "Ana Reset", "ana@once.example");
        const other = await signIn(ana.email);
        clock.nextMinute();
        expect((await portal("POST", "password_reset/", undefined, { email: ana.email })).status).toBe(202);
        const link = await resetMail(ana.email);
        expect(link.startsWith(`${t.url}/portal/#reset=`)).toBe(true);
        // Until used, the old password still works.
        expect((await signIn(ana.email)).res.status).toBe(200);

        const used = await portal("POST", "password_reset/confirm/", undefined, {
          token: tokenOf(link),
          password: NEW_PASSWORD,
        });
        expect(used.status).toBe(200);
        for (const cookie of [ana.cookie, other.cookie]) expect((await portal("GET", "me/", cookie)).status).toBe(401);
        expect((await signIn(ana.email)).res.status).toBe(401);
        expect((await signIn(ana.email, NEW_PASSWORD)).res.status).toBe(200);

        const again = await portal("POST", "password_reset/confirm/", undefined, {
          token: tokenOf(link),
          password: "another fresh phrase 42 willow",
        });
        expect(again.status).toBe(404);
        const problem = (await again.json()) as Json;
        expect(problem.code).toBe("reset_invalid");
        expect(problem.detail).toBe(
          "this password reset link has expired or was already used; ask for a new one on the sign-in page",
        );

        const actions = (await audit(p.id)).map((e) => e.action);
        expect(actions).toEqual(
          expect.arrayContaining(["portal_user.password_reset_requested", "portal_user.password_reset"]),
        );
        expect(JSON.stringify(await audit(p.id))).not.toContain(tokenOf(link));
      });

      it("refuses a link after one hour, and a link replaced by a newer one", async () => {
        const p = await t.provider("Reset expiry");
        const eve = await person(p.id, "Eve Expiry", "eve@expiry.example");
        const max = await person(p.id, "Max Minutes", "max@expiry.example");
        clock.nextMinute();
        await portal("POST", "password_reset/", undefined, { email: eve.email });
        const first = tokenOf(await resetMail(eve.email, 1));
        await portal("POST", "password_reset/", undefined, { email: eve.email });
        const second = tokenOf(await resetMail(eve.email, 2));
        expect(second).not.toBe(first);
        const replaced = await portal("POST", "password_reset/confirm/", undefined, {
          token: first,
          password: NEW_PASSWORD,
        });
        expect(replaced.status).toBe(404);
        await portal("POST", "password_reset/", undefined, { email: max.email });
        const maxLink = tokenOf(await resetMail(max.email));

        // The service's clock only moves forward: 59 minutes on one link works, 61 the other is refused.
        later += 59 * 60_000;
        const inTime = await portal("POST", "password_reset/confirm/", undefined, {
          token: maxLink,
          password: NEW_PASSWORD,
        });
        expect(inTime.status).toBe(200);
        later += 2 * 60_000;
        const expired = await portal("POST", "password_reset/confirm/", undefined, {
          token: second,
          password: NEW_PASSWORD,
        });
        expect(expired.status).toBe(404);
        expect(((await expired.json()) as Json).code).toBe("reset_invalid");
      });

      it("throttles asking for links with the sign-in counters: 5 a minute per email, shared with sign-in", async () => {
        const p = await t.provider("Reset throttle");
        const tom = await person(p.id, "Tom Throttle", "tom@throttle.example");
        clock.nextMinute();
        for (let i = 0; i < 3; i += 1) expect((await signIn(tom.email, "wrong password here")).res.status).toBe(401);
        for (let i = 0; i < 2; i += 1)
          expect((await portal("POST", "password_reset/", undefined, { email: tom.email })).status).toBe(202);
        const over = await portal("POST", "password_reset/", undefined, { email: tom.email });
        expect(over.status).toBe(429);
        expect(over.headers.get("retry-after")).toBeTruthy();
        expect(((await over.json()) as Json).code).toBe("rate_limited");
        expect((await signIn(tom.email)).res.status).toBe(429);
        // An unknown email is throttled the same way.
        for (let i = 0; i < 5; i += 1)
          expect((await portal("POST", "password_reset/", undefined, { email: "ghost@throttle.example" })).status).toBe(
            202,
          );
        expect((await portal("POST", "password_reset/", undefined, { email: "ghost@throttle.example" })).status).toBe(
          429,
        );
        clock.nextMinute();
        expect((await signIn(tom.email)).res.status).toBe(200);
      });

      it("refuses bad input with a problem, never a server error", async () => {
        clock.nextMinute();
        for (const body of [{}, { email: "not an email" }, { email: 42 }, { email: "x".repeat(300) }]) {
          const res = await portal("POST", "password_reset/", undefined, body);
          expect(res.status, JSON.stringify(body)).toBe(400);
          expect(res.headers.get("content-type")).toContain("application/problem+json");
        }
        for (const body of [{}, { token: "" }, { token: "x".repeat(101), password: PASSWORD }, { token: "abc" }]) {
          const res = await portal("POST", "password_reset/confirm/", undefined, body);
          expect(res.status, JSON.stringify(body)).toBe(400);
        }
        const unknown = await portal("POST", "password_reset/confirm/", undefined, {
          token: "abc",
          password: PASSWORD,
        });
        expect(unknown.status).toBe(404);
        expect((await (await portal("GET", "password_reset/")).json()) as Json).toEqual({ available: true });
      });
    });

    describe("changing one's password", () => {
      it("asks for the current one, keeps this session and ends the others, audited", async () => {
        const p = await t.provider("Change password");
        const cy = await person(p.id, "Cy Change", "cy@change.example");
        const elsewhere = await signIn(cy.email);
        clock.nextMinute();
        const wrong = await portal("POST", "me/password/", cy.cookie, {
          current_password: "not the password at all",
          password: NEW_PASSWORD,
        });
        expect(wrong.status).toBe(400);
        const problem = (await wrong.json()) as Json;
        expect(problem.code).toBe("wrong_current_password");
        expect(problem.errors[0].field).toBe("current_password");

        const ok = await portal("POST", "me/password/", cy.cookie, {
          current_password: PASSWORD,
          password: NEW_PASSWORD,
        });
        expect(ok.status).toBe(200);
        expect((await portal("GET", "me/", cy.cookie)).status).toBe(200);
        expect((await portal("GET", "me/", elsewhere.cookie)).status).toBe(401);
        expect((await signIn(cy.email, NEW_PASSWORD)).res.status).toBe(200);
        expect((await audit(p.id)).map((e) => e.action)).toContain("portal_user.password_changed");
      });
    });
  });
}

describe("a forgotten password without SMTP_URL", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" });
  });
  afterAll(() => t?.stop());

  it("is not offered: 404 password_reset_unavailable with words, and no link", async () => {
    const headers = { origin: t.url };
    expect((await (await t.call("GET", "/api/v1/portal/password_reset/", { headers })).json()) as Json).toEqual({
      available: false,
    });
    for (const [path, body] of [
      ["password_reset/", { email: "someone@example.com" }],
      ["password_reset/confirm/", { token: "abc", password: PASSWORD }],
    ] as const) {
      const res = await t.call("POST", `/api/v1/portal/${path}`, { body, headers });
      expect(res.status, path).toBe(404);
      const problem = (await res.json()) as Json;
      expect(problem.code, path).toBe("password_reset_unavailable");
      expect(problem.detail).toMatch(/^password reset by e-mail is not offered here/);
    }
  });
});
