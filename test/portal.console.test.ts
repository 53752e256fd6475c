/**
 * The provider portal at /portal/, driven in Debian's chromium (playwright-core) the way docs/portal.md
 * walks it: an administrator invites a person in the back office and copies the link; the person
 * chooses a password, signs in, sees only its provider's leads, requests and statistics, sets the
 * webhook URL to a receiver this test runs, sends a test event (delivered and verified with the
 * secret the page shows), issues a test key, creates a test lead with the page's curl, and signs
 * out. axe-core checks every screen at 1280 and 390 px, which must not scroll sideways.
 * PORTAL_SCREENSHOTS=<dir> saves each screen.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";
import { clearOfDayEnd } from "./helpers/timing.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`portal.console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.PORTAL_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "copper violet tundra 87 quay";
const run = promisify(execFile);

// Each check drives chromium through many screens, minutes on a loaded 2-core machine: 300 s, and
// the walk, which may first wait out a day's end, 390 s.
describe.skipIf(!HAVE_CHROMIUM)("the provider portal in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let receiver: Receiver;
  let mine: { id: number; key: string };
  let theirs: { id: number; key: string };
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    watchedContext(
      browser,
      t.url,
      size,
      { problems, elsewhere },
      {
        // A refused sign-in or a deliberately weak password is an answer the page shows, not a fault.
        ignoreConsole: /status of (400|401)/,
      },
    );

  /** axe-core on the current screen (no serious or critical violation) and no sideways scrolling. */
  async function check(page: Page, screen: string): Promise<void> {
    const bad = await axeViolations(page);
    const width = page.viewportSize()?.width ?? 0;
    expect(bad, `${screen} at ${width} px: accessibility\n${bad.join("\n")}`).toEqual([]);
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `${screen}-${width}.png`), fullPage: width > 400 });
    }
  }

  async function signIn(page: Page, email: string) {
    await page.goto(`${t.url}/portal/`);
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This week" }).waitFor();
  }

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000" });
    receiver = await startReceiver();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    mine = await t.provider("Harbor Leads");
    theirs = await t.provider("Other Leads");
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.stop();
  });

  const email = `dana.${Date.now()}@harbor-leads.example`;
  const ours = leadBody({ note_from_shipper: "ours" });
  const other = leadBody({ note_from_shipper: "theirs" });
  let ourRequestId = "";
  let ourOrder = "";
  let otherOrder = "";

  it("walks the whole path: invited in the back office, password, own data only, webhook test verified, test key and test lead, sign-out", async () => {
    await clearOfDayEnd(); // this week's numbers below count the lead made now
    // Leads of both providers, each with its request in the log.
    const a = await t.call("POST", "/api/v1/public/leads/", { auth: mine.key, body: ours });
    const b = await t.call("POST", "/api/v1/public/leads/", { auth: theirs.key, body: other });
    expect([a.status, b.status]).toEqual([201, 201]);
    ourRequestId = String(a.headers.get("x-request-id"));
    ourOrder = ((await a.json()) as Json).order_number;
    otherOrder = ((await b.json()) as Json).order_number;
    await t.app.requestLog?.flush();

    // The administrator invites Dana on the provider's page and copies the link.
    const admin = await newContext();
    const console_ = await admin.newPage();
    await console_.goto(`${t.url}/admin/`);
    await console_.getByRole("button", { name: "Use the development token" }).click();
    await console_.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    await console_.goto(`${t.url}/admin/providers/${mine.id}/show/portal-users`);
    const panel = console_.getByRole("region", { name: "Portal users" });
    await panel.getByLabel("Email").fill(email);
    await panel.getByLabel("Name").fill("Dana Ruiz");
    await panel.getByRole("button", { name: "Invite" }).click();
    await panel.getByTestId("invite-url").waitFor();
    await panel.getByRole("button", { name: "Copy link" }).click();
    const link = String(await console_.evaluate("navigator.clipboard.readText()"));
    expect(link).toMatch(/\/portal\/#invite=[A-Za-z0-9_-]{43}$/);
    await panel.getByRole("cell", { name: `Dana Ruiz (${email})` }).waitFor();
    await admin.close();

    // Dana opens the link in her own browser: the token leaves the address bar at once.
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "Choose your password" }).waitFor();
    expect(page.url()).toBe(`${t.url}/portal/invite`);
    await page.getByText("you are invited to the portal of").waitFor();
    await check(page, "invite");
    await page.getByLabel("New password").fill("password1234");
    await page.getByLabel("Repeat the password").fill("password1234");
    await page.getByRole("button", { name: "Set password" }).click();
    await page
      .getByRole("alert")
      .getByText(/too easy to guess|must not contain/)
      .waitFor();
    await page.getByLabel("New password").fill(PASSWORD);
    await page.getByLabel("Repeat the password").fill(PASSWORD);
    await page.getByRole("button", { name: "Set password" }).click();
    await page.getByText("Your password is set.").waitFor();
    await page.getByRole("button", { name: "Go to sign-in" }).click();
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await check(page, "sign-in");
    // A wrong password first: the generic answer.
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("not the password at all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("email or password is incorrect").waitFor();
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This week" }).waitFor();

    // The session is an HttpOnly, Secure, SameSite=Strict __Host- cookie no script can read.
    const cookie = (await context.cookies()).find((c) => c.name === "__Host-portal");
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    expect(await page.evaluate("document.cookie")).toBe("");

    // The provider's name on the page; this week's numbers count its one lead.
    await expect.poll(() => page.getByTestId("provider-name").textContent()).toBe("Harbor Leads");
    await expect.poll(() => page.getByTestId("figure-submitted").textContent()).toBe("1");
    await page.getByTestId("intake-status").getByText("Intake is open").waitFor();
    await check(page, "home");

    // Leads: its own, not the other provider's.
    await page.getByRole("menuitem", { name: "Leads" }).click();
    await page.getByText(ourOrder).first().waitFor();
    expect(await page.getByText(otherOrder).count()).toBe(0);
    await check(page, "leads");
    await page.getByText(ourOrder).first().click();
    await page.getByText(String(ours.external_id)).first().waitFor();
    await check(page, "lead");

    // Requests: find its create by request id.
    await page.getByRole("menuitem", { name: "Requests" }).click();
    await page.getByRole("button", { name: "Find" }).waitFor();
    await check(page, "requests");
    await page.getByLabel("Request id").fill(ourRequestId);
    await page.getByRole("button", { name: "Find" }).click();
    await page.getByText(ourRequestId).first().waitFor();
    await page.getByText("POST /api/v1/public/leads/").first().waitFor();
    await check(page, "request");

    // Statistics.
    await page.getByRole("menuitem", { name: "Statistics" }).click();
    await expect.poll(() => page.getByTestId("stats-totals").textContent()).toMatch(/^1 submitted, 1 accepted/);
    const download = page.waitForEvent("download");
    await page.getByRole("button", { name: "Download CSV" }).click();
    expect((await download).suggestedFilename()).toMatch(/^stats-live-.*\.csv$/);
    await check(page, "statistics");

    // Webhooks: set the URL, send a test event, verify it with the secret the page shows.
    await page.getByRole("menuitem", { name: "Webhooks" }).click();
    await page.getByLabel("Webhook URL").fill(receiver.url);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText(/^The webhook is saved\. Events sent: /).waitFor();
    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByText(/^Test event evt_\w+ delivered: your endpoint answered 204/).waitFor();
    await page.getByRole("button", { name: "Show secret" }).click();
    const secret = (await page.getByTestId("webhook-secret").textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    const sent = receiver.ofType("webhook.test");
    expect(sent).toHaveLength(1);
    const verified = new Webhook(secret).verify(sent[0]?.body ?? "", sent[0]?.headers ?? {}) as Json;
    expect(verified.type).toBe("webhook.test");
    await check(page, "webhooks");

    // Sandbox: issue a test key and run the page's curl as it stands.
    await page.getByRole("menuitem", { name: "Sandbox" }).click();
    await page.getByRole("button", { name: "Issue test key" }).click();
    const testKey = (await page.getByTestId("test-key").textContent()) ?? "";
    expect(testKey).toMatch(/^lp_test_/);
    await page.getByRole("cell", { name: "sandbox:quote" }).waitFor();
    await check(page, "sandbox");
    const curl = (await page.getByTestId("sandbox-curl").textContent()) ?? "";
    const { stdout } = await run("bash", ["-c", curl]);
    const created = JSON.parse(stdout) as Json;
    expect(created).toMatchObject({ livemode: false, state: "LEAD" });
    // The SDK snippet beside it carries the same key (test/sdk-typescript-package.test.ts runs it).
    expect(await page.getByTestId("sandbox-sdk").textContent()).toContain(`apiKey: "${testKey}"`);

    // With a key issued, showing it is the filled (primary) button; rotating is an outlined one that asks first.
    const showKey = page.getByRole("button", { name: "Show test key" });
    const rotate = page.getByRole("button", { name: "Rotate test key" });
    await rotate.waitFor();
    const fill = (l: typeof rotate) =>
      l.evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el)
            .backgroundColor,
      );
    expect(await fill(showKey)).not.toBe("rgba(0, 0, 0, 0)");
    expect(await fill(rotate)).toBe("rgba(0, 0, 0, 0)");
    const live = (key: string) =>
      t.call("GET", `/api/v1/public/leads/${encodeURIComponent(String(created.external_id))}/`, { auth: key });
    await rotate.click();
    const ask = page.getByRole("dialog", { name: "Rotate the test key?" });
    await ask.getByText("keeps working for one more hour, then stops", { exact: false }).waitFor();
    await check(page, "sandbox-rotate");
    // Cancelled: nothing changes, the key shown and the key that works are the same.
    await ask.getByRole("button", { name: "Cancel" }).click();
    await ask.waitFor({ state: "hidden" });
    await showKey.click();
    await expect.poll(() => page.getByTestId("test-key").textContent()).toBe(testKey);
    const session = { headers: { cookie: `__Host-portal=${cookie?.value}` } };
    expect((await (await t.call("GET", "/api/v1/portal/keys/test/", session)).json()) as Json).toMatchObject({
      api_key: testKey,
      previous_key_expires_at: null,
    });
    // Confirmed: a new key, shown with the curl; the old one keeps working for its hour.
    await rotate.click();
    await ask.getByRole("button", { name: "Rotate test key" }).click();
    await page.getByText(/^A new test key is issued; the previous one works until /).waitFor();
    await expect.poll(() => page.getByTestId("test-key").textContent()).not.toBe(testKey);
    const rotated = (await page.getByTestId("test-key").textContent()) ?? "";
    expect(rotated).toMatch(/^lp_test_/);
    expect(await page.getByTestId("sandbox-curl").textContent()).toContain(rotated);
    expect((await live(rotated)).status).toBe(200);
    expect((await live(testKey)).status).toBe(200);
    // The test lead, under the test mode of Leads.
    await page.goto(`${t.url}/portal/leads?filter=${encodeURIComponent(JSON.stringify({ mode: "test" }))}`);
    await page.getByText(created.order_number).first().waitFor();
    expect(await page.getByText(ourOrder).count()).toBe(0);

    await page.getByRole("menuitem", { name: "Integration docs" }).click();
    await page.getByRole("link", { name: "API reference" }).waitFor();
    await check(page, "docs");
    await page.getByRole("menuitem", { name: "Account" }).click();
    await page.getByRole("button", { name: "Set up an authenticator app" }).waitFor();
    await check(page, "account");

    // Sign out: back at sign-in, and the session is over on the server too.
    const old = cookie?.value ?? "";
    await page.getByRole("button", { name: "Dana Ruiz" }).click();
    await page.getByRole("menuitem", { name: "Logout" }).click();
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    const after = await t.call("GET", "/api/v1/portal/me/", { headers: { cookie: `__Host-portal=${old}` } });
    expect(after.status).toBe(401);
    await context.close();

    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 390_000);

  it("fits a 390 px phone on every screen, with no serious or critical axe violation", async () => {
    const context = await newContext(PHONE);
    const page = await context.newPage();
    await page.goto(`${t.url}/portal/`);
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await check(page, "sign-in");
    await signIn(page, email);
    await check(page, "home");
    for (const [path, screen, ready] of [
      ["/portal/leads", "leads", ourOrder],
      [`/portal/leads/${encodeURIComponent(String(ours.external_id))}/show`, "lead", String(ours.external_id)],
      ["/portal/requests", "requests", "POST /api/v1/public/leads/"],
      [`/portal/requests/${ourRequestId}/show`, "request", ourRequestId],
      ["/portal/statistics", "statistics", "Download CSV"],
      ["/portal/webhooks", "webhooks", "Deliveries"],
      ["/portal/sandbox", "sandbox", "Reserved test values"],
      ["/portal/docs", "docs", "API reference"],
      ["/portal/account", "account", "Second factor"],
    ] as const) {
      await page.goto(`${t.url}${path}`);
      await page.getByText(ready).first().waitFor();
      await check(page, screen);
    }
    await context.close();
    expect(problems).toEqual([]);
  }, 300_000);
});
