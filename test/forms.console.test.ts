/**
 * The drop-in form's screens in Debian's chromium (playwright-core), against a real server: one of
 * the provider's people opens the portal's Form page (keys, the snippet exactly as the service
 * gives it, this week's form leads and refusals by reason), rotates the test key after a
 * confirmation, has an origin refused under its field and then saved, writes a consent text with
 * markup that the preview shows as text; an administrator sees a form lead's source and opens
 * its consent record, which prints without the buttons, and rotates the provider's live key on
 * the provider page. axe-core checks every screen at 1280 and 390 px (no serious or critical
 * violation), and none scrolls sideways. FORMS_SCREENSHOTS=<dir> saves each screen.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { solveChallenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";
import { freshLead, portalPerson } from "./helpers/money.ts";
import { pollUntil } from "./helpers/timing.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`forms.console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.FORMS_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "juniper lantern meadow 52 dock";
const SITE = "https://quotes.example";
/** What a person typed into a field, markup and all: every screen shows it as text. */
const TYPED = '<img src=x onerror="window.pwned=1"> Gonzalez <b>Design</b>';
const FORM = "/api/v1/forms";

describe.skipIf(!HAVE_CHROMIUM)("the drop-in form's screens in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let admin: string;
  let provider: { id: number; key: string };
  let person: Awaited<ReturnType<typeof portalPerson>>;
  let created: Json;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    // A refused origin is an answer the page shows; so is the portal's 401 before sign-in.
    watchedContext(browser, t.url, size, { problems, elsewhere }, { ignoreConsole: /status of (400|401)/ });

  async function check(page: Page, screen: string): Promise<void> {
    const bad = await axeViolations(page);
    const width = page.viewportSize()?.width ?? 0;
    expect(bad, `${screen} at ${width} px: accessibility\n${bad.join("\n")}`).toEqual([]);
    // The page's width once its fonts are in (a font that arrives late can widen a line).
    const scrollWidth = await page.evaluate(async () => {
      const d = (
        globalThis as unknown as {
          document: { fonts: { ready: Promise<unknown> }; documentElement: { scrollWidth: number } };
        }
      ).document;
      await d.fonts.ready;
      return d.documentElement.scrollWidth;
    });
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `${screen}-${width}.png`), fullPage: true });
    }
  }

  const form = (method: string, path: string, key: string, body?: unknown) =>
    fetch(`${t.url}${FORM}${path}`, {
      method,
      headers: {
        "x-publishable-key": key,
        origin: SITE,
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });

  /** What the element sends, with a challenge solved as the widget solves it. */
  async function formLead(key: string, over: Json = {}): Promise<Response> {
    const challenge = (await (await form("GET", "/challenge/", key)).json()) as Json;
    const solution = await solveChallenge({ challenge: challenge as never, deriveKey });
    const config = (await (await form("GET", "/config/", key)).json()) as Json;
    const { external_id: _, ...lead } = freshLead({ sub_id: "fb-spring" });
    return form("POST", "/leads/", key, {
      ...lead,
      consent: { accepted: true, text_sha256: config.consent_text_sha256, accepted_at: new Date().toISOString() },
      page_url: `${SITE}/quote?utm_source=fb-spring`,
      altcha: Buffer.from(JSON.stringify({ challenge, solution })).toString("base64"),
      company_website: "",
      ...over,
    });
  }

  async function signIn(page: Page) {
    await page.goto(`${t.url}/portal/`);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This week" }).waitFor();
  }

  beforeAll(async () => {
    t = await startTestApp(
      { name: "pglite" },
      { BROKER_NAME: "Acme Auto Transport", FORM_LIMIT_PER_IP_PER_HOUR: "1000", RATE_LIMIT_PER_MINUTE: "1000" },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    admin = await t.token();
    provider = await t.provider(`Form Screens ${Date.now()}`);
    const issued = await t.call("POST", `/api/v1/lead_providers/${provider.id}/publishable_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    expect(issued.status, await issued.clone().text()).toBe(201);
    const testKey = ((await issued.json()) as Json).publishable_key as string;
    const set = await t.call("PUT", `/api/v1/lead_providers/${provider.id}/form_settings/`, {
      auth: admin,
      body: { allowed_origins: [SITE], consent_text: null, enabled: true },
    });
    expect(set.status, await set.clone().text()).toBe(200);
    // One form lead, and one submission a program filled in (the hidden field).
    const ok = await formLead(testKey, { company_name: TYPED });
    expect(ok.status, await ok.clone().text()).toBe(201);
    created = (await ok.json()) as Json;
    const bot = await formLead(testKey, { company_website: "https://spam.example" });
    expect(bot.status).toBe(400);
    person = await portalPerson(t, admin, provider.id, PASSWORD);
    // The refusal reaches the week's counts through the request log: wait for it there.
    await pollUntil(
      "the honeypot refusal in the week's counts",
      async () => {
        const refusals = ((await (await person.portal("GET", "form_stats/?mode=test")).json()) as Json).refusals;
        return {
          ok: JSON.stringify(refusals) === '[{"code":"honeypot_filled","count":1}]',
          seen: JSON.stringify(refusals),
        };
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  }, 270_000);

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("lets one of the provider's people run the form from the portal, at 1280 and 390 px", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page);
    await page
      .getByRole("menuitem", { name: "Form" })
      .or(page.getByRole("link", { name: "Form" }))
      .first()
      .click();
    await page.getByRole("heading", { name: "Drop-in form", level: 1 }).waitFor();
    const shown = (await (await person.portal("GET", "form_settings/")).json()) as Json;
    await expect.poll(() => page.getByTestId("snippet-test").textContent()).toBe(shown.snippets.test);
    await page.getByTestId("form-leads").getByText("1 form lead since").waitFor();
    await page.getByRole("table", { name: "Refused submissions by reason" }).getByText("honeypot_filled").waitFor();
    // The preview: the element itself, with the default text naming the broker.
    await page.getByRole("checkbox", { name: /Acme Auto Transport/ }).waitFor();
    await check(page, "portal-form");

    // Rotating the test key asks first; the snippet then carries the new key.
    const before = shown.publishable_keys.test.publishable_key as string;
    await page.getByRole("button", { name: "Rotate test key" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate the test publishable key?" });
    await dialog.getByText("stops at once").waitFor();
    await check(page, "portal-form-rotate");
    await dialog.getByRole("button", { name: "Rotate" }).click();
    await page.getByText("A new test publishable key is issued").waitFor();
    const after = (await (await person.portal("GET", "form_settings/")).json()) as Json;
    const newKey = after.publishable_keys.test.publishable_key as string;
    expect(newKey).not.toBe(before);
    await page.getByTestId("publishable-key-test").getByText(newKey).waitFor();
    await expect.poll(() => page.getByTestId("snippet-test").textContent()).toBe(after.snippets.test);

    // An origin the service refuses: its words under the field; then one it takes.
    await page.getByRole("button", { name: "Add an origin" }).click();
    const second = page.getByLabel("Allowed origin 2");
    await second.fill("http://shop.example");
    await page.getByRole("button", { name: "Save form settings" }).click();
    await page.getByText("The settings were not saved: 1 field needs a change.").waitFor();
    expect(await second.getAttribute("aria-invalid")).toBe("true");
    const described = await second.getAttribute("aria-describedby");
    expect(await page.locator(`[id="${described}"]`).textContent()).toContain("http://shop.example must use https://");
    await check(page, "portal-form-refused");
    await second.fill("https://shop.example");
    // The provider's own consent text, with markup: the preview shows it as text.
    await page.getByLabel("Use the default text").uncheck();
    const text = "I agree that <b>Form Screens</b> may call and text me about shipping my vehicle.";
    await page.getByLabel("Consent text", { exact: true }).fill(text);
    await page.getByRole("button", { name: "Save form settings" }).click();
    await page.getByText("The form settings are saved.").waitFor();
    const saved = (await (await person.portal("GET", "form_settings/")).json()) as Json;
    expect(saved).toMatchObject({
      allowed_origins: [SITE, "https://shop.example"],
      consent_text: text,
      consent_text_is_default: false,
    });
    await page.getByRole("checkbox", { name: text }).waitFor();
    const bold = await page.evaluate(
      () =>
        (
          globalThis as unknown as {
            document: { querySelector(s: string): { shadowRoot: { querySelectorAll(s: string): unknown[] } } };
          }
        ).document
          .querySelector("lead-quote-form")
          .shadowRoot.querySelectorAll("b").length,
    );
    expect(bold).toBe(0);
    await check(page, "portal-form-saved");

    // The form lead's page says where it came in and shows its consent record, markup as text.
    await page.goto(`${t.url}/portal/leads/${encodeURIComponent(created.external_id)}/show?mode=test`);
    await page.getByText("Your drop-in form").waitFor();
    await page.getByTestId("consent-text").waitFor();
    const record = (await (await person.portal("GET", `consents/${created.consent_id}/`)).json()) as Json;
    expect(await page.getByTestId("consent-text").textContent()).toBe(record.text);
    expect(await page.getByText(TYPED, { exact: true }).count()).toBeGreaterThan(0);
    await check(page, "portal-form-lead");
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await signIn(small);
    await small.goto(`${t.url}/portal/form`);
    await small.getByRole("heading", { name: "Drop-in form", level: 1 }).waitFor();
    await small.getByRole("checkbox", { name: text }).waitFor();
    await check(small, "portal-form");
    await phone.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("shows an administrator a form lead's source and its printable consent record, at 1280 and 390 px", async () => {
    const record = (await (
      await t.call("GET", `/api/v1/admin/consents/${created.consent_id}/`, { auth: admin })
    ).json()) as Json;
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/admin/`);
    await page.getByRole("button", { name: "Use the development token" }).click();
    await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    await page.goto(`${t.url}/admin/leads/${record.lead_id}/show`);
    await page.getByText("Drop-in form", { exact: true }).waitFor();
    await check(page, "console-form-lead");
    await page.getByRole("link", { name: `Consent record ${created.consent_id}` }).click();
    await page.getByRole("heading", { name: `Consent record ${created.consent_id}` }).waitFor();
    expect(await page.getByTestId("consent-text").textContent()).toBe(record.text);
    await page.getByRole("cell", { name: record.text_sha256 }).waitFor();
    await page.getByRole("cell", { name: `${SITE}/quote?utm_source=fb-spring` }).waitFor();
    const sentFields = page.getByRole("table", { name: "Fields as sent" });
    await sentFields.getByRole("cell", { name: "fb-spring" }).waitFor();
    await sentFields.getByRole("cell", { name: TYPED, exact: true }).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).toBeUndefined();
    await check(page, "console-consent");
    await page.emulateMedia({ media: "print" });
    expect(await page.getByRole("button", { name: "Print" }).isVisible()).toBe(false);
    await page.getByRole("heading", { name: `Consent record ${created.consent_id}` }).waitFor();
    await page.emulateMedia({ media: "screen" });

    // The provider page: the live key issued, then rotated after a red confirmation.
    await page.goto(`${t.url}/admin/providers/${provider.id}/show`);
    await page.getByRole("tab", { name: "Drop-in form" }).click();
    await page.waitForURL(`**/admin/providers/${provider.id}/show/form`);
    const panel = page.getByRole("region", { name: "Drop-in form" });
    await panel.getByRole("button", { name: "Issue live key" }).click();
    await panel.getByTestId("publishable-key-live").waitFor();
    const first = await panel.getByTestId("publishable-key-live").textContent();
    expect(first).toMatch(/^lp_pub_live_/);
    await panel.getByRole("button", { name: "Rotate live key" }).click();
    await page
      .getByRole("dialog", { name: "Rotate the live publishable key?" })
      .getByRole("button", { name: "Rotate" })
      .click();
    await expect.poll(() => panel.getByTestId("publishable-key-live").textContent()).not.toBe(first);
    await panel.getByTestId("snippet-live").getByText("quote-form.js").waitFor();
    await check(page, "console-provider-form");
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await small.goto(`${t.url}/admin/`);
    await small.getByRole("button", { name: "Use the development token" }).click();
    await small.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    await small.goto(`${t.url}/admin/consents/${created.consent_id}`);
    await small.getByTestId("consent-text").waitFor();
    await check(small, "console-consent");
    await phone.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);
});
