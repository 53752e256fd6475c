/**
 * The provider portal's trust layer against the real service: sign-in and second-factor guesses
 * admitted atomically before any verification (one instance, and two sharing Redis), a
 * deactivated provider's portal closed, the password judge's bounded cost and the invite
 * routes' limits, the Origin check with hostile neighbours, the second-factor gate on every
 * portal route of openapi.yaml, isolation from a smuggled provider id, and sessions ended by a
 * password set from a fresh invite.
 */
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { generate as totpCode } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, type ServiceClient, startTestApp, type TestApp } from "./helpers/app.ts";

const PASSWORD = "violet tundra harbor 87 quay";

/**
 * A client address of its own for a request or a test (the apps trust one proxy hop, so the
 * address is X-Forwarded-For's), so one test's attempts never count against another's.
 */
let addresses = randomBytes(2).readUInt16BE() * 64;
const freshAddress = () => {
  addresses += 1;
  return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
};

/** The portal's helpers for one running app. */
function portalOf(t: ServiceClient & { app?: TestApp["app"] }) {
  const admin = t.token();
  let people = 0;
  const call = (
    method: string,
    path: string,
    options: { cookie?: string; body?: unknown; address?: string; headers?: Record<string, string> } = {},
  ) =>
    t.call(method, `/api/v1/portal/${path}`, {
      ...(options.body !== undefined && { body: options.body }),
      headers: {
        origin: t.url,
        ...(options.cookie && { cookie: options.cookie }),
        ...(options.address && { "x-forwarded-for": options.address }),
        ...options.headers,
      },
    });
  const helpers = {
    call,
    admin,
    async invite(providerId: number, name = "Dana Ruiz", email?: string) {
      people += 1;
      const address = email ?? `person${people}.${randomBytes(3).toString("hex")}@portal-security.example`;
      const res = await t.call("POST", `/api/v1/lead_providers/${providerId}/portal_users/`, {
        auth: await admin,
        body: { email: address, name },
      });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Json;
      return {
        token: String(body.invite_url).split("#invite=")[1] ?? "",
        email: address,
        userId: body.user.id as number,
      };
    },
    async signIn(email: string, password = PASSWORD, extra: Json = {}, address = freshAddress(), cookie?: string) {
      const res = await call("POST", "sign_in/", {
        body: { email, password, ...extra },
        address,
        ...(cookie !== undefined && { cookie }),
      });
      return { res, cookie: (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "" };
    },
    async activeUser(providerId: number, name = "Dana Ruiz") {
      const { token, email, userId } = await helpers.invite(providerId, name);
      const accepted = await call("POST", "invite/accept/", {
        body: { token, password: PASSWORD },
        address: freshAddress(),
      });
      expect(accepted.status).toBe(200);
      const { res, cookie } = await helpers.signIn(email);
      expect(res.status).toBe(200);
      return { email, cookie, userId };
    },
    /** Turns the user's second factor on; returns its secret. */
    async withSecondFactor(cookie: string): Promise<string> {
      const setup = (await (await call("POST", "me/second_factor/", { cookie })).json()) as Json;
      const ok = await call("POST", "me/second_factor/confirm/", {
        cookie,
        body: { totp_code: await totpCode({ secret: setup.secret }) },
      });
      expect(ok.status).toBe(200);
      return setup.secret as string;
    },
    /** The audit rows of an action about one user, by reason when given. */
    async audited(action: string, userId: number, reason?: string): Promise<number> {
      if (!t.app) throw new Error("the audit log is read from an app in this process");
      const rows = await sql<{ details: unknown }>`select details from audit_log where action = ${action}`.execute(
        t.app.database.db,
      );
      return rows.rows
        .map((r) => (typeof r.details === "string" ? JSON.parse(r.details) : r.details) as Json)
        .filter((d) => d.user_id === userId && (reason === undefined || d.reason === reason)).length;
    },
  };
  return helpers;
}

const statuses = (answers: Response[]) => {
  const count: Record<number, number> = {};
  for (const a of answers) count[a.status] = (count[a.status] ?? 0) + 1;
  return count;
};

describe("portal sign-in guesses are admitted before they are verified (one instance)", { timeout: 180_000 }, () => {
  let t: TestApp;
  let p: ReturnType<typeof portalOf>;
  let provider: { id: number };
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { TRUST_PROXY: "1" });
    p = portalOf(t);
    provider = await t.provider("Race provider");
  });
  afterAll(() => t?.stop());

  it("100 simultaneous wrong passwords for one account: at most 5 reach the password check, the rest get 429", async () => {
    const { email, userId } = await p.activeUser(provider.id);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => p.signIn(email, `wrong password ${i} of a hundred`).then((a) => a.res)),
    );
    const count = statuses(answers);
    expect(count[401] ?? 0).toBeLessThanOrEqual(5);
    expect((count[401] ?? 0) + (count[429] ?? 0)).toBe(100);
    expect(await p.audited("portal_user.sign_in_failed", userId, "password")).toBeLessThanOrEqual(5);
    const refused = answers.find((a) => a.status === 429) as Response;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as Json).code).toBe("rate_limited");
  });

  it("100 simultaneous wrong second-factor codes with the right password: at most 5 codes are checked", async () => {
    const { email, cookie, userId } = await p.activeUser(provider.id);
    await p.withSecondFactor(cookie);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        p.signIn(email, PASSWORD, { totp_code: String(100000 + i * 7919).slice(0, 6) }).then((a) => a.res),
      ),
    );
    const count = statuses(answers);
    expect(count[401] ?? 0).toBeLessThanOrEqual(5);
    expect((count[401] ?? 0) + (count[429] ?? 0)).toBe(100);
    expect(await p.audited("portal_user.sign_in_failed", userId, "totp_code")).toBeLessThanOrEqual(5);
  });

  it("30 simultaneous wrong sign-ins for 30 accounts from one address: at most 20 are checked", async () => {
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        p
          .signIn(`nobody${i}.${Date.now()}@portal-security.example`, "wrong password here", {}, address)
          .then((a) => a.res),
      ),
    );
    const count = statuses(answers);
    expect(count[401] ?? 0).toBeLessThanOrEqual(20);
    expect((count[401] ?? 0) + (count[429] ?? 0)).toBe(30);
  });

  it("a successful sign-in gives its attempt back: four failures, a success, then four more failures are all answered", async () => {
    const { email } = await p.activeUser(provider.id);
    const address = freshAddress();
    for (let i = 0; i < 4; i++)
      expect((await p.signIn(email, "not the password at all", {}, address)).res.status).toBe(401);
    expect((await p.signIn(email, PASSWORD, {}, address)).res.status).toBe(200);
    expect((await p.signIn(email, "not the password at all", {}, address)).res.status).toBe(401);
    expect((await p.signIn(email, "not the password at all", {}, address)).res.status).toBe(429);
  });
});

describe.runIf(process.env.REDIS_URL && process.env.TEST_DATABASE_URL)(
  "portal sign-in guesses across two instances sharing Redis",
  { timeout: 180_000 },
  () => {
    let one: TestApp;
    let two: TestApp;
    beforeAll(async () => {
      const env = {
        REDIS_URL: process.env.REDIS_URL as string,
        REDIS_NAMESPACE: `portal-${randomBytes(4).toString("hex")}`,
        TRUST_PROXY: "1",
      };
      one = await startTestApp({ name: "postgres" }, env);
      two = await startTestApp({ name: "postgres" }, { ...env, DATABASE_URL: one.databaseUrl as string });
    });
    afterAll(async () => {
      await two?.stop();
      await one?.stop();
    });

    it("100 simultaneous wrong passwords for one account over both: at most 5 reach the password check", async () => {
      const [a, b] = [portalOf(one), portalOf(two)];
      const provider = await one.provider("Shared race provider");
      const { email, userId } = await a.activeUser(provider.id);
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          (i % 2 === 0 ? a : b).signIn(email, `wrong password ${i} on two`).then((x) => x.res),
        ),
      );
      const count = statuses(answers);
      expect(count[401] ?? 0).toBeLessThanOrEqual(5);
      expect((count[401] ?? 0) + (count[429] ?? 0)).toBe(100);
      expect(await a.audited("portal_user.sign_in_failed", userId, "password")).toBeLessThanOrEqual(5);
    });

    it("100 simultaneous wrong second-factor codes over both: at most 5 codes are checked", async () => {
      const [a, b] = [portalOf(one), portalOf(two)];
      const provider = await one.provider("Shared code race provider");
      const { email, cookie, userId } = await a.activeUser(provider.id);
      await a.withSecondFactor(cookie);
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          (i % 2 === 0 ? a : b)
            .signIn(email, PASSWORD, { totp_code: String(100000 + i * 7919).slice(0, 6) })
            .then((x) => x.res),
        ),
      );
      const count = statuses(answers);
      expect(count[401] ?? 0).toBeLessThanOrEqual(5);
      expect((count[401] ?? 0) + (count[429] ?? 0)).toBe(100);
      expect(await a.audited("portal_user.sign_in_failed", userId, "totp_code")).toBeLessThanOrEqual(5);
    });
  },
);

describe("a deactivated provider's portal", () => {
  let t: TestApp;
  let p: ReturnType<typeof portalOf>;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { TRUST_PROXY: "1" });
    p = portalOf(t);
  });
  afterAll(() => t?.stop());

  const setActive = async (id: number, active: boolean) => {
    const res = await t.call("PATCH", `/api/v1/lead_providers/${id}/`, {
      auth: await p.admin,
      body: { is_active: active },
    });
    expect(res.status).toBe(200);
  };

  it("ends its open sessions at deactivation (audited): no lead read, webhook change or test key; sign-in is 403 provider_inactive until reactivated", async () => {
    const provider = await t.provider("Suspended provider");
    const { cookie, email, userId } = await p.activeUser(provider.id);
    const other = await p.activeUser(provider.id, "Other Person");
    expect((await p.call("GET", "leads/", { cookie })).status).toBe(200);
    await setActive(provider.id, false);

    for (const [method, path, body] of [
      ["GET", "leads/", undefined],
      ["GET", "webhook/", undefined],
      ["PUT", "webhook/", { webhook_url: "https://hooks.example.com/x" }],
      ["POST", "keys/test/", undefined],
    ] as const) {
      const res = await p.call(method, path, { cookie, body });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    expect((await p.call("GET", "me/", { cookie: other.cookie })).status).toBe(401);
    const detail = (await (
      await t.call("GET", `/api/v1/lead_providers/${provider.id}/`, { auth: await p.admin })
    ).json()) as Json;
    expect(detail.webhook_url).toBeNull();
    expect(detail.test_api_key).toBeNull();

    const ended = await sql<{ details: unknown; actor: string }>`
      select details, actor from audit_log where action = 'portal_user.sessions_ended' and target_id = ${String(provider.id)}`.execute(
      t.app.database.db,
    );
    expect(ended.rows).toHaveLength(1);
    const details = (
      typeof ended.rows[0]?.details === "string" ? JSON.parse(ended.rows[0].details) : ended.rows[0]?.details
    ) as Json;
    expect(details).toMatchObject({ reason: "provider_inactive", ended_sessions: 2 });
    expect(details.user_ids.sort()).toEqual([userId, other.userId].sort());
    expect(ended.rows[0]?.actor).toBe("test-admin");

    const refused = await p.signIn(email);
    expect(refused.res.status).toBe(403);
    const problem = (await refused.res.json()) as Json;
    expect(problem.code).toBe("provider_inactive");
    expect(problem.detail).toMatch(/portal access is suspended/);
    expect(refused.cookie).toBe("");
    // A wrong password still says only that the password is wrong.
    const wrong = await p.signIn(email, "certainly not the password");
    expect(wrong.res.status).toBe(401);

    await setActive(provider.id, true);
    const back = await p.signIn(email);
    expect(back.res.status).toBe(200);
    expect((await p.call("GET", "leads/", { cookie: back.cookie })).status).toBe(200);
  });

  it("refuses any session while the provider is inactive, however the provider became inactive", async () => {
    const provider = await t.provider("Switched off in the database");
    const { cookie } = await p.activeUser(provider.id);
    await sql`update providers set is_active = false where id = ${provider.id}`.execute(t.app.database.db);
    const res = await p.call("GET", "webhook/", { cookie });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).code).toBe("provider_inactive");
    await sql`update providers set is_active = true where id = ${provider.id}`.execute(t.app.database.db);
    // The session ended with the refusal.
    expect((await p.call("GET", "webhook/", { cookie })).status).toBe(401);
  });

  it("refuses to read or accept an invite while inactive (the link stays good), and accepts it once reactivated", async () => {
    const provider = await t.provider("Inactive invite provider");
    const { token, email } = await p.invite(provider.id);
    await setActive(provider.id, false);
    for (const [path, body] of [
      ["invite/", { token }],
      ["invite/accept/", { token, password: PASSWORD }],
    ] as const) {
      const res = await p.call("POST", path, { body, address: freshAddress() });
      expect(res.status, path).toBe(403);
      const problem = (await res.json()) as Json;
      expect(problem.code).toBe("provider_inactive");
      expect(problem.detail).toMatch(/portal access is suspended/);
    }
    await setActive(provider.id, true);
    expect(
      (await p.call("POST", "invite/accept/", { body: { token, password: PASSWORD }, address: freshAddress() })).status,
    ).toBe(200);
    expect((await p.signIn(email)).res.status).toBe(200);
  });

  it("administrators cannot invite or re-invite into an inactive provider: 409 provider_inactive naming it", async () => {
    const provider = await t.provider("Closed provider");
    const { userId } = await p.invite(provider.id);
    await setActive(provider.id, false);
    const invited = await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/`, {
      auth: await p.admin,
      body: { email: `late.${Date.now()}@portal-security.example`, name: "Late Person" },
    });
    const reinvited = await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/${userId}/invite/`, {
      auth: await p.admin,
    });
    for (const res of [invited, reinvited]) {
      expect(res.status).toBe(409);
      const problem = (await res.json()) as Json;
      expect(problem.code).toBe("provider_inactive");
      expect(problem.detail).toContain("Closed provider");
      expect(problem.detail).toContain(String(provider.id));
    }
    const list = (await (
      await t.call("GET", `/api/v1/lead_providers/${provider.id}/portal_users/`, { auth: await p.admin })
    ).json()) as Json;
    expect(list.results).toHaveLength(1);
  });
});
