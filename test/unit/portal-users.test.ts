/**
 * Portal users' use cases on their own (src/portal/portal-user.service.ts and the parts it
 * composes), on a real in-memory PGlite and the real in-process rate limiter, with an injected
 * clock: invites, passwords, sign-in and its attempts, second factors, sessions, a deactivated
 * provider. `make mutation` runs it.
 */
import { sql } from "kysely";
import { generate as totpCode } from "otplib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createKeyCrypto } from "../../src/api-keys/api-key.ts";
import type { DatabaseHandle } from "../../src/db/database.ts";
import { DomainError } from "../../src/errors.ts";
import { createLogger } from "../../src/logger.ts";
import {
  createPortalUserService,
  type InviteMailer,
  inviteUrlOf,
  type PortalUserService,
  portalSuspended,
  sessionRequired,
} from "../../src/portal/portal-user.service.ts";
import {
  hashPassword,
  PASSWORD_HASHING,
  type PasswordHashing,
  type PortalPrincipal,
} from "../../src/portal/portal-user.ts";
import { insertProvider } from "../../src/providers/provider.repository.ts";
import { createRateLimiter, type RateLimiter } from "../../src/rate-limit/rate-limiter.ts";
import { openUnitDatabase } from "../helpers/unit-database.ts";

const crypto = createKeyCrypto("unit-test-master-secret-0123456789abcdef");
const PASSWORD = "violet tundra harbor 87 quay";
const BASE = "https://svc.example";
const NAMED = "password must not contain your email address, your name or your provider's name";
const HOUR = 3600_000;
/**
 * Argon2id at the least @node-rs/argon2 accepts (8 KiB, 1 pass): still Argon2id, hashed and
 * verified for real, at a fraction of a millisecond. Production's cost (PASSWORD_HASHING) is
 * what a service made without one uses: "stores the production cost" below.
 */
const CHEAP: PasswordHashing = { memoryCost: 8, timeCost: 1, parallelism: 1 };
/** 2026-11-25 12:00:05 UTC: 55 s left in the minute. */
const START = Date.UTC(2026, 10, 25, 12, 0, 5);

/** The DomainError a call rejects with. */
async function refusal(call: Promise<unknown>): Promise<DomainError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

// Accepting an invite judges the password in a thread that loads its dictionaries at the lowest
// CPU priority: on a busy machine (a mutation run) the first acceptance can take tens of seconds.
describe("portal users", { timeout: 120_000 }, () => {
  let handle: DatabaseHandle;
  let limiter: RateLimiter;
  let users: PortalUserService;
  let clock = START;
  const now = () => new Date(clock);
  const mails: Parameters<InviteMailer>[0][] = [];
  const mailErrors: unknown[] = [];
  let mailer: InviteMailer | undefined;
  let names = 0;

  const make = (options: { requireSecondFactor?: boolean } = {}) =>
    createPortalUserService({
      db: handle.db,
      crypto,
      throttle: limiter,
      now,
      passwordHashing: CHEAP,
      ...options,
      mailer: (invite) => (mailer ? mailer(invite) : Promise.reject(new Error("no mailer"))),
      onMailError: (err) => mailErrors.push(err),
    });

  const provider = async (active = true) => {
    names += 1;
    return (await insertProvider(
      handle.db,
      { name: `Unit Portal ${names}`, isActive: active },
      { perMinute: 60, perDay: 2000 },
    )) as number;
  };
  const setActive = (id: number, active: boolean) =>
    sql`update providers set is_active = ${active} where id = ${id}`.execute(handle.db);
  let people = 0;
  const nextEmail = () => {
    people += 1;
    return `person${people}@unit-portal.example`;
  };
  /** An invited user and its link's token. */
  const invited = async (providerId: number, name = "Dana Ruiz", service = users) => {
    const email = nextEmail();
    const invite = await service.invite("admin-1", providerId, { email, name }, BASE);
    return { invite, email, token: invite.inviteUrl.split("#invite=")[1] as string };
  };
  /**
   * The password set as accepting the invite would set it, without judging it: the judge's own
   * tests are in portal-user.test.ts and "accepting an invite" below, and starting its thread in
   * every test would make each mutant's run slow.
   */
  let storedHash: string;
  const activate = (userId: number) =>
    handle.db
      .updateTable("portal_users")
      .set({ password_hash: storedHash, status: "active", invite_digest: null, invite_expires_at: null })
      .where("id", "=", userId)
      .execute();
  /** An active user with a session. */
  const active = async (providerId: number, service = users) => {
    const { invite, email } = await invited(providerId, "Dana Ruiz", service);
    await activate(invite.user.id);
    const session = await service.signIn({ email, password: PASSWORD }, `ip-${people}`, undefined);
    return { user: invite.user, email, session };
  };
  const audits = async (action: string) =>
    (
      await sql<{
        actor: string;
        target_type: string;
        target_id: string;
        details: unknown;
      }>`select actor, target_type, target_id, details from audit_log where action = ${action} order by id`.execute(
        handle.db,
      )
    ).rows.map((r) => ({
      ...r,
      details: (typeof r.details === "string" ? JSON.parse(r.details) : r.details) as Record<string, unknown>,
    }));
  const sessionsOf = async (userId: number) =>
    Number(
      (
        await sql<{ n: number }>`select count(*)::int as n from portal_sessions where user_id = ${userId}`.execute(
          handle.db,
        )
      ).rows[0]?.n,
    );

  beforeAll(async () => {
    handle = await openUnitDatabase();
    storedHash = await hashPassword(PASSWORD, CHEAP);
  });
  beforeEach(async () => {
    clock = START;
    mailer = undefined;
    mails.length = 0;
    mailErrors.length = 0;
    limiter = await createRateLimiter({ logger: createLogger("silent"), now });
    users = make();
  });
  afterAll(() => handle.close());

  describe("inviting", () => {
    it("creates an invited user with a 72-hour link that carries the token in its fragment, audited", async () => {
      const id = await provider();
      const email = nextEmail();
      const invite = await users.invite("admin-1", id, { email, name: "  Dana Ruiz " }, `${BASE}//`);
      expect(invite.inviteUrl).toMatch(/^https:\/\/svc\.example\/portal\/#invite=[A-Za-z0-9_-]{43}$/);
      expect(invite.inviteExpiresAt).toEqual(new Date(START + 72 * HOUR));
      expect(invite.emailed).toBe(false);
      expect(invite.user).toMatchObject({
        providerId: id,
        email,
        name: "Dana Ruiz",
        status: "invited",
        secondFactor: false,
        lastSignInAt: null,
        inviteExpiresAt: new Date(START + 72 * HOUR),
      });
      const [entry] = (await audits("portal_user.invited")).slice(-1);
      expect(entry).toMatchObject({ actor: "admin-1", target_type: "provider", target_id: String(id) });
      expect(entry?.details).toEqual({
        user_id: invite.user.id,
        email,
        role: "admin", // the provider's first person
        invite_expires_at: new Date(START + 72 * HOUR).toISOString(),
      });
      expect(JSON.stringify(entry)).not.toContain(invite.inviteUrl.split("#invite=")[1]);
      expect((await users.list(id)).map((u) => u.email)).toEqual([email]);
      expect(inviteUrlOf("http://a.example/", "tok")).toBe("http://a.example/portal/#invite=tok");
    });

    it("names each bad field, and refuses a taken email in any case, from any provider", async () => {
      const id = await provider();
      const bad = await refusal(users.invite("admin-1", id, { email: "not-an-email", name: "" }, BASE));
      expect(bad.kind).toBe("invalid_argument");
      expect(bad.violations.map((v) => v.field).sort()).toEqual(["email", "name"]);
      const blank = await refusal(users.invite("admin-1", id, { email: nextEmail(), name: "   " }, BASE));
      expect(blank.violations).toEqual([{ field: "name", code: "required", message: "name must not be blank" }]);
      const control = await refusal(users.invite("admin-1", id, { email: nextEmail(), name: "a\u0000b" }, BASE));
      expect(control.violations[0]?.field).toBe("name");
      const long = await refusal(users.invite("admin-1", id, { email: nextEmail(), name: "x".repeat(101) }, BASE));
      expect(long.violations[0]?.field).toBe("name");
      expect((await refusal(users.invite("admin-1", id, undefined, BASE))).kind).toBe("invalid_argument");
      expect((await refusal(users.invite("admin-1", "x1", { email: nextEmail(), name: "A B" }, BASE))).kind).toBe(
        "invalid_argument",
      );
      const none = await refusal(users.invite("admin-1", 999_999, { email: nextEmail(), name: "A B" }, BASE));
      expect(none.code).toBe("provider_not_found");

      const { email } = await invited(id);
      const taken = await refusal(
        users.invite("admin-1", await provider(), { email: email.toUpperCase(), name: "X Y" }, BASE),
      );
      expect(taken).toMatchObject({ kind: "duplicate", code: "duplicate_portal_user_email" });
      expect(taken.violations).toEqual([
        {
          field: "email",
          code: "duplicate",
          message: "a portal user with this email already exists (emails are unique across providers)",
        },
      ]);
    });

    it("requires a name, of printable characters", async () => {
      const id = await provider();
      const missing = await refusal(users.invite("admin-1", id, { email: nextEmail() }, BASE));
      expect(missing.violations).toEqual([{ field: "name", code: "required", message: "name is required" }]);
      for (const name of ["Dana\tRuiz", "Dana\u0007Ruiz", "Dana\u007fRuiz"]) {
        const bad = await refusal(users.invite("admin-1", id, { email: nextEmail(), name }, BASE));
        expect(bad.violations, JSON.stringify(name)).toEqual([
          { field: "name", code: "invalid_characters", message: "name must not contain control characters" },
        ]);
      }
      expect(await users.list(id)).toEqual([]);
    });

    it("refuses to invite into an inactive provider, naming it", async () => {
      const id = await provider(false);
      const err = await refusal(users.invite("admin-1", id, { email: nextEmail(), name: "Late Person" }, BASE));
      expect(err).toMatchObject({
        kind: "failed_precondition",
        code: "provider_inactive",
        message: `provider ${id} ("Unit Portal ${names}") is inactive: reactivate it (is_active: true) before inviting its people`,
      });
      expect(await users.list(id)).toEqual([]);
    });

    it("e-mails the link when a mailer is set, and keeps the invite when the mail fails", async () => {
      const id = await provider();
      mailer = async (m) => {
        mails.push(m);
      };
      const sent = await invited(id, "Mailed Person");
      expect(sent.invite.emailed).toBe(true);
      expect(mails).toEqual([
        {
          to: sent.email,
          name: "Mailed Person",
          providerName: `Unit Portal ${names}`,
          url: sent.invite.inviteUrl,
          expiresAt: new Date(START + 72 * HOUR),
        },
      ]);
      const boom = new Error("smtp down");
      mailer = () => Promise.reject(boom);
      const failed = await invited(id, "Unmailed Person");
      expect(failed.invite.emailed).toBe(false);
      expect(mailErrors).toEqual([boom]);
      expect((await users.inspectInvite({ token: failed.token })).email).toBe(failed.email);
      // Without a mailer nothing is sent and nothing fails.
      const plain = createPortalUserService({ db: handle.db, crypto, throttle: limiter, now });
      expect((await invited(id, "Plain Person", plain)).invite.emailed).toBe(false);
      expect(plain.requireSecondFactor).toBe(false);
    });

    it("reports a failed mail only where asked to, and nothing where there is no mailer to fail", async () => {
      const id = await provider();
      const reported: unknown[] = [];
      const base = { db: handle.db, crypto, throttle: limiter, now, passwordHashing: CHEAP };
      // No mailer: nothing is sent, so nothing is reported.
      const handOver = createPortalUserService({ ...base, onMailError: (err) => reported.push(err) });
      expect((await invited(id, "Handed Person", handOver)).invite.emailed).toBe(false);
      expect(reported).toEqual([]);
      // A mailer that fails, and nobody to tell: the invite stands, with its link to hand over.
      const silent = createPortalUserService({ ...base, mailer: () => Promise.reject(new Error("smtp down")) });
      const kept = await invited(id, "Kept Person", silent);
      expect(kept.invite.emailed).toBe(false);
      expect((await silent.inspectInvite({ token: kept.token })).email).toBe(kept.email);
    });

    it("lists a provider's users in order, and refuses an unknown or malformed provider", async () => {
      const id = await provider();
      const a = await invited(id);
      const b = await invited(id);
      expect((await users.list(id)).map((u) => u.id)).toEqual([a.invite.user.id, b.invite.user.id]);
      expect((await refusal(users.list(999_999))).code).toBe("provider_not_found");
      expect((await refusal(users.list("0x1"))).kind).toBe("invalid_argument");
    });
  });

  describe("invite links", () => {
    it("show who they are for, until they expire, are used or are replaced", async () => {
      const id = await provider();
      const { token, email } = await invited(id, "Shown Person");
      expect(await users.inspectInvite({ token }, "ip-a")).toEqual({
        email,
        name: "Shown Person",
        providerName: `Unit Portal ${names}`,
        expiresAt: new Date(START + 72 * HOUR),
        secondFactorRequired: false,
      });
      expect((await make({ requireSecondFactor: true }).inspectInvite({ token })).secondFactorRequired).toBe(true);
      const unknown = await refusal(users.inspectInvite({ token: "nope" }));
      expect(unknown).toMatchObject({
        kind: "not_found",
        code: "invite_invalid",
        message: "this invite link has expired, was already used or was replaced; ask your administrator for a new one",
      });
      const missing = await refusal(users.inspectInvite({}));
      expect(missing.violations[0]?.field).toBe("token");
      expect((await refusal(users.inspectInvite({ token: "x".repeat(101) }))).violations[0]?.field).toBe("token");
      expect((await refusal(users.inspectInvite(undefined))).kind).toBe("invalid_argument");
      clock = START + 72 * HOUR;
      expect((await refusal(users.inspectInvite({ token }))).code).toBe("invite_invalid");
    });

    it("are refused while the provider is inactive, and work again once it is active", async () => {
      const id = await provider();
      const { token } = await invited(id);
      await setActive(id, false);
      for (const call of [users.inspectInvite({ token }), users.acceptInvite({ token, password: PASSWORD })]) {
        const err = await refusal(call);
        expect(err).toMatchObject({ kind: "permission_denied", code: "provider_inactive" });
        expect(err.message).toBe(portalSuspended().message);
      }
      expect(portalSuspended().message).toBe(
        "this provider's portal access is suspended; contact the broker's administrators to have it restored",
      );
      await setActive(id, true);
      expect((await users.acceptInvite({ token, password: PASSWORD })).status).toBe("active");
    });

    it("allow 10 attempts a minute per link and 30 per address, read and accept together, atomically", async () => {
      const id = await provider();
      const { token } = await invited(id);
      const tries = await Promise.all(
        Array.from({ length: 14 }, (_, i) =>
          (i % 2
            ? users.inspectInvite({ token }, `addr-${i}`)
            : users.acceptInvite({ token, password: "short" }, `addr-${i}`)
          ).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(tries.filter((c) => c === "rate_limited")).toHaveLength(4);
      const limited = await refusal(users.inspectInvite({ token }, "addr-x"));
      expect(limited).toMatchObject({
        kind: "rate_limited",
        code: "rate_limited",
        window: "minute",
        retryAfterSeconds: 55,
        message: "too many attempts with invite links; retry in 55 s",
      });
      // The next minute, the link answers again.
      clock = START + 60_000;
      expect((await users.inspectInvite({ token }, "addr-y")).name).toBe("Dana Ruiz");
      // Per address: 30 a minute over any links, known or not.
      const addr = "one-address";
      for (let i = 0; i < 30; i++)
        expect((await refusal(users.inspectInvite({ token: `t${i}` }, addr))).code).toBe("invite_invalid");
      expect((await refusal(users.inspectInvite({ token: "t-more" }, addr))).code).toBe("rate_limited");
      // Without an address, attempts share one counter.
      for (let i = 0; i < 30; i++) await refusal(users.inspectInvite({ token: `u${i}` }));
      expect((await refusal(users.inspectInvite({ token: "u-more" }))).code).toBe("rate_limited");
    });
  });

  describe("invite links, address by address", () => {
    it("count each address's attempts apart: one address at its limit leaves the others answered", async () => {
      const id = await provider();
      const { token } = await invited(id);
      for (let i = 0; i < 30; i++) await refusal(users.inspectInvite({ token: `a${i}` }, "198.51.100.1"));
      expect((await refusal(users.inspectInvite({ token }, "198.51.100.1"))).code).toBe("rate_limited");
      expect((await users.inspectInvite({ token }, "198.51.100.2")).name).toBe("Dana Ruiz");
      expect((await users.inspectInvite({ token })).name).toBe("Dana Ruiz");
    });
  });

  describe("accepting an invite", () => {
    it("sets the password (Argon2id), makes the user active, ends its sessions and the link, audited", async () => {
      const id = await provider();
      const { user, email, session } = await active(id);
      const reissued = await users.reinvite("admin-2", id, user.id, BASE);
      const token = reissued.inviteUrl.split("#invite=")[1] as string;
      // Meanwhile the old password still signs in.
      const meanwhile = await users.signIn({ email, password: PASSWORD }, "ip-m", undefined);
      expect(await sessionsOf(user.id)).toBe(1);
      const accepted = await users.acceptInvite({ token, password: "copper lantern meadow 41 drift" }, "ip-n");
      expect(accepted).toMatchObject({ id: user.id, status: "active", inviteExpiresAt: null });
      expect(await sessionsOf(user.id)).toBe(0);
      expect((await refusal(users.authenticate(meanwhile.token))).code).toBe("session_required");
      expect((await refusal(users.authenticate(session.token))).code).toBe("session_required");
      const row = await handle.db
        .selectFrom("portal_users")
        .selectAll()
        .where("id", "=", user.id)
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^\$argon2id\$/);
      expect(row.invite_digest).toBeNull();
      const [entry] = (await audits("portal_user.password_set")).slice(-1);
      expect(entry).toMatchObject({ actor: `portal:${email}`, target_type: "provider", target_id: String(id) });
      expect(entry?.details).toEqual({ user_id: user.id, status_before: "active" });
      expect((await refusal(users.acceptInvite({ token, password: PASSWORD }))).code).toBe("invite_invalid");
      expect((await refusal(users.signIn({ email, password: PASSWORD }, "ip-o", undefined))).code).toBe(
        "sign_in_failed",
      );
    });

    it("stores a password at production's cost (19 MiB, 2 passes, 1 lane) unless the service is given another", async () => {
      const id = await provider();
      const production = createPortalUserService({ db: handle.db, crypto, throttle: limiter, now });
      const dear = await invited(id);
      const cheap = await invited(id);
      await production.acceptInvite({ token: dear.token, password: PASSWORD });
      await users.acceptInvite({ token: cheap.token, password: PASSWORD });
      const hashOf = async (userId: number) =>
        (
          await handle.db
            .selectFrom("portal_users")
            .select("password_hash")
            .where("id", "=", userId)
            .executeTakeFirstOrThrow()
        ).password_hash;
      expect(PASSWORD_HASHING).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
      expect(await hashOf(dear.invite.user.id)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(await hashOf(cheap.invite.user.id)).toMatch(/^\$argon2id\$v=19\$m=8,t=1,p=1\$/);
      // The cost travels with the hash: either service signs either person in.
      expect((await production.signIn({ email: cheap.email, password: PASSWORD }, "pc1", undefined)).user.id).toBe(
        cheap.invite.user.id,
      );
      expect((await users.signIn({ email: dear.email, password: PASSWORD }, "pc2", undefined)).user.id).toBe(
        dear.invite.user.id,
      );
    });

    it("refuses a weak or malformed password, naming the field, and leaves the link good", async () => {
      const id = await provider();
      const { token } = await invited(id, "Weak Person");
      const short = await refusal(users.acceptInvite({ token, password: "short" }));
      expect(short).toMatchObject({ kind: "invalid_argument", code: "validation_error" });
      expect(short.violations).toEqual([
        { field: "password", code: "too_short", message: "password must be at least 12 characters" },
      ]);
      const weak = await refusal(users.acceptInvite({ token, password: "password1234" }));
      expect(weak).toMatchObject({ kind: "invalid_argument", code: "weak_password" });
      expect(weak.violations[0]).toMatchObject({ field: "password", code: "weak_password" });
      expect(weak.message).toBe(weak.violations[0]?.message);
      const missing = await refusal(users.acceptInvite({ token }));
      expect(missing.violations[0]?.field).toBe("password");
      expect((await refusal(users.acceptInvite({ token, password: "x".repeat(1025) }))).violations[0]?.field).toBe(
        "password",
      );
      expect((await refusal(users.acceptInvite(undefined))).violations[0]?.field).toBe("token");
      expect((await users.acceptInvite({ token, password: PASSWORD })).status).toBe("active");
    });

    it("refuses a password holding the person's email, name or provider's name, and leaves the link good", async () => {
      const id = await provider();
      const { token, email } = await invited(id, "Marisol Okonkwo");
      const local = email.split("@")[0] as string;
      for (const password of [
        "violet okonkwo tundra 87 quay",
        `harbor ${local} violet quay`,
        "violet portal harbor 87 quay",
      ]) {
        const err = await refusal(users.acceptInvite({ token, password }));
        expect(err, password).toMatchObject({ kind: "invalid_argument", code: "weak_password", message: NAMED });
        expect(err.violations).toEqual([{ field: "password", code: "weak_password", message: NAMED }]);
      }
      expect((await users.acceptInvite({ token, password: PASSWORD })).status).toBe("active");
    });

    it("lets one of two simultaneous acceptances of one link win", async () => {
      const id = await provider();
      const { token } = await invited(id);
      const results = await Promise.all(
        [PASSWORD, "copper lantern meadow 41 drift"].map((password) =>
          users.acceptInvite({ token, password }).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(results.sort()).toEqual(["invite_invalid", "ok"]);
    });
  });

  describe("signing in", () => {
    it("starts a 7-day session for the right password, records the sign-in, audited", async () => {
      const id = await provider();
      const { invite, email } = await invited(id);
      await activate(invite.user.id);
      clock = START + HOUR;
      const session = await users.signIn(
        { email: `  ${email.toUpperCase()} `, password: PASSWORD },
        "203.0.113.9",
        undefined,
      );
      expect(session.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(session.expiresAt).toEqual(new Date(START + HOUR + 7 * 24 * HOUR));
      expect(session.user).toMatchObject({
        id: invite.user.id,
        status: "active",
        lastSignInAt: new Date(START + HOUR),
      });
      expect(await users.authenticate(session.token)).toEqual({
        userId: invite.user.id,
        providerId: id,
        email,
        role: "admin", // the provider's first person
        mustEnrolSecondFactor: false,
      });
      const [entry] = (await audits("portal_user.signed_in")).slice(-1);
      expect(entry).toMatchObject({ actor: `portal:${email}`, target_id: String(id) });
      expect(entry?.details).toEqual({ user_id: invite.user.id, second_factor: false, client_ip: "203.0.113.9" });
      // The same browser signing in again ends its previous session.
      const again = await users.signIn({ email, password: PASSWORD }, undefined, session.token);
      expect((await refusal(users.authenticate(session.token))).code).toBe("session_required");
      expect((await users.authenticate(again.token)).userId).toBe(invite.user.id);
      expect((await audits("portal_user.signed_in")).at(-1)?.details.client_ip).toBeNull();
      const row = await handle.db
        .selectFrom("portal_users")
        .selectAll()
        .where("id", "=", invite.user.id)
        .executeTakeFirstOrThrow();
      expect(row.last_sign_in_at).toEqual(new Date(START + HOUR));
    });

    it("answers every failure the same, whether the email exists or not, and audits it", async () => {
      const id = await provider();
      const { email, user } = await active(id);
      const invitedOnly = await invited(id);
      const disabled = await active(id);
      await users.disable("admin-1", id, disabled.user.id);
      for (const [address, password] of [
        [email, "not the password"],
        ["ghost@nowhere.example", PASSWORD],
        [invitedOnly.email, PASSWORD],
        [disabled.email, PASSWORD],
      ] as const) {
        const err = await refusal(users.signIn({ email: address, password }, "ip-f", undefined));
        expect(err).toMatchObject({
          kind: "unauthenticated",
          code: "sign_in_failed",
          message: "email or password is incorrect",
        });
        expect(err.violations).toEqual([]);
      }
      const failures = (await audits("portal_user.sign_in_failed")).slice(-4);
      // An invited user has no password yet: its failure is the password's.
      expect(failures.map((f) => f.details.reason)).toEqual(["password", "password", "password", "disabled"]);
      expect(failures[0]).toMatchObject({ actor: `portal:${email}`, target_type: "provider", target_id: String(id) });
      expect(failures[0]?.details).toEqual({ user_id: user.id, reason: "password", client_ip: "ip-f" });
      // An unknown email is recorded without it.
      expect(failures[1]).toMatchObject({ actor: "portal:unknown", target_type: "portal", target_id: "sign_in" });
      expect(failures[1]?.details).toEqual({ reason: "password", client_ip: "ip-f" });
      const bad = await refusal(users.signIn({ password: PASSWORD }, "ip-f", undefined));
      expect(bad.violations.map((v) => v.field)).toEqual(["email"]);
      expect((await refusal(users.signIn(undefined, "ip-f", undefined))).violations.map((v) => v.field)).toEqual([
        "email",
        "password",
      ]);
      expect(
        (await refusal(users.signIn({ email, password: PASSWORD, totp_code: "1".repeat(21) }, "ip-f", undefined)))
          .violations[0]?.field,
      ).toBe("totp_code");
    });

    it("takes each attempt before checking it: 5 a minute per account, 20 per address, simultaneous ones too", async () => {
      const id = await provider();
      const { email } = await active(id);
      const guesses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          users.signIn({ email, password: `wrong ${i}` }, `addr-${i}`, undefined).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(guesses.filter((c) => c === "sign_in_failed")).toHaveLength(5);
      expect(guesses.filter((c) => c === "rate_limited")).toHaveLength(25);
      const throttled = await refusal(users.signIn({ email, password: PASSWORD }, "elsewhere", undefined));
      expect(throttled).toMatchObject({
        kind: "rate_limited",
        code: "rate_limited",
        window: "minute",
        retryAfterSeconds: 55,
        message: "too many failed sign-ins; retry in 55 s",
      });
      // Case and spaces make no other account.
      expect(
        (await refusal(users.signIn({ email: ` ${email.toUpperCase()}`, password: PASSWORD }, "e2", undefined))).code,
      ).toBe("rate_limited");
      clock = START + 60_000;
      expect((await users.signIn({ email, password: PASSWORD }, "elsewhere", undefined)).user.email).toBe(email);
      // Per address: 20 a minute over any accounts.
      const many = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          users.signIn({ email: `ghost${i}@nowhere.example`, password: "x" }, "one-address", undefined).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(many.filter((c) => c === "sign_in_failed")).toHaveLength(20);
      // Without an address, attempts share one counter.
      for (let i = 0; i < 20; i++)
        await refusal(users.signIn({ email: `n${i}@nowhere.example`, password: "x" }, undefined, undefined));
      expect(
        (await refusal(users.signIn({ email: "n-more@nowhere.example", password: "x" }, undefined, undefined))).code,
      ).toBe("rate_limited");
    });

    it("counts each address's attempts apart: one address at its limit leaves the others answered", async () => {
      const id = await provider();
      const { email } = await active(id);
      for (let i = 0; i < 20; i++)
        await refusal(users.signIn({ email: `far${i}@nowhere.example`, password: "x" }, "198.51.100.7", undefined));
      expect((await refusal(users.signIn({ email, password: PASSWORD }, "198.51.100.7", undefined))).code).toBe(
        "rate_limited",
      );
      expect((await users.signIn({ email, password: PASSWORD }, "198.51.100.8", undefined)).user.email).toBe(email);
      expect((await users.signIn({ email, password: PASSWORD }, undefined, undefined)).user.email).toBe(email);
    });

    it("gives a successful sign-in's attempt back", async () => {
      const id = await provider();
      const { email } = await active(id);
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 4; i++) await refusal(users.signIn({ email, password: "wrong" }, `r${round}`, undefined));
        expect((await users.signIn({ email, password: PASSWORD }, `r${round}`, undefined)).user.email).toBe(email);
        clock += 60_000;
      }
      clock = START + 10 * 60_000;
      for (let i = 0; i < 4; i++) await refusal(users.signIn({ email, password: "wrong" }, "s", undefined));
      await users.signIn({ email, password: PASSWORD }, "s", undefined);
      await users.signIn({ email, password: PASSWORD }, "s", undefined);
      expect((await refusal(users.signIn({ email, password: "wrong" }, "s", undefined))).code).toBe("sign_in_failed");
      expect((await refusal(users.signIn({ email, password: "wrong" }, "s", undefined))).code).toBe("rate_limited");
    });

    it("refuses a right password of an inactive provider's user with provider_inactive, audited, until reactivated", async () => {
      const id = await provider();
      const { email, user } = await active(id);
      await setActive(id, false);
      const err = await refusal(users.signIn({ email, password: PASSWORD }, "ip-s", undefined));
      expect(err).toMatchObject({ kind: "permission_denied", code: "provider_inactive" });
      expect((await audits("portal_user.sign_in_failed")).at(-1)?.details).toEqual({
        user_id: user.id,
        reason: "provider_inactive",
        client_ip: "ip-s",
      });
      // A wrong password says nothing about the provider.
      expect((await refusal(users.signIn({ email, password: "wrong" }, "ip-s", undefined))).code).toBe(
        "sign_in_failed",
      );
      await setActive(id, true);
      expect((await users.signIn({ email, password: PASSWORD }, "ip-s", undefined)).user.id).toBe(user.id);
    });
  });

  describe("a second factor", () => {
    const enrol = async (principal: PortalPrincipal, service = users) => {
      const setup = await service.startSecondFactor(principal);
      const code = await totpCode({ secret: setup.secret, epoch: Math.floor(clock / 1000) });
      return { setup, user: await service.confirmSecondFactor(principal, { totp_code: code }) };
    };
    const codeAt = (secret: string, ms: number) => totpCode({ secret, epoch: Math.floor(ms / 1000) });

    it("is set up with a current code, then asked for at sign-in, each code once, audited", async () => {
      const id = await provider();
      const { email, session } = await active(id);
      const principal = await users.authenticate(session.token);
      const setup = await users.startSecondFactor(principal);
      expect(setup.secret).toMatch(/^[A-Z2-7]{16,}$/);
      expect(setup.uri).toBe(
        `otpauth://totp/Lead%20Provider%20portal:${encodeURIComponent(email)}?secret=${setup.secret}&issuer=Lead%20Provider%20portal`,
      );
      const row = await handle.db
        .selectFrom("portal_users")
        .selectAll()
        .where("id", "=", principal.userId)
        .executeTakeFirstOrThrow();
      expect(row.totp_pending).not.toContain(setup.secret);
      expect(crypto.decrypt(row.totp_pending as string)).toBe(setup.secret);
      const wrong = await refusal(users.confirmSecondFactor(principal, { totp_code: "000000" }));
      const mismatch = "the code does not match; check the authenticator app's clock and enter the current code";
      expect(wrong).toMatchObject({ kind: "invalid_argument", code: "invalid_totp_code", message: mismatch });
      expect(wrong.violations).toEqual([{ field: "totp_code", code: "invalid_totp_code", message: mismatch }]);
      expect((await refusal(users.confirmSecondFactor(principal, {}))).violations[0]?.field).toBe("totp_code");
      const code = await codeAt(setup.secret, clock);
      const on = await users.confirmSecondFactor(principal, { totp_code: `${code.slice(0, 3)} ${code.slice(3)}` });
      expect(on.secondFactor).toBe(true);
      expect((await audits("portal_user.second_factor_enabled")).at(-1)).toEqual({
        actor: `portal:${email}`,
        target_type: "provider",
        target_id: String(id),
        details: { user_id: principal.userId },
      });
      const swap = await refusal(users.startSecondFactor(principal));
      expect(swap).toMatchObject({ kind: "failed_precondition", code: "second_factor_already_on" });

      const noCode = await refusal(users.signIn({ email, password: PASSWORD }, "tf", undefined));
      expect(noCode).toMatchObject({ kind: "unauthenticated", code: "second_factor_required" });
      expect(noCode.violations).toEqual([
        { field: "totp_code", code: "required", message: "totp_code is required for this account" },
      ]);
      // The code of the step the confirmation used is spent; the next step's works once.
      expect((await refusal(users.signIn({ email, password: PASSWORD, totp_code: code }, "tf", undefined))).code).toBe(
        "invalid_totp_code",
      );
      clock += 30_000;
      const next = await codeAt(setup.secret, clock);
      const signed = await users.signIn({ email, password: PASSWORD, totp_code: next }, "tf2", undefined);
      expect(signed.user.secondFactor).toBe(true);
      expect((await audits("portal_user.signed_in")).at(-1)?.details.second_factor).toBe(true);
      const replay = await refusal(users.signIn({ email, password: PASSWORD, totp_code: next }, "tf2", undefined));
      expect(replay).toMatchObject({
        kind: "unauthenticated",
        code: "invalid_totp_code",
        message: "the authenticator code is wrong, expired or already used",
      });
      expect(replay.violations).toEqual([
        { field: "totp_code", code: "invalid_totp_code", message: "enter the code your app shows now" },
      ]);
      expect(
        (await refusal(users.signIn({ email, password: PASSWORD, totp_code: "12345a" }, "tf2", undefined))).code,
      ).toBe("invalid_totp_code");
      expect((await audits("portal_user.sign_in_failed")).at(-1)?.details.reason).toBe("totp_code");
      // A code from two steps back is too old; one from the step before is still taken.
      clock += 60_000;
      expect(
        (
          await refusal(
            users.signIn(
              { email, password: PASSWORD, totp_code: await codeAt(setup.secret, clock - 60_000) },
              "tf3",
              undefined,
            ),
          )
        ).code,
      ).toBe("invalid_totp_code");
      expect(
        (
          await users.signIn(
            { email, password: PASSWORD, totp_code: await codeAt(setup.secret, clock - 30_000) },
            "tf3",
            undefined,
          )
        ).user.id,
      ).toBe(principal.userId);
    });

    it("takes a code typed with spaces, and says in words what is missing or already on", async () => {
      const id = await provider();
      const { email, session } = await active(id);
      const principal = await users.authenticate(session.token);
      const { setup } = await enrol(principal);
      expect((await refusal(users.startSecondFactor(principal))).message).toBe(
        "a second factor is already on; to replace it, ask your administrator for a fresh invite link",
      );
      expect((await refusal(users.signIn({ email, password: PASSWORD }, "sp", undefined))).message).toBe(
        "enter the 6-digit code from your authenticator app",
      );
      clock += 30_000;
      const code = await codeAt(setup.secret, clock);
      const typed = ` ${code.slice(0, 3)} ${code.slice(3)} `;
      expect((await users.signIn({ email, password: PASSWORD, totp_code: typed }, "sp", undefined)).user.id).toBe(
        principal.userId,
      );
    });

    it("lets one of two simultaneous sign-ins with one code win, and audits the other as a wrong code", async () => {
      const id = await provider();
      const { email, session, user } = await active(id);
      const { setup } = await enrol(await users.authenticate(session.token));
      clock += 30_000;
      const code = await codeAt(setup.secret, clock);
      const results = await Promise.all(
        ["race-1", "race-2"].map((ip) =>
          users.signIn({ email, password: PASSWORD, totp_code: code }, ip, undefined).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(results.sort()).toEqual(["invalid_totp_code", "ok"]);
      expect((await audits("portal_user.sign_in_failed")).at(-1)?.details).toMatchObject({
        user_id: user.id,
        reason: "totp_code",
      });
    });

    it("is asked for without using up an attempt; wrong codes use them up, simultaneous ones too", async () => {
      const id = await provider();
      const { email, session } = await active(id);
      await enrol(await users.authenticate(session.token));
      for (let i = 0; i < 8; i++)
        expect((await refusal(users.signIn({ email, password: PASSWORD }, "ask", undefined))).code).toBe(
          "second_factor_required",
        );
      const guesses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          users.signIn({ email, password: PASSWORD, totp_code: String(100000 + i) }, `g${i}`, undefined).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(guesses.filter((c) => c === "invalid_totp_code").length).toBeLessThanOrEqual(5);
      expect(guesses.filter((c) => c === "rate_limited").length).toBeGreaterThanOrEqual(15);
    });

    it("is required of everyone with PORTAL_REQUIRE_2FA until set up", async () => {
      const strict = make({ requireSecondFactor: true });
      expect(strict.requireSecondFactor).toBe(true);
      const id = await provider();
      const { session } = await active(id, strict);
      const principal = await strict.authenticate(session.token);
      expect(principal.mustEnrolSecondFactor).toBe(true);
      expect((await users.authenticate(session.token)).mustEnrolSecondFactor).toBe(false);
      await enrol(principal, strict);
      expect((await strict.authenticate(session.token)).mustEnrolSecondFactor).toBe(false);
    });

    it("cannot be confirmed before it is started", async () => {
      const id = await provider();
      const { session } = await active(id);
      const err = await refusal(
        users.confirmSecondFactor(await users.authenticate(session.token), { totp_code: "123456" }),
      );
      expect(err).toMatchObject({
        kind: "failed_precondition",
        code: "second_factor_not_started",
        message: "start setting up the second factor first",
      });
    });

    it("is removed, with the password of a disabled user, by a fresh invite, which ends the sessions, audited", async () => {
      const id = await provider();
      const { email, user, session } = await active(id);
      const { setup } = await enrol(await users.authenticate(session.token));
      clock += 30_000;
      await users.signIn({ email, password: PASSWORD, totp_code: await codeAt(setup.secret, clock) }, "x", undefined);
      clock += 60_000;
      const fresh = await users.reinvite("admin-3", id, user.id, BASE);
      expect(fresh.user).toMatchObject({
        status: "active",
        secondFactor: false,
        inviteExpiresAt: new Date(clock + 72 * HOUR),
      });
      expect(fresh.inviteExpiresAt).toEqual(new Date(clock + 72 * HOUR));
      expect(await sessionsOf(user.id)).toBe(0);
      const [entry] = (await audits("portal_user.reinvited")).slice(-1);
      expect(entry).toMatchObject({ actor: "admin-3", target_id: String(id) });
      expect(entry?.details).toEqual({
        user_id: user.id,
        email,
        ended_sessions: 2,
        second_factor_removed: true,
        invite_expires_at: new Date(clock + 72 * HOUR).toISOString(),
      });
      // Disabled, then re-invited: invited again, without a password.
      await users.disable("admin-3", id, user.id);
      const back = await users.reinvite("admin-3", id, user.id, BASE);
      expect(back.user.status).toBe("invited");
      expect((await audits("portal_user.reinvited")).at(-1)?.details.second_factor_removed).toBe(false);
      expect((await refusal(users.signIn({ email, password: PASSWORD }, "y", undefined))).code).toBe("sign_in_failed");
      const token = back.inviteUrl.split("#invite=")[1] as string;
      expect((await users.inspectInvite({ token })).email).toBe(email);
    });
  });

  describe("administrators' changes", () => {
    it("re-invite and disable only a provider's own users, and refuse re-inviting into an inactive provider", async () => {
      const id = await provider();
      const other = await provider();
      const { user } = await active(id);
      for (const call of [users.reinvite("a", other, user.id, BASE), users.disable("a", other, user.id)]) {
        const err = await refusal(call);
        expect(err).toMatchObject({
          kind: "not_found",
          code: "portal_user_not_found",
          message: `no portal user with id ${user.id} for this provider`,
        });
      }
      expect((await refusal(users.disable("a", id, "abc"))).violations[0]?.field).toBe("user_id");
      expect((await refusal(users.reinvite("a", id, "0", BASE))).violations[0]?.field).toBe("user_id");
      await setActive(id, false);
      const closed = await refusal(users.reinvite("a", id, user.id, BASE));
      expect(closed).toMatchObject({ kind: "failed_precondition", code: "provider_inactive" });
      expect(closed.message).toContain(`provider ${id} ("Unit Portal`);
      // Disabling still works for an inactive provider.
      expect((await users.disable("a", id, user.id)).status).toBe("disabled");
    });

    it("disable a user: its sessions end and its link stops, audited", async () => {
      const id = await provider();
      const { user, email, session } = await active(id);
      const second = await users.signIn({ email, password: PASSWORD }, "d2", undefined);
      const disabled = await users.disable("admin-4", id, user.id);
      expect(disabled).toMatchObject({ status: "disabled", inviteExpiresAt: null });
      for (const token of [session.token, second.token])
        expect((await refusal(users.authenticate(token))).code).toBe("session_required");
      expect((await audits("portal_user.disabled")).at(-1)).toMatchObject({
        actor: "admin-4",
        target_id: String(id),
        details: { user_id: user.id, email, ended_sessions: 2 },
      });
      const pending = await invited(id);
      await users.disable("admin-4", id, pending.invite.user.id);
      expect((await refusal(users.inspectInvite({ token: pending.token }))).code).toBe("invite_invalid");
    });

    it("end every session of a provider being deactivated, in the caller's transaction, audited with what ended", async () => {
      const id = await provider();
      const other = await provider();
      const a = await active(id);
      const b = await active(id);
      const extra = await users.signIn({ email: a.email, password: PASSWORD }, "e", undefined);
      const theirs = await active(other);
      const ended = await handle.db.transaction().execute((trx) => users.endProviderSessions(trx, "admin-5", id));
      expect(ended).toBe(3);
      for (const token of [a.session.token, b.session.token, extra.token]) {
        expect((await refusal(users.authenticate(token))).message).toBe("the session has ended; sign in again");
      }
      expect((await users.authenticate(theirs.session.token)).providerId).toBe(other);
      const [entry] = (await audits("portal_user.sessions_ended")).slice(-1);
      expect(entry).toMatchObject({ actor: "admin-5", target_type: "provider", target_id: String(id) });
      expect(entry?.details).toEqual({
        reason: "provider_inactive",
        ended_sessions: 3,
        user_ids: [a.user.id, b.user.id].sort((x, y) => x - y),
      });
      // Nothing open: nothing ended, nothing audited.
      const before = (await audits("portal_user.sessions_ended")).length;
      expect(await users.endProviderSessions(handle.db, "admin-5", id)).toBe(0);
      expect((await audits("portal_user.sessions_ended")).length).toBe(before);
    });
  });

  describe("a provider's sessions ended together", () => {
    it("name the users whose sessions ended in id order, however their sessions began", async () => {
      const id = await provider();
      const first = await invited(id);
      const second = await invited(id);
      const third = await invited(id);
      const people = [first, second, third];
      for (const p of people) await activate(p.invite.user.id);
      // The last invited signs in first: their sessions are kept in that order.
      for (const p of [third, second, first, third])
        await users.signIn({ email: p.email, password: PASSWORD }, "order", undefined);
      expect(await users.endProviderSessions(handle.db, "admin-6", id)).toBe(4);
      expect((await audits("portal_user.sessions_ended")).at(-1)?.details.user_ids).toEqual(
        people.map((p) => p.invite.user.id),
      );
    });

    it("end a deactivated provider's session once, however many requests bring it at once", async () => {
      const id = await provider();
      const { session } = await active(id);
      await setActive(id, false);
      const before = (await audits("portal_user.sessions_ended")).length;
      const codes = await Promise.all(
        [1, 2, 3].map(() =>
          users.authenticate(session.token).then(
            () => "ok",
            (e: DomainError) => e.code,
          ),
        ),
      );
      expect(codes).toEqual(["provider_inactive", "provider_inactive", "provider_inactive"]);
      expect((await audits("portal_user.sessions_ended")).length).toBe(before + 1);
    });
  });

  describe("sessions", () => {
    it("need a token, end after 12 idle hours or 7 days, and are touched at most once a minute", async () => {
      const id = await provider();
      const { session, user } = await active(id);
      expect(await refusal(users.authenticate(undefined))).toMatchObject({
        kind: "unauthenticated",
        code: "session_required",
        message: "sign in to the portal first",
      });
      expect((await refusal(users.authenticate(""))).message).toBe("sign in to the portal first");
      expect((await refusal(users.authenticate("no-such-token"))).message).toBe("the session has ended; sign in again");
      expect(sessionRequired().message).toBe("sign in to the portal first");
      const seen = async () =>
        (
          await handle.db
            .selectFrom("portal_sessions")
            .select("last_seen_at")
            .where("user_id", "=", user.id)
            .executeTakeFirstOrThrow()
        ).last_seen_at;
      clock = START + 59_999;
      await users.authenticate(session.token);
      expect(await seen()).toEqual(new Date(START));
      clock = START + 60_000;
      await users.authenticate(session.token);
      expect(await seen()).toEqual(new Date(START + 60_000));
      // 12 idle hours after the last request, less a millisecond: still on.
      clock = START + 60_000 + 12 * HOUR - 1;
      expect((await users.authenticate(session.token)).userId).toBe(user.id);
      clock += 12 * HOUR;
      const idle = await refusal(users.authenticate(session.token));
      expect(idle.message).toBe("the session has expired; sign in again");
      expect(await sessionsOf(user.id)).toBe(0);

      // However active, a session ends 7 days after sign-in.
      clock = START;
      const busy = await users.signIn(
        {
          email: (
            await users.me({ userId: user.id, providerId: id, email: "", role: "member", mustEnrolSecondFactor: false })
          ).email,
          password: PASSWORD,
        },
        "b",
        undefined,
      );
      for (let h = 11; h < 7 * 24; h += 11) {
        clock = START + h * HOUR;
        await users.authenticate(busy.token);
      }
      clock = START + 7 * 24 * HOUR - 1;
      expect((await users.authenticate(busy.token)).userId).toBe(user.id);
      clock = START + 7 * 24 * HOUR;
      expect((await refusal(users.authenticate(busy.token))).message).toBe("the session has expired; sign in again");
    });

    it("are cleared of ended ones at each sign-in", async () => {
      const id = await provider();
      const { email, user } = await active(id);
      await users.signIn({ email, password: PASSWORD }, "c", undefined);
      expect(await sessionsOf(user.id)).toBe(2);
      clock = START + 13 * HOUR;
      await users.signIn({ email, password: PASSWORD }, "c", undefined);
      expect(await sessionsOf(user.id)).toBe(1);
      clock = START + 13 * HOUR + 7 * 24 * HOUR;
      const last = await users.signIn({ email, password: PASSWORD }, "c", undefined);
      expect(await sessionsOf(user.id)).toBe(1);
      expect((await users.authenticate(last.token)).userId).toBe(user.id);
    });

    it("are refused and ended while the provider is inactive, audited", async () => {
      const id = await provider();
      const { session, user, email } = await active(id);
      await setActive(id, false);
      const err = await refusal(users.authenticate(session.token));
      expect(err).toMatchObject({ kind: "permission_denied", code: "provider_inactive" });
      expect(await sessionsOf(user.id)).toBe(0);
      expect((await audits("portal_user.sessions_ended")).at(-1)).toMatchObject({
        actor: `portal:${email}`,
        target_id: String(id),
        details: { reason: "provider_inactive", ended_sessions: 1, user_ids: [user.id] },
      });
      await setActive(id, true);
      expect((await refusal(users.authenticate(session.token))).code).toBe("session_required");
    });

    it("end at sign-out, audited; signing out without a session is nothing", async () => {
      const id = await provider();
      const { session, user, email } = await active(id);
      const before = (await audits("portal_user.signed_out")).length;
      await users.signOut(undefined);
      await users.signOut("");
      await users.signOut("no-such-token");
      expect((await audits("portal_user.signed_out")).length).toBe(before);
      await users.signOut(session.token);
      expect(await sessionsOf(user.id)).toBe(0);
      expect((await audits("portal_user.signed_out")).at(-1)).toMatchObject({
        actor: `portal:${email}`,
        target_id: String(id),
        details: { user_id: user.id },
      });
    });

    it("know their user, and refuse one that is gone", async () => {
      const id = await provider();
      const { session, user } = await active(id);
      const principal = await users.authenticate(session.token);
      expect(await users.me(principal)).toMatchObject({ id: user.id, status: "active" });
      const gone = await refusal(users.me({ ...principal, userId: 999_999 }));
      expect(gone).toMatchObject({ code: "session_required", message: "the session has ended; sign in again" });
    });
  });
});
