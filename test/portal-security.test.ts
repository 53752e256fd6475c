/**
 * The provider portal's trust layer against the real service: sign-in and second-factor guesses
 * admitted atomically before any verification (one instance, and two sharing Redis), a
 * deactivated provider's portal closed, the password judge's bounded cost and the invite
 * routes' limits, the Origin check with hostile neighbours, the second-factor gate on every
 * portal route of openapi.yaml, isolation from a smuggled provider id, and sessions ended by a
 * password set from a fresh invite.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { sql } from "kysely";
import { generate as totpCode } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type Json, type ServiceClient, startTestApp, type TestApp } from "./helpers/app.ts";
import { type ServiceProcess, startServiceProcess } from "./helpers/service-process.ts";

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

/**
 * Measured against the service as production runs it, in a process of its own, so what is timed
 * is the service's event loop and not this test's (nor PGlite's, which runs in the caller's
 * thread). An unattacked twin is timed at the same moments: a machine busy enough stalls any
 * process now and then, each at its own moments (a 5 ms timer in an idle process was seen 230 ms
 * late at a load of 16 on two cores), so the bound is 100 ms or twice the twin's slowest answer,
 * whichever is more. An event loop held by the judge stalls for seconds, whatever the machine.
 */
describe.runIf(process.env.TEST_DATABASE_URL)(
  "the password judge keeps the service answering",
  { timeout: 300_000 },
  () => {
    let s: ServiceProcess;
    let twin: ServiceProcess;
    beforeAll(async () => {
      const start = () => startServiceProcess({ TRUST_PROXY: "1" }, '"lead provider api listening"');
      s = await start();
      twin = await start();
    });
    afterAll(async () => {
      await Promise.all([s?.stop(), twin?.stop()]);
    });

    it("/healthz answers within 100 ms (99 probes in 100, none near a second) while hostile passwords are judged", async () => {
      const p = portalOf(s);
      const provider = await s.provider("Hostile passwords");
      const seq = Array.from({ length: 256 }, (_, i) => String.fromCharCode(33 + (i % 90))).join("");
      const hostile = [
        seq,
        "1234567890".repeat(26).slice(0, 256),
        "ab1!".repeat(64),
        "4@8({[<3609|!1%7+2$5".repeat(13).slice(0, 256),
        "aaaaaaaa1111!!!!".repeat(16),
        "19/12/2026".repeat(25),
        "é€𝒜ü".repeat(64),
        "qwertyuiop[]asdfghjkl;'zxcvbnm,./".repeat(8).slice(0, 256),
        `${"pass".repeat(60)}word`,
        "1987".repeat(64),
      ];
      // One invite per hostile password, each tried three times from its own address: within every limit.
      const invites = await Promise.all(hostile.map(() => p.invite(provider.id)));
      // One ordinary refusal first, so the route's validators are compiled and the judge's thread
      // is up: what is measured is the attack, not a cold start.
      const warm = await p.invite(provider.id);
      const first = await p.call("POST", "invite/accept/", {
        body: { token: warm.token, password: "password1234" },
        address: freshAddress(),
      });
      expect(first.status).toBe(400);
      /** How long /healthz took to answer (a connection the server gave up on: the time it took to give up). */
      const probe = async (service: ServiceProcess) => {
        const started = performance.now();
        const status = await fetch(`${service.url}/healthz`).then(
          (r) => r.status,
          () => 0,
        );
        return { ms: performance.now() - started, status };
      };
      await Promise.all([probe(s), probe(twin)]); // each route's validators compiled before timing
      // Five attackers at once, each trying its passwords one after another, so the judge always
      // has work waiting for the whole attack (30 hostile attempts in all).
      const attacker = async (k: number) => {
        const answers: number[] = [];
        for (const i of [k, k + 5]) {
          for (let n = 0; n < 3; n++) {
            const res = await p.call("POST", "invite/accept/", {
              body: { token: invites[i]?.token, password: hostile[i] },
              address: freshAddress(),
            });
            answers.push(res.status);
          }
        }
        return answers;
      };
      const attack = Promise.allSettled([0, 1, 2, 3, 4].map(attacker));
      let running = true;
      void attack.finally(() => {
        running = false;
      });
      const waits: number[] = [];
      const twinWaits: number[] = [];
      const healthy: number[] = [];
      // From when every attacker's first password is with the judge (connections made, requests read).
      await new Promise((r) => setTimeout(r, 500));
      while (running || waits.length < 10) {
        const [attacked, quiet] = await Promise.all([probe(s), probe(twin)]);
        waits.push(attacked.ms);
        twinWaits.push(quiet.ms);
        healthy.push(attacked.status);
        await new Promise((r) => setTimeout(r, 50));
        if (waits.length >= 1000) break;
      }
      const answers = await attack;
      expect(waits.length).toBeGreaterThanOrEqual(10);
      // A judge on the event loop stalls every probe during a judgement (seconds each): the 99th
      // percentile over hundreds of probes catches it, and no probe may wait a second. A single
      // probe a few ms over 100 is the loaded machine (the twin sees such outliers too).
      const p99 = (w: number[]) => [...w].sort((a, b) => a - b)[Math.floor(w.length * 0.99)] as number;
      const bound = Math.max(100, 2 * p99(twinWaits));
      const shown = (w: number[]) => w.map((x) => x.toFixed(0)).join(", ");
      const said = `waits: ${shown(waits)}; the twin's: ${shown(twinWaits)}`;
      expect(p99(waits), said).toBeLessThanOrEqual(bound);
      expect(Math.max(...waits), said).toBeLessThan(1000);
      expect(healthy.every((x) => x === 200)).toBe(true);
      for (const a of answers) {
        expect(a.status).toBe("fulfilled");
        if (a.status === "fulfilled") for (const status of a.value) expect([200, 400, 404]).toContain(status);
      }
    });
  },
);

describe("the password judge and the invite routes' limits", { timeout: 180_000 }, () => {
  let t: TestApp;
  let p: ReturnType<typeof portalOf>;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { TRUST_PROXY: "1" });
    p = portalOf(t);
  });
  afterAll(() => t?.stop());

  it("judges only the first 64 characters: a strong start carries a long password, a weak start is refused however it ends", async () => {
    const provider = await t.provider("Long passwords");
    const strong = await p.invite(provider.id);
    const long = `${PASSWORD} ${"z".repeat(200)}`;
    expect(
      (
        await p.call("POST", "invite/accept/", {
          body: { token: strong.token, password: long },
          address: freshAddress(),
        })
      ).status,
    ).toBe(200);
    expect((await p.signIn(strong.email, long)).res.status).toBe(200);
    const weak = await p.invite(provider.id);
    const res = await p.call("POST", "invite/accept/", {
      body: { token: weak.token, password: `${"a".repeat(64)}${PASSWORD}` },
      address: freshAddress(),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).errors[0]).toMatchObject({ field: "password", code: "weak_password" });
  });

  it("refuses a password made of the provider's name, the person's names and a year, whatever the case", async () => {
    const provider = await t.provider("Quokka Logistics");
    const { token } = await p.invite(provider.id, "Dana Ruiz", `dana.ruiz.${Date.now()}@mailbox.example`);
    for (const password of [
      "QuokkaLogisticsDanaRuiz2026",
      "quokkalogisticsdanaruiz1987",
      "DANA-RUIZ-QUOKKA-LOGISTICS-2026",
      "Ruiz Dana Logistics Quokka 2025",
    ]) {
      const res = await p.call("POST", "invite/accept/", { body: { token, password }, address: freshAddress() });
      expect(res.status, password).toBe(400);
      const problem = (await res.json()) as Json;
      expect(problem.errors[0], password).toMatchObject({ field: "password", code: "weak_password" });
      expect(problem.detail, password).toBe(
        "password must not contain your email address, your name or your provider's name",
      );
    }
  });

  it("limits invite attempts per link: 10 a minute, then 429 rate_limited with Retry-After, at once and in parallel", async () => {
    const provider = await t.provider("Limited invites");
    const { token } = await p.invite(provider.id);
    const answers = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        p.call("POST", i % 3 === 0 ? "invite/" : "invite/accept/", {
          body: i % 3 === 0 ? { token } : { token, password: `password${i}` },
          address: freshAddress(),
        }),
      ),
    );
    const count = statuses(answers);
    expect(count[429]).toBe(5);
    expect((count[200] ?? 0) + (count[400] ?? 0)).toBe(10);
    const refused = answers.find((a) => a.status === 429) as Response;
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await refused.json()) as Json).code).toBe("rate_limited");
    // The link is still good after its minute: the refusals did not use it up.
    const list = (await (
      await t.call("GET", `/api/v1/lead_providers/${provider.id}/portal_users/`, { auth: await p.admin })
    ).json()) as Json;
    expect(list.results[0].status).toBe("invited");
  });

  it("limits invite attempts per address: 30 a minute over any links, then 429", async () => {
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 36 }, () =>
        p.call("POST", "invite/", { body: { token: randomBytes(32).toString("base64url") }, address }),
      ),
    );
    const count = statuses(answers);
    expect(count[404]).toBe(30);
    expect(count[429]).toBe(6);
  });
});

describe("the Origin check on portal writes, with hostile neighbours", () => {
  let t: TestApp;
  let local: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { PUBLIC_BASE_URL: "https://svc.example" });
    local = await startTestApp({ name: "pglite" });
  });
  afterAll(async () => {
    await t?.stop();
    await local?.stop();
  });

  async function cookieOf(app: TestApp, origin: string) {
    const provider = await app.provider();
    const invited = (await (
      await app.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/`, {
        auth: await app.token(),
        body: { email: `origin.${randomBytes(3).toString("hex")}@portal-security.example`, name: "Origin Person" },
      })
    ).json()) as Json;
    const token = String(invited.invite_url).split("#invite=")[1];
    const headers = { origin };
    expect(
      (await app.call("POST", "/api/v1/portal/invite/accept/", { body: { token, password: PASSWORD }, headers }))
        .status,
    ).toBe(200);
    const signed = await app.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: invited.user.email, password: PASSWORD },
      headers,
    });
    expect(signed.status).toBe(200);
    return (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }

  /** A write with a session (a test key issued) and one without (sign-out), from `origin` (undefined: no header). */
  async function writes(app: TestApp, cookie: string, origin: string | undefined) {
    const headers = { cookie, ...(origin !== undefined && { origin }) };
    return [
      await app.call("POST", "/api/v1/portal/keys/test/", { headers }),
      await app.call("PUT", "/api/v1/portal/webhook/", { headers, body: { webhook_url: null } }),
      await app.call("POST", "/api/v1/portal/sign_out/", { headers: origin === undefined ? {} : { origin } }),
    ];
  }

  it("takes PUBLIC_BASE_URL's origin exactly: not a prefix, a suffix, another scheme or port, null, or none", async () => {
    const own = "https://svc.example";
    const cookie = await cookieOf(t, own);
    for (const hostile of [
      "https://svc.example.evil",
      "https://svc.example.evil.example",
      "https://evilsvc.example",
      "https://evil.svc.example",
      "http://svc.example",
      "https://svc.example:8443",
      "https://svc.example:443.evil",
      "null",
      "HTTPS://SVC.EXAMPLE.evil",
      undefined,
    ]) {
      for (const res of await writes(t, cookie, hostile)) {
        expect(res.status, `${hostile}`).toBe(403);
        expect(((await res.json()) as Json).code, `${hostile}`).toBe("cross_origin_refused");
      }
    }
    const [issued, webhook, signedOut] = await writes(t, cookie, own);
    expect(issued?.status).toBe(201);
    expect(webhook?.status).toBe(200);
    expect(signedOut?.status).toBe(204);
  });

  it("without PUBLIC_BASE_URL takes the origin the request came to, exactly", async () => {
    const own = local.url; // http://127.0.0.1:<port>
    const port = new URL(own).port;
    const cookie = await cookieOf(local, own);
    for (const hostile of [
      `${own}.evil.example`,
      `${own}0`,
      `http://127.0.0.1:${Number(port) + 1}`,
      `https://127.0.0.1:${port}`,
      "http://127.0.0.1",
      `http://localhost:${port}`,
      `http://evil127.0.0.1:${port}`,
      "null",
      undefined,
    ]) {
      for (const res of await writes(local, cookie, hostile)) {
        expect(res.status, `${hostile}`).toBe(403);
        expect(((await res.json()) as Json).code).toBe("cross_origin_refused");
      }
    }
    const [issued] = await writes(local, cookie, own);
    expect(issued?.status).toBe(201);
  });
});

/** Every operation under /api/v1/portal/ in openapi.yaml: method, path template and parameters. */
function portalOperations(): { method: string; path: string; url: string }[] {
  const spec = parse(readFileSync(new URL("../openapi/openapi.yaml", import.meta.url), "utf8")) as Json;
  const sample: Record<string, string> = {
    external_id: "some-lead",
    request_id: "00000000-0000-4000-8000-000000000000",
    delivery_id: "1",
  };
  return Object.entries(spec.paths as Json)
    .filter(([path]) => path.startsWith("/api/v1/portal/"))
    .flatMap(([path, item]) =>
      Object.keys(item as Json)
        .filter((m) => ["get", "put", "post", "patch", "delete"].includes(m))
        .map((method) => ({
          method: method.toUpperCase(),
          path,
          url: path.replace(/\{(\w+)\}/g, (_m, name: string) => sample[name] ?? "x"),
        })),
    );
}

describe("the second-factor gate (PORTAL_REQUIRE_2FA) on every portal route of openapi.yaml", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { PORTAL_REQUIRE_2FA: "true" });
  });
  afterAll(() => t?.stop());

  /** Open without a session (sign-in, invites), or what a user without a factor needs to get one. */
  const UNGATED = new Set([
    "POST /api/v1/portal/sign_in/",
    "POST /api/v1/portal/sign_out/",
    "POST /api/v1/portal/invite/",
    "POST /api/v1/portal/invite/accept/",
    "GET /api/v1/portal/me/",
    "POST /api/v1/portal/me/second_factor/",
    "POST /api/v1/portal/me/second_factor/confirm/",
    // Asked for before signing in: whether reset is offered, the request and the link's use.
    "GET /api/v1/portal/password_reset/",
    "POST /api/v1/portal/password_reset/",
    "POST /api/v1/portal/password_reset/confirm/",
  ]);

  it("refuses a signed-in user without a second factor on every route but sign-in, sign-out, password reset, me and enrolment, reads included", async () => {
    const operations = portalOperations();
    const gated = operations.filter((o) => !UNGATED.has(`${o.method} ${o.path}`));
    // The table is read from the contract: a new portal route is in it without editing this test.
    expect(operations.filter((o) => UNGATED.has(`${o.method} ${o.path}`))).toHaveLength(UNGATED.size);
    expect(gated.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining([
        "GET /api/v1/portal/webhook/",
        "GET /api/v1/portal/keys/test/",
        "GET /api/v1/portal/leads/{external_id}/",
        "POST /api/v1/portal/webhook/rotate_secret/",
      ]),
    );
    expect(gated.length).toBeGreaterThanOrEqual(15);

    const provider = await t.provider();
    const invited = (await (
      await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/`, {
        auth: await t.token(),
        body: { email: "gate@portal-security.example", name: "Gate Person" },
      })
    ).json()) as Json;
    const token = String(invited.invite_url).split("#invite=")[1];
    const headers = { origin: t.url };
    await t.call("POST", "/api/v1/portal/invite/accept/", { body: { token, password: PASSWORD }, headers });
    const signed = await t.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: "gate@portal-security.example", password: PASSWORD },
      headers,
    });
    const cookie = (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect((await t.call("GET", "/api/v1/portal/me/", { headers: { cookie } })).status).toBe(200);

    for (const op of gated) {
      for (const body of op.method === "GET"
        ? [undefined]
        : [undefined, {}, { webhook_url: "https://hooks.example.com/x", overlap_seconds: 60 }]) {
        const res = await t.call(op.method, op.url, {
          headers: { ...headers, cookie },
          ...(body !== undefined && { body }),
        });
        expect(res.status, `${op.method} ${op.url} ${JSON.stringify(body)}`).toBe(403);
        expect(((await res.json()) as Json).code, `${op.method} ${op.url}`).toBe("second_factor_required");
      }
    }
    // Nothing was changed or revealed on the way.
    const detail = (await (
      await t.call("GET", `/api/v1/lead_providers/${provider.id}/`, { auth: await t.token() })
    ).json()) as Json;
    expect(detail.webhook_url).toBeNull();
    expect(detail.test_api_key).toBeNull();
  });
});

describe("portal isolation from a provider id smuggled outside the path", () => {
  let t: TestApp;
  let p: ReturnType<typeof portalOf>;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { TRUST_PROXY: "1" });
    p = portalOf(t);
  });
  afterAll(() => t?.stop());

  it("a header, a query member or a body member naming another provider never changes whose data is read or written", async () => {
    const mine = await t.provider("Isolated A");
    const theirs = await t.provider("Isolated B");
    const admin = await p.admin;
    await t.call("PATCH", `/api/v1/lead_providers/${theirs.id}/`, {
      auth: admin,
      body: { webhook_url: "https://theirs.example.com/hook" },
    });
    const { cookie } = await p.activeUser(mine.id);
    const smuggle = {
      "x-provider-id": String(theirs.id),
      "x-lead-provider-id": String(theirs.id),
      "x-forwarded-provider": String(theirs.id),
    };
    const me = (await (await p.call("GET", "me/", { cookie, headers: smuggle })).json()) as Json;
    expect(me.provider.name).toBe("Isolated A");
    const hook = await p.call("GET", "webhook/", { cookie, headers: smuggle });
    expect(await hook.text()).not.toContain("theirs.example.com");
    for (const path of ["me/", "webhook/", "keys/", "leads/", "stats/"]) {
      const res = await p.call("GET", `${path}?provider_id=${theirs.id}`, { cookie });
      // An unknown query member is refused, naming it: nothing is read.
      expect(res.status, path).toBe(400);
      expect(await res.text(), path).toContain("provider_id");
    }

    const set = await p.call("PUT", "webhook/", {
      cookie,
      headers: smuggle,
      body: { webhook_url: "https://mine.example.com/hook", provider_id: theirs.id },
    });
    expect([200, 400]).toContain(set.status);
    const issued = await p.call("POST", "keys/test/", { cookie, headers: smuggle, body: { provider_id: theirs.id } });
    expect([201, 400]).toContain(issued.status);
    const rotated = await p.call("POST", "webhook/rotate_secret/", {
      cookie,
      headers: smuggle,
      body: { provider_id: theirs.id },
    });
    expect([200, 400, 404, 409]).toContain(rotated.status);

    const [a, b] = await Promise.all(
      [mine, theirs].map(
        async (x) => (await (await t.call("GET", `/api/v1/lead_providers/${x.id}/`, { auth: admin })).json()) as Json,
      ),
    );
    expect(b?.webhook_url).toBe("https://theirs.example.com/hook");
    expect(b?.test_api_key).toBeNull();
    if (set.status === 200) expect(a?.webhook_url).toBe("https://mine.example.com/hook");
    if (issued.status === 201) expect(a?.test_api_key).not.toBeNull();
    const audit = await sql<{ target_id: string; actor: string }>`
      select target_id, actor from audit_log where actor like 'portal:%'`.execute(t.app.database.db);
    expect(audit.rows.filter((r) => r.target_id === String(theirs.id))).toEqual([]);
  });
});

describe("a password set from a fresh invite", () => {
  let t: TestApp;
  let p: ReturnType<typeof portalOf>;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { TRUST_PROXY: "1" });
    p = portalOf(t);
  });
  afterAll(() => t?.stop());

  it("ends the user's other sessions, including one started with the old password after the invite was issued", async () => {
    const provider = await t.provider("Fresh invite provider");
    const { email, userId, cookie: before } = await p.activeUser(provider.id);
    const reissued = (await (
      await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/${userId}/invite/`, {
        auth: await p.admin,
      })
    ).json()) as Json;
    expect((await p.call("GET", "me/", { cookie: before })).status).toBe(401);
    // The old password keeps working until the link is used.
    const meanwhile = await p.signIn(email);
    expect(meanwhile.res.status).toBe(200);
    const elsewhere = await p.signIn(email);
    expect((await p.call("GET", "me/", { cookie: meanwhile.cookie })).status).toBe(200);

    const fresh = String(reissued.invite_url).split("#invite=")[1];
    const newPassword = "copper lantern meadow 41 drift";
    const accepted = await p.call("POST", "invite/accept/", {
      body: { token: fresh, password: newPassword },
      cookie: meanwhile.cookie,
      address: freshAddress(),
    });
    expect(accepted.status).toBe(200);
    for (const cookie of [meanwhile.cookie, elsewhere.cookie]) {
      const res = await p.call("GET", "me/", { cookie });
      expect(res.status).toBe(401);
      expect(((await res.json()) as Json).code).toBe("session_required");
    }
    expect((await p.signIn(email)).res.status).toBe(401);
    expect((await p.signIn(email, newPassword)).res.status).toBe(200);
  });
});
