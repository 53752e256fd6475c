/**
 * The returns screens in Debian's chromium (playwright-core), against a real server: one of the
 * provider's people contests returns in the portal (a link that is not https refused with the
 * service's words, then sent with a statement, a consent certificate and an attachment), at
 * 1280 and 390 px; an administrator files a return from a lead's page (`other` without a note
 * refused in the dialog), then decides contested returns in the Returns queue, the provider's
 * statement and evidence beside the lead and reason, denying one at 1280 px and approving one at
 * 390 px. axe-core checks every screen (no serious or critical violation), and no screen scrolls
 * sideways. RETURNS_SCREENSHOTS=<dir> saves each screen.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";
import { countTransactions, freshLead, ISSUE_TERMS, portalPerson } from "./helpers/money.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`returns.console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.RETURNS_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "saffron glacier harbor 73 pier";

describe.skipIf(!HAVE_CHROMIUM)("the returns screens in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let admin: string;
  let provider: { id: number; key: string };
  const leads: Json[] = [];
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    // A refused contest or return is an answer the page shows, not a fault; so is the portal's
    // 401 before its person signs in.
    watchedContext(browser, t.url, size, { problems, elsewhere }, { ignoreConsole: /status of (400|401|409)/ });

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

  const fileReturn = async (leadId: number, reason: string) => {
    const res = await t.call("POST", `/api/v1/admin/leads/${leadId}/returns/`, { auth: admin, body: { reason } });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Json;
  };

  async function signIn(page: Page, email: string) {
    await page.goto(`${t.url}/portal/`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This week" }).waitFor();
  }

  beforeAll(async () => {
    t = await startTestApp(
      { name: "pglite" },
      { RATE_LIMIT_PER_MINUTE: "1000", SETTLEMENT_INTERVAL_SECONDS: "86400", RETURNS_INTERVAL_SECONDS: "86400" },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    admin = await t.token();
    provider = await t.provider(`Return Motors ${Date.now()}`);
    const terms = { ...ISSUE_TERMS, returns: { ...ISSUE_TERMS.returns, max_rate: 1 } };
    const set = await t.call("PUT", `/api/v1/lead_providers/${provider.id}/terms/`, { auth: admin, body: terms });
    expect(set.status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const res = await t.call("POST", "/api/v1/public/leads/", { auth: provider.key, body: freshLead() });
      expect(res.status).toBe(201);
      leads.push((await res.json()) as Json);
    }
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("lets one of the provider's people contest returns in the portal, at 1280 and 390 px", async () => {
    const [a, b] = leads as [Json, Json];
    await fileReturn(a.id, "not_requested");
    await fileReturn(b.id, "invalid_contact");
    const person = await portalPerson(t, admin, provider.id, PASSWORD);

    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, person.email);
    await page
      .getByRole("menuitem", { name: "Returns" })
      .or(page.getByRole("link", { name: "Returns" }))
      .first()
      .click();
    await page.getByRole("heading", { name: "Returns", level: 1 }).waitFor();
    const card = page.getByRole("article", { name: `Return of ${a.external_id}` });
    await card.getByText("The customer did not ask for a quote").waitFor();
    await check(page, "portal-returns");
    await card.getByRole("button", { name: "Contest" }).click();
    await card.getByLabel("Why the lead was good").fill("The consumer filled in our form; the certificate shows it.");
    await card.getByLabel("Consent certificate URL (https)").fill("http://cert.example.com/1");
    await card.getByRole("button", { name: "Add an attachment link" }).click();
    await card.getByLabel("Attachment 1 name").fill("Form screenshot");
    await card.getByLabel("Attachment 1 URL (https)").fill("https://files.example.com/form.png");
    await check(page, "portal-contest-form");
    await card.getByRole("button", { name: "Send contest" }).click();
    await card.getByRole("alert").getByText("https", { exact: false }).waitFor();
    await card.getByLabel("Consent certificate URL (https)").fill("https://cert.example.com/1");
    await card.getByRole("button", { name: "Send contest" }).click();
    await card.getByText("contested", { exact: true }).waitFor();
    await card.getByRole("link", { name: "Consent certificate" }).waitFor();
    await card.getByRole("link", { name: "Form screenshot" }).waitFor();
    await check(page, "portal-contested");
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await signIn(small, person.email);
    await small.goto(`${t.url}/portal/returns`);
    const other = small.getByRole("article", { name: `Return of ${b.external_id}` });
    await other.getByRole("button", { name: "Contest" }).click();
    await other.getByLabel("Why the lead was good").fill("The number answered on the first call.");
    await other.getByLabel("Call recording URL (https)").fill("https://calls.example.com/r/7.mp3");
    await check(small, "portal-contest-form");
    await other.getByRole("button", { name: "Send contest" }).click();
    await other.getByText("contested", { exact: true }).waitFor();
    await check(small, "portal-contested");
    await phone.close();

    const own = (await person.portal("GET", "returns/?state=contested").then((r) => r.json())) as Json;
    expect(own.results).toHaveLength(2);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("lets an administrator return a lead and decide contested returns in the queue, at 1280 and 390 px", async () => {
    const c = leads[2] as Json;
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/admin/`);
    await page.getByRole("button", { name: "Use the development token" }).click();
    await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();

    // Filing from the lead's page: `other` needs a note, refused in the dialog with the service's words.
    await page.goto(`${t.url}/admin/leads/${c.id}/show`);
    await page.getByRole("button", { name: "Return this lead" }).click();
    const dialog = page.getByRole("dialog", { name: `Return ${c.order_number}?` });
    await dialog.getByLabel("Reason").click();
    await page.getByRole("option", { name: "Other" }).click();
    await check(page, "admin-return-dialog");
    await dialog.getByRole("button", { name: "File return" }).click();
    await dialog.getByRole("alert").getByText("note is required", { exact: false }).waitFor();
    await dialog.getByLabel("Note (required for Other)").fill("Customer says they never asked.");
    await dialog.getByRole("button", { name: "File return" }).click();
    await page.getByText("Returned (Other):").waitFor();
    await check(page, "admin-lead-returned");

    // The queue: both contested returns, the provider's case beside the lead and reason.
    await page
      .getByRole("menuitem", { name: "Returns" })
      .or(page.getByRole("link", { name: "Returns" }))
      .first()
      .click();
    await page.getByRole("heading", { name: "Returns", level: 1 }).waitFor();
    const [a, b] = leads as [Json, Json];
    const first = page.getByRole("article", { name: `Return of lead ${a.order_number}` });
    await first.getByText("The consumer filled in our form; the certificate shows it.").waitFor();
    await first.getByRole("link", { name: "Form screenshot" }).waitFor();
    await page.getByRole("article", { name: `Return of lead ${b.order_number}` }).waitFor();
    await check(page, "admin-returns-queue");
    await first.getByLabel("Decision note (the provider reads it)").fill("The certificate matches the phone.");
    await first.getByRole("button", { name: "Deny return" }).click();
    await expect.poll(() => first.count()).toBe(0);
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await small.goto(`${t.url}/admin/`);
    await small.getByRole("button", { name: "Use the development token" }).click();
    await small.goto(`${t.url}/admin/returns`);
    const second = small.getByRole("article", { name: `Return of lead ${b.order_number}` });
    await second.getByText("The number answered on the first call.").waitFor();
    await check(small, "admin-returns-queue");
    await second.getByRole("button", { name: "Approve return" }).click();
    await expect.poll(() => second.count()).toBe(0);
    await phone.close();

    const all = (await (
      await t.call("GET", `/api/v1/admin/returns/?provider_id=${provider.id}`, { auth: admin })
    ).json()) as Json;
    const states = Object.fromEntries(all.results.map((r: Json) => [r.lead.id, r.state]));
    expect(states).toEqual({ [a.id]: "denied", [b.id]: "approved", [c.id]: "requested" });
    expect(all.results.find((r: Json) => r.lead.id === a.id).decision_note).toBe("The certificate matches the phone.");
    expect(await countTransactions(t.app.database.db, provider.id, "return")).toBe(1);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);
});
