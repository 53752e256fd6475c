/**
 * The money screens in Debian's chromium (playwright-core), against a real server: an
 * administrator edits a provider's terms (a refused member shown under its field; rules added,
 * moved and saved), previews what a lead would earn under the terms as edited, records a payout
 * (one over the available balance refused with the service's words, then one within it, each
 * confirmed in red naming the amount and the provider), and reads Payables (its CSV downloaded)
 * and the trial balance at 0; the dashboard draws the spend per day. One of the provider's people
 * then signs in to the portal and finds on Earnings the balance the ledger holds, the lines, the
 * terms in words, and a month's statement downloaded as CSV and PDF. axe-core checks every screen
 * (no serious or critical violation); Earnings and Payables must not scroll sideways at 390 px.
 * MONEY_SCREENSHOTS=<dir> saves each screen.
 */
import { existsSync, mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DateTime } from "luxon";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";
import { car, freshLead, parseCsv, portalPerson } from "./helpers/money.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`money.console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.MONEY_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "saffron glacier harbor 73 pier";
const ZONE = "America/New_York";

describe.skipIf(!HAVE_CHROMIUM)("the money screens in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let admin: string;
  let provider: { id: number; key: string };
  const name = `Ledger Motors ${Date.now()}`;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    watchedContext(
      browser,
      t.url,
      size,
      { problems, elsewhere },
      // A refused save, preview or payout is an answer the page shows, not a fault; so is the
      // portal's 401 before its person signs in.
      { ignoreConsole: /status of (400|401|409)/ },
    );

  /** axe-core on the screen, no sideways scrolling, and its screenshot when asked. */
  async function check(
    page: Page,
    screen: string,
    options: { dialog?: boolean; region?: Locator } = {},
  ): Promise<void> {
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
      const path = join(SHOTS, `${screen}-${width}.png`);
      // A panel of the provider page by itself; a page in full at desktop width.
      if (options.region) {
        // The app bar (fixed) hidden while the panel alone is taken, or it is drawn across it.
        const bar = page.locator("header").first();
        const show = (el: { style: { visibility: string } }, v: string) => {
          el.style.visibility = v;
        };
        await bar.evaluate(show, "hidden");
        await options.region.screenshot({ path });
        await bar.evaluate(show, "visible");
      } else await page.screenshot({ path, fullPage: width > 400 && !options.dialog });
    }
  }

  async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
    const [download] = await Promise.all([page.waitForEvent("download"), click()]);
    const path = await download.path();
    return { name: download.suggestedFilename(), bytes: await readFile(path) };
  }

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000", SETTLEMENT_INTERVAL_SECONDS: "86400" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    admin = await t.token();
    provider = await t.provider(name);
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("lets an administrator edit terms, preview a lead's price, pay out after a red confirmation, and read payables at 0", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/admin/`);
    await page.getByRole("button", { name: "Use the development token" }).click();
    await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    // The provider page's Money tab: the terms and the money panel.
    await page.goto(`${t.url}/admin/providers/${provider.id}/show/money`);
    const terms = page.getByRole("region", { name: "Terms" });
    await terms.getByTestId("terms-in-words").getByText("Every lead earns $0.00.").waitFor();

    // The terms as edited: prices, settlement at once, two rules.
    await terms.getByLabel("Default price").fill("15.00");
    await terms.getByLabel("Extra vehicle price").fill("5");
    await terms.getByLabel("Settlement days").fill("0");
    await terms.getByRole("button", { name: "Add a price rule" }).click();
    await terms.getByLabel("Rule 1 price").fill("20.00");
    await terms.getByLabel("Rule 1 at least vehicles").fill("2");
    await terms.getByLabel("Rule 1 origin states").fill("CA");
    await page.getByRole("option", { name: "CA", exact: true }).click();
    await terms.getByRole("button", { name: "Add a price rule" }).click();
    await terms.getByLabel("Rule 2 price").fill("25.00");
    await terms.getByLabel("Rule 2 sub_id").fill("fb-");
    // A member the service refuses is named under its field, and nothing is saved.
    await terms.getByLabel("Rule 1 at least vehicles").fill("99");
    await terms.getByRole("button", { name: "Save terms" }).click();
    await terms.getByText("price_rules[0].when.min_vehicles", { exact: false }).first().waitFor();
    const refused = terms.getByRole("group", { name: "Rule 1" });
    expect(await refused.getByText(/min_vehicles/).count()).toBeGreaterThan(0);
    expect(
      ((await (await t.call("GET", `/api/v1/lead_providers/${provider.id}/terms/`, { auth: admin })).json()) as Json)
        .version,
    ).toBe(0);
    await terms.getByLabel("Rule 1 at least vehicles").fill("2");
    // The sub_id rule first.
    await terms.getByRole("button", { name: "Move rule 2 up" }).click();
    expect(await terms.getByLabel("Rule 1 sub_id").inputValue()).toBe("fb-");
    expect(await terms.getByLabel("Rule 2 price").inputValue()).toBe("20.00");

    // What would this lead earn, under the terms as edited (nothing saved yet)?
    const preview = terms.getByRole("group", { name: "What would this lead earn?" });
    await preview.getByLabel("Vehicles", { exact: true }).fill("2");
    await preview.getByRole("button", { name: "Price this lead" }).click();
    const result = preview.getByTestId("quote-result");
    await result.waitFor();
    expect(await result.textContent()).toContain("This lead would earn $25.00");
    expect(await result.textContent()).toContain("rule 2 $20.00 plus $5.00 for extra vehicles");
    expect(await result.textContent()).toContain("not saved");
    await preview.getByLabel("sub_id", { exact: true }).fill("fb-spring");
    await preview.getByRole("button", { name: "Price this lead" }).click();
    await expect.poll(() => result.textContent()).toContain("This lead would earn $30.00");
    await check(page, "terms-panel", { region: terms });

    await terms.getByRole("button", { name: "Save terms" }).click();
    await terms.getByText("Version 1", { exact: false }).waitFor();
    const words = terms.getByTestId("terms-in-words");
    await words.getByText("Rule 1: when sub_id starts with fb-, a lead earns $25.00.").waitFor();
    await words.getByText("Rule 2: when the origin is in CA and at least 2 vehicles, a lead earns $20.00.").waitFor();
    await words.getByText("Each vehicle after the first adds $5.00.").waitFor();
    const saved = (await (
      await t.call("GET", `/api/v1/lead_providers/${provider.id}/terms/`, { auth: admin })
    ).json()) as Json;
    expect(saved).toMatchObject({
      version: 1,
      default_price_cents: 1500,
      extra_vehicle_cents: 500,
      settlement_days: 0,
    });
    expect(saved.price_rules).toEqual([
      { when: { sub_id: "fb-" }, price_cents: 2500 },
      { when: { origin_states: ["CA"], min_vehicles: 2 }, price_cents: 2000 },
    ]);

    // Leads priced by them, settled at once: 2 × $15 + ($20 + $5) = $55 available.
    for (const body of [
      freshLead({ origin_zip: "75201" }),
      freshLead({ origin_zip: "10001" }),
      freshLead({ vehicles: [car(), car()] }),
    ]) {
      expect((await t.call("POST", "/api/v1/public/leads/", { auth: provider.key, body })).status).toBe(201);
    }
    await t.app.settlement.runOnce();
    await page.reload();
    const money = page.getByRole("region", { name: "Money" });
    await expect.poll(() => money.getByTestId("balance-available").textContent()).toBe("$55.00");
    expect(await money.getByTestId("balance-pending").textContent()).toBe("$0.00");
    await money
      .getByRole("table", { name: /Ledger lines/ })
      .getByText("Lead purchase")
      .first()
      .waitFor();
    await money.getByLabel("Type").click();
    await page.getByRole("option", { name: "Settlement" }).click();
    await expect
      .poll(() =>
        money
          .getByRole("table", { name: /Ledger lines/ })
          .getByRole("row")
          .count(),
      )
      .toBe(7); // a header and two lines per settled lead
    await check(page, "money-panel", { region: money });

    // A payout over the available balance: confirmed in red, refused with the service's words.
    await money.getByRole("button", { name: "Record payout" }).click();
    let dialog = page.getByRole("dialog");
    await dialog.getByLabel("Amount").fill("1000");
    await dialog.getByLabel("Reference").fill("WIRE-1");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.getByRole("heading", { name: `Pay out $1,000.00 to ${name}?` }).waitFor();
    const confirm = dialog.getByRole("button", { name: "Pay out $1,000.00" });
    expect(await confirm.getAttribute("class")).toContain("MuiButton-containedError");
    await check(page, "payout-confirm", { dialog: true });
    await confirm.click();
    await dialog.getByRole("alert").getByText("more than the available balance (5500)", { exact: false }).waitFor();
    await check(page, "payout-refused", { dialog: true });
    await dialog.getByLabel("Amount").fill("40.00");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.getByRole("heading", { name: `Pay out $40.00 to ${name}?` }).waitFor();
    await dialog.getByRole("button", { name: "Pay out $40.00" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => money.getByTestId("balance-paid-out").textContent()).toBe("$40.00");
    expect(await money.getByTestId("balance-available").textContent()).toBe("$15.00");

    // An adjustment that takes money away names what it takes, in red too.
    await money.getByRole("button", { name: "Record adjustment" }).click();
    dialog = page.getByRole("dialog");
    await dialog.getByLabel("Amount (negative takes money away)").fill("-2.50");
    await dialog.getByLabel("Reason").fill("Lead returned: wrong number");
    await dialog.getByRole("button", { name: "Continue" }).click();
    await dialog.getByRole("heading", { name: `Take $2.50 from ${name}?` }).waitFor();
    await dialog.getByRole("button", { name: "Record -$2.50" }).click();
    await dialog.waitFor({ state: "hidden" });
    await expect.poll(() => money.getByTestId("balance-available").textContent()).toBe("$12.50");

    // Payables: every provider's money, its CSV, and the trial balance at 0.
    await page
      .getByRole("menuitem", { name: "Payables" })
      .or(page.getByRole("link", { name: "Payables" }))
      .first()
      .click();
    await page.getByRole("heading", { name: "Payables", level: 1 }).waitFor();
    const row = page.getByRole("row", { name: new RegExp(name) });
    await row.waitFor();
    expect(await row.textContent()).toContain("$12.50");
    expect(await row.textContent()).toContain("$40.00");
    await page.getByTestId("trial-balance-total").getByText("Grand total: $0.00", { exact: false }).waitFor();
    const csv = await downloaded(page, () => page.getByRole("button", { name: "Download CSV" }).click());
    expect(csv.name).toBe("payables-live.csv");
    const rows = parseCsv(csv.bytes.toString("utf8"));
    expect(rows.find((r) => r.provider_name === name)).toMatchObject({
      available_cents: "1250",
      paid_out_cents: "4000",
    });
    await check(page, "payables");

    // The dashboard's spend per day: today's $55 among it.
    await page.goto(`${t.url}/admin/`);
    const spend = page.getByRole("region", { name: "Spend per day" });
    await spend.getByTestId("per-day-total").getByText("$55.00 for 3 leads", { exact: false }).waitFor();
    await check(page, "dashboard-spend");
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await small.goto(`${t.url}/admin/`);
    await small.getByRole("button", { name: "Use the development token" }).click();
    await small.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    await small.goto(`${t.url}/admin/payables`);
    await small.getByTestId("trial-balance-total").waitFor();
    await check(small, "payables");
    await small.goto(`${t.url}/admin/providers/${provider.id}/show/money`);
    await small.getByRole("region", { name: "Money" }).getByTestId("balance-available").waitFor();
    await check(small, "provider-money");
    await phone.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("shows one of the provider's people its earnings, lines, terms and statements, and downloads a statement", async () => {
    const person = await portalPerson(t, admin, provider.id, PASSWORD);
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/portal/`);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "This week" }).waitFor();
    await page
      .getByRole("menuitem", { name: "Earnings" })
      .or(page.getByRole("link", { name: "Earnings" }))
      .first()
      .click();
    await page.getByRole("heading", { name: "Earnings", level: 1 }).waitFor();

    // The balance the ledger holds (the previous test's payout and adjustment included).
    const balance = (await person.portal("GET", "balance/").then((r) => r.json())) as Json;
    expect(balance).toMatchObject({ available_cents: 1250, paid_out_cents: 4000, pending_cents: 0 });
    await expect.poll(() => page.getByTestId("balance-available").textContent()).toBe("$12.50");
    expect(await page.getByTestId("balance-paid-out").textContent()).toBe("$40.00");
    expect(await page.getByTestId("balance-pending").textContent()).toBe("$0.00");
    await page.getByTestId("per-day-total").getByText("$55.00 for 3 leads", { exact: false }).waitFor();
    const ledger = page.getByRole("region", { name: "Ledger" });
    await ledger.getByText("Lead returned: wrong number").waitFor();
    await ledger.getByLabel("Type").click();
    await page.getByRole("option", { name: "Payout" }).click();
    await expect.poll(() => ledger.getByRole("table").getByRole("row").count()).toBe(2);
    await ledger.getByText("Payout WIRE-1").waitFor();
    // Date filters: nothing before today, today's lines from today on.
    const today = DateTime.now().toISODate() as string;
    await ledger.getByLabel("To").fill(DateTime.now().minus({ days: 2 }).toISODate() as string);
    await ledger.getByText("No lines.").waitFor();
    await ledger.getByLabel("To").fill(today);
    await ledger.getByText("Payout WIRE-1").waitFor();
    const terms = page.getByRole("region", { name: "Your terms" });
    await terms.getByText("Rule 1: when sub_id starts with fb-, a lead earns $25.00.").waitFor();
    await terms.getByTestId("terms-settlement").getByText("available at once", { exact: false }).waitFor();
    await terms.getByTestId("terms-returns").getByText("within 72 hours", { exact: false }).waitFor();
    await check(page, "earnings");

    // This month's statement, as CSV and as PDF.
    const month = DateTime.now().setZone(ZONE).toFormat("yyyy-MM");
    const statements = page.getByRole("region", { name: "Statements" });
    const csv = await downloaded(page, () =>
      statements.getByRole("link", { name: `Statement ${month} as CSV` }).click(),
    );
    expect(csv.name).toBe(`statement-${month}.csv`);
    const lines = parseCsv(csv.bytes.toString("utf8"));
    const statement = (await person.portal("GET", `statements/${month}/`).then((r) => r.json())) as Json;
    expect(lines).toHaveLength(statement.line_count);
    expect(lines.find((l) => l.type === "payout")).toMatchObject({ amount_cents: "-4000", reference: "WIRE-1" });
    const pdf = await downloaded(page, () =>
      statements.getByRole("link", { name: `Statement ${month} as PDF` }).click(),
    );
    expect(pdf.name).toBe(`statement-${month}.pdf`);
    expect(pdf.bytes.subarray(0, 5).toString()).toBe("%PDF-");

    // The test book: nothing there.
    await page.getByLabel("Mode").click();
    await page.getByRole("option", { name: "Test (sandbox)" }).click();
    await expect.poll(() => page.getByTestId("balance-available").textContent()).toBe("$0.00");
    const testMonth = statements.getByRole("row", { name: new RegExp(`^${month}`) });
    await expect.poll(() => testMonth.textContent()).toBe(`${month}Open$0.00$0.00CSVPDF`);
    expect(await statements.getByRole("link", { name: `Statement ${month} as CSV` }).getAttribute("href")).toContain(
      "mode=test",
    );
    await context.close();

    const phone = await newContext(PHONE);
    const small = await phone.newPage();
    await small.goto(`${t.url}/portal/`);
    await small.getByLabel("Email").fill(person.email);
    await small.getByLabel("Password").fill(PASSWORD);
    await small.getByRole("button", { name: "Sign in" }).click();
    await small.getByRole("heading", { name: "This week" }).waitFor();
    await small.goto(`${t.url}/portal/earnings`);
    await small.getByTestId("balance-available").waitFor();
    await small.getByRole("region", { name: "Your terms" }).waitFor();
    await check(small, "earnings");
    await phone.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);
});
