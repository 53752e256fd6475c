/**
 * Where a browser keeps the portal's session cookie (`__Host-portal`: Secure, so over plain http
 * only from an origin the browser counts as trustworthy): Debian's chromium, driven by
 * playwright-core, signs in from a page of each address of one service on
 * loopback and asks `me/`. What the README says of development without TLS is what this shows:
 * kept at http://localhost, http://127.0.0.1 and http://[::1]; dropped at http://0.0.0.0 and under
 * any other name for the machine (here `portal.test`, which chromium is told resolves to
 * 127.0.0.1), where the sign-in answers 200 and the next request has no session.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`portal-cookie.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const PASSWORD = "quay tundra violet 87 harbor";

describe.skipIf(!HAVE_CHROMIUM)("the portal's session cookie over plain http in chromium", () => {
  let t: TestApp;
  let browser: Browser;
  let email: string;
  beforeAll(async () => {
    // Both stacks on loopback, so http://[::1]:port reaches the same service.
    t = await startTestApp({ name: "pglite" }, { HOST: "::" });
    const admin = await t.token();
    const provider = await t.provider();
    email = `cookie.${Date.now()}@acme.example`;
    const invited = await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/`, {
      auth: admin,
      body: { email, name: "Dana Ruiz" },
    });
    expect(invited.status).toBe(201);
    const token = String(((await invited.json()) as Json).invite_url).split("#invite=")[1];
    const accepted = await t.call("POST", "/api/v1/portal/invite/accept/", {
      body: { token, password: PASSWORD },
      headers: { origin: t.url },
    });
    expect(accepted.status).toBe(200);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--host-resolver-rules=MAP portal.test 127.0.0.1",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  /** Signs in from the portal's page at `origin`; the status of the sign-in and of `me/` after it. */
  async function signInAt(origin: string): Promise<{ signIn: number; me: number; cookies: string[] }> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // A page of the origin that runs no script of its own: the portal app, opened here, checks
      // its session on load and signs out on the 401, racing the sign-in below.
      await page.goto(`${origin}/portal/favicon.svg`);
      const statuses = await page.evaluate(
        async ({ email, password }) => {
          const signIn = await fetch("/api/v1/portal/sign_in/", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ email, password }),
          });
          const me = await fetch("/api/v1/portal/me/");
          return { signIn: signIn.status, me: me.status };
        },
        { email, password: PASSWORD },
      );
      const cookies = (await context.cookies()).map((c) => c.name);
      return { ...statuses, cookies };
    } finally {
      await context.close();
    }
  }

  it.each(["localhost", "127.0.0.1", "[::1]"])("keeps it at http://%s", async (host) => {
    const result = await signInAt(`http://${host}:${t.port}`);
    expect(result).toEqual({ signIn: 200, me: 200, cookies: ["__Host-portal"] });
  });

  it.each(["portal.test", "0.0.0.0"])(
    "drops it at http://%s, another name for the same machine: signed in, then no session",
    async (host) => {
      const result = await signInAt(`http://${host}:${t.port}`);
      expect(result).toEqual({ signIn: 200, me: 401, cookies: [] });
    },
  );
});
