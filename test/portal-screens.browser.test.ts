/**
 * The portal's screens answering an account manager's questions, in Debian's chromium
 * (playwright-core) against the real service: how many leads were accepted this week per
 * sub-source; why a request was refused and by which rule; the intake rules in words with
 * today's cap usage; a search of the leads by a phone fragment exported as CSV (exactly the
 * matching leads); billable and duplicate counts on Home. axe-core (moderate, serious and
 * critical violations fail) on every screen at 1280 and 390 px, no sideways scrolling, and no raw
 * API field name in what a screen says.
 */
import { existsSync, readFileSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.ts";
import { watchedContext } from "./helpers/browser.ts";
import { apiNames, rawApiNames, type Seeded, seedPortal, signIn } from "./helpers/portal-screens.ts";
import { clearOfDayEnd } from "./helpers/timing.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

/** axe's moderate, serious and critical violations (WCAG 2.1 A and AA) once the screen has settled. */
async function axe(page: Page): Promise<string[]> {
  await page.waitForLoadState("networkidle").catch(() => {});
  await page.waitForTimeout(300);
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => v.impact === "moderate" || v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(" "))
          .slice(0, 3)
          .join(" | ")}`,
    );
}

describe.skipIf(!HAVE_CHROMIUM)("the portal's screens answer an account manager's questions", () => {
  let t: TestApp;
  let browser: Browser;
  let seeded: Seeded;
  const problems: string[] = [];
  const elsewhere: string[] = [];
  const names = apiNames();

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    watchedContext(browser, t.url, size, { problems, elsewhere }, { ignoreConsole: /status of (400|401)/ });

  async function check(page: Page, screen: string): Promise<void> {
    const width = page.viewportSize()?.width ?? 0;
    const bad = await axe(page);
    expect(bad, `${screen} at ${width} px: accessibility\n${bad.join("\n")}`).toEqual([]);
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    expect(await rawApiNames(page, names), `${screen} at ${width} px says raw API names`).toEqual([]);
  }

  beforeAll(async () => {
    await clearOfDayEnd(); // "this week" and "today" below count the leads made now
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    seeded = await seedPortal(t, String(Date.now()));
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("answers each question in a few clicks at 1280 px", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await signIn(page, t.url, seeded.email);

    // Home: accepted with its billable and duplicate counts.
    await expect.poll(() => page.getByTestId("figure-accepted").textContent()).toBe("4");
    expect(await page.getByTestId("figure-accepted-note").textContent()).toBe("3 billable, 1 duplicate (not billed)");
    await check(page, "home");

    // "How many of my leads were accepted this week, by sub-source?"
    await page.getByRole("menuitem", { name: "Statistics" }).click();
    await page.getByRole("heading", { name: "Statistics", level: 1 }).waitFor();
    await page.getByRole("button", { name: "This week", exact: true }).click();
    await page.getByRole("combobox", { name: "Group by" }).click();
    await page.getByRole("option", { name: "Sub-source" }).click();
    const table = page.getByRole("table", { name: "Statistics per period, newest first" });
    const header = await table.locator("thead th").allTextContents();
    const row = table.locator("tbody tr", { has: page.getByRole("cell", { name: "fb-spring", exact: true }) });
    await row.waitFor();
    const cells = await row.locator("td").allTextContents();
    expect(cells[header.indexOf("Accepted")]).toBe("3");
    expect(cells[header.indexOf("Billable")]).toBe("2");
    expect(cells[header.indexOf("Duplicates (not billed)")]).toBe("1");
    const total = await table.getByTestId("stats-total-row").locator("td").allTextContents();
    expect(total[header.indexOf("Submitted")]).toBe("5");
    expect(total[header.indexOf("Rejected: Outside your intake rules")]).toBe("1");
    expect(total[header.indexOf("Acceptance rate")]).toBe("80.0 %");
    // The CSV of the same view: its rows and its total.
    const [csvDownload] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download CSV" }).click(),
    ]);
    const csv = readFileSync(String(await csvDownload.path()), "utf8")
      .trimEnd()
      .split("\r\n")
      .map((l) => l.split(","));
    const csvHeader = csv[0] ?? [];
    const fb = csv.find((r) => r[1] === "fb-spring");
    expect([fb?.[csvHeader.indexOf("accepted")], fb?.[csvHeader.indexOf("billable")]]).toEqual(["3", "2"]);
    expect(csv.at(-1)?.[0]).toBe("total");
    expect(csv.at(-1)?.[csvHeader.indexOf("submitted")]).toBe("5");
    await check(page, "statistics");

    // "Why was this request refused, and by which rule?"
    await page.getByRole("menuitem", { name: "Requests" }).click();
    const sentence = "Origin state TX is not accepted; accepted: CA, NY. (Rule: Accepted origin states.)";
    await page.getByText(sentence).first().waitFor();
    await check(page, "requests");
    await page.goto(`${t.url}/portal/requests/${encodeURIComponent(seeded.refusedRequestId)}/show`);
    await expect.poll(() => page.getByTestId("refusal-sentence").first().textContent()).toBe(sentence);
    expect(await page.getByTestId("problem").textContent()).toContain("Outside your intake rules");
    await check(page, "request");

    // The rules in words, with today's cap usage.
    await page.getByRole("menuitem", { name: "Intake rules" }).click();
    await page.getByRole("heading", { name: "Intake rules", level: 1 }).waitFor();
    await expect
      .poll(() => page.getByTestId("cap-day").textContent())
      .toMatch(/^Day cap: 4 of 100 used today, 96 left; it resets .+ \(your time, .+\)\.$/);
    expect(await page.getByTestId("rule-origin-states").textContent()).toBe("Accepted origin states: CA, NY");
    expect(await page.getByTestId("rule-max-vehicles").textContent()).toBe(
      "Most vehicles per lead: 3 vehicles per lead.",
    );
    await page.getByText("Intake hours (business days in").waitFor();
    await check(page, "rules");

    // Search the leads by a phone fragment and export exactly those.
    await page.getByRole("menuitem", { name: "Leads" }).click();
    await page.getByLabel("Search").fill("555-0101");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(2);
    const [leadsDownload] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    const leads = readFileSync(String(await leadsDownload.path()), "utf8")
      .trimEnd()
      .split("\r\n");
    const leadsHeader = (leads[0] ?? "").split(",");
    const idAt = leadsHeader.indexOf("External id");
    expect(
      leads
        .slice(1)
        .map((l) => l.split(",")[idAt])
        .sort(),
    ).toEqual([...seeded.phoneMatches].sort());
    expect(leads.join("\n")).not.toMatch(/[{[]"/); // plain columns, no JSON in a cell
    expect(leadsHeader).toContain("Sub-source");
    await check(page, "leads");

    // Sub-source on the lead's page.
    await page.goto(`${t.url}/portal/leads/${encodeURIComponent(seeded.fbSpringLeadId)}/show`);
    await page.getByText("fb-spring").waitFor();
    await check(page, "lead");

    // Integration docs is the docs page, linking to the reference.
    await page.getByRole("menuitem", { name: "Integration docs" }).click();
    await page.getByRole("heading", { name: "Integration docs", level: 1 }).waitFor();
    expect(await page.getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/docs");
    expect(new URL(page.url()).pathname).toBe("/portal/docs");
    await context.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("reads the same screens on a phone (390 px)", async () => {
    const context = await newContext(PHONE);
    const page = await context.newPage();
    await signIn(page, t.url, seeded.email);
    await expect.poll(() => page.getByTestId("figure-accepted-note").textContent()).toContain("billable");
    await check(page, "home");
    for (const [path, ready, screen] of [
      ["statistics", () => page.getByTestId("stats-total-row").waitFor(), "statistics"],
      ["rules", () => page.getByTestId("cap-day").waitFor(), "rules"],
      ["requests", () => page.getByText("(Rule: Accepted origin states.)").first().waitFor(), "requests"],
      ["leads", () => page.getByText("Sub-source fb-spring").first().waitFor(), "leads"],
    ] as const) {
      await page.goto(`${t.url}/portal/${path}`);
      await ready();
      await check(page, screen);
    }
    await context.close();
    expect(problems).toEqual([]);
  }, 300_000);
});
