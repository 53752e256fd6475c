/**
 * The back office at /admin/, driven in Debian's chromium (playwright-core), as an administrator
 * would use it: sign in, create a provider, issue, reveal, copy and rotate its key, find a lead
 * submitted with that key, move it to QUOTE and ORDER over Connect, read the history and the audit
 * log. axe-core checks every screen at 1280 px and at a 390 px phone width; the page must log no
 * errors and fetch nothing but this service. CONSOLE_SCREENSHOTS=<dir> also saves each screen.
 */
import { existsSync, mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page, type Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";
import { startReceiver } from "./helpers/receiver.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.CONSOLE_SCREENSHOTS;
const WIDTHS = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

// Each check drives chromium through many screens, one to three minutes on a loaded 2-core
// machine: 300 s each, and its waits poll (playwright's and expect.poll's ceilings).
describe.skipIf(!HAVE_CHROMIUM)("the back office in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (width: (typeof WIDTHS)[number] = WIDTHS[0]): Promise<BrowserContext> =>
    watchedContext(browser, t.url, { width: width.width, height: width.height }, { problems, elsewhere });

  /** axe-core on the current screen: no serious or critical violation. */
  async function accessible(page: Page, screen: string, shot: { dialog?: boolean } = {}): Promise<void> {
    const bad = await axeViolations(page);
    expect(bad, `${screen}: accessibility\n${bad.join("\n")}`).toEqual([]);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      const width = page.viewportSize()?.width ?? 0;
      // A dialog is shown as the screen shows it; a page in full at desktop width.
      await page.screenshot({ path: join(SHOTS, `${screen}-${width}.png`), fullPage: width > 400 && !shot.dialog });
    }
  }

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("takes an administrator from sign-in through a provider's key to a lead moved to ORDER, all in the audit log", async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/admin/`);
    await page.getByRole("heading", { name: "Lead Provider back office" }).waitFor();
    await accessible(page, "sign-in");
    await page.getByRole("button", { name: "Use the development token" }).click();
    // Signed in, the console opens on the dashboard; the menu leads to the providers.
    await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
    await page
      .getByRole("menuitem", { name: "Providers" })
      .or(page.getByRole("link", { name: "Providers" }))
      .first()
      .click();
    await page
      .getByRole("heading", { name: /Providers/ })
      .first()
      .waitFor();
    expect(await page.evaluate("document.cookie")).toBe(""); // the token is never a cookie

    // Create a provider.
    await page.getByRole("link", { name: "Create" }).click();
    const name = `Console Motors ${Date.now()}`;
    await page.getByLabel("Name").fill(name);
    await page.getByLabel("Contact email").fill("ops@console-motors.example");
    await page.getByLabel("Requests per minute").fill("120");
    await accessible(page, "provider-create");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(name).first().waitFor();
    const providerId = Number(/providers\/(\d+)\/show/.exec(page.url())?.[1]);
    expect(providerId).toBeGreaterThan(0);
    // A new provider opens on its Keys tab: issuing its key comes next.
    await page.waitForURL(new RegExp(`/admin/providers/${providerId}/show/keys$`));
    expect(await page.getByRole("tab", { name: "Keys" }).getAttribute("aria-selected")).toBe("true");

    // Issue its key, reveal it again, copy it, rotate it.
    await page.getByRole("button", { name: "Generate live key" }).click();
    const shown = page.getByLabel("Live key", { exact: true });
    await shown.waitFor();
    const first = (await shown.textContent()) ?? "";
    expect(first).toMatch(/^lp_live_/);
    // Revealing the live key downloads the live key and nothing else: the page and the reveal
    // never carry the test key in plain text.
    const testKey = (
      (await (
        await t.call("POST", `/api/v1/lead_providers/${providerId}/generate_api_key/`, {
          auth: await t.token(),
          body: { mode: "test" },
        })
      ).json()) as Json
    ).api_key as string;
    const bodies: Promise<string>[] = [];
    const collect = (r: Response) => {
      if (new URL(r.url()).pathname.startsWith("/api/")) bodies.push(r.text().catch(() => ""));
    };
    page.on("response", collect);
    await page.reload();
    const reveal = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith("/api_key/"));
    await page.getByRole("button", { name: "Reveal live key" }).click();
    const revealed = await reveal;
    expect(new URL(revealed.url()).searchParams.get("mode")).toBe("live");
    await expect.poll(() => page.getByLabel("Live key", { exact: true }).textContent()).toBe(first);
    page.off("response", collect);
    const seen = await Promise.all(bodies);
    expect(seen.some((b) => b.includes(first))).toBe(true);
    expect(seen.filter((b) => b.includes(testKey))).toEqual([]);
    await page.getByRole("button", { name: "Copy live key" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(first);
    await accessible(page, "provider-show");
    await page.getByRole("button", { name: "Rotate live key" }).click();
    // The current key keeps working for an hour unless told otherwise, in units a person uses.
    const rotateDialog = page.getByRole("dialog");
    expect(await rotateDialog.getByLabel("The current key keeps working for").inputValue()).toBe("1");
    await expect.poll(() => rotateDialog.getByRole("combobox", { name: "Unit" }).textContent()).toBe("hours");
    await accessible(page, "key-rotate", { dialog: true });
    await rotateDialog.getByLabel("The current key keeps working for").fill("0");
    await rotateDialog.getByText("0: the current key stops at once.").waitFor();
    await rotateDialog.getByRole("button", { name: "Rotate" }).click();
    await expect.poll(async () => page.getByLabel("Live key", { exact: true }).textContent()).not.toBe(first);
    const key = (await page.getByLabel("Live key", { exact: true }).textContent()) ?? "";
    expect(key).toMatch(/^lp_live_/);

    // A lead submitted with the key over REST.
    const body = leadBody();
    const created = await t.call("POST", "/api/v1/public/leads/", { body, auth: key });
    expect(created.status).toBe(201);
    const lead = (await created.json()) as Json;
    expect((await t.call("GET", "/api/v1/public/leads/nope/", { auth: first })).status).toBe(401); // the old key stopped

    // Find it in the console and move it to QUOTE, then ORDER.
    await page.getByRole("menuitem", { name: /Leads/ }).click();
    await page.getByPlaceholder("Name, email, phone, external id or order number").fill(String(body.external_id));
    await page.getByText(lead.order_number).first().click();
    await page.getByRole("button", { name: "Move to QUOTE" }).waitFor();
    await accessible(page, "lead-show");
    // Each move is confirmed, and the confirmation says the provider will be told.
    await page.getByRole("button", { name: "Move to QUOTE" }).click();
    const confirmMove = page.getByRole("dialog", { name: `Move ${lead.order_number} to QUOTE?` });
    await confirmMove.getByText("The provider is notified").waitFor();
    await accessible(page, "lead-move-confirm", { dialog: true });
    await confirmMove.getByRole("button", { name: "Move to QUOTE" }).click();
    await page.getByRole("button", { name: "Move to ORDER" }).and(page.locator(":enabled")).waitFor();
    await page.getByRole("button", { name: "Move to ORDER" }).click();
    await page
      .getByRole("dialog", { name: `Move ${lead.order_number} to ORDER?` })
      .getByRole("button", { name: "Move to ORDER" })
      .click();
    await expect
      .poll(
        async () =>
          (await t
            .call("GET", `/api/v1/public/leads/${body.external_id}/`, { auth: key })
            .then((r) => r.json())) as Json,
      )
      .toMatchObject({ state: "ORDER" });
    await page.reload();
    const history = page.locator("table").filter({ hasText: "Lead status" });
    await expect.poll(() => history.locator("tbody tr").count()).toBe(3);
    for (const state of ["LEAD", "QUOTE", "ORDER"])
      await expect.poll(() => history.getByText(state, { exact: true }).count()).toBeGreaterThan(0);

    // The lead list, and the audit log with each of those actions.
    await page.getByRole("menuitem", { name: /Leads/ }).click();
    await page.getByText(lead.order_number).first().waitFor();
    await accessible(page, "leads");
    await page.getByRole("menuitem", { name: /Audit log/ }).click();
    await page.getByText("api_key.generated").first().waitFor();
    for (const action of ["provider.created", "api_key.generated", "api_key.viewed", "lead.moved"]) {
      await expect.poll(() => page.getByText(action, { exact: true }).count(), { message: action }).toBeGreaterThan(0);
    }
    await accessible(page, "audit-log");
    // Every action the administrator took is also in the API's audit log, by the dev token's sub.
    const admin = await t.token();
    const log = (await (
      await t.call("GET", `/api/v1/admin/audit_log/?provider_id=${providerId}&page_size=100`, { auth: admin })
    ).json()) as Json;
    const actions = log.results.filter((e: Json) => e.actor === "dev-admin").map((e: Json) => e.action);
    expect(actions.filter((a: string) => a === "api_key.generated")).toHaveLength(2); // issued, rotated
    expect(actions).toEqual(expect.arrayContaining(["provider.created", "api_key.viewed", "lead.moved"]));
    expect(actions.filter((a: string) => a === "lead.moved")).toHaveLength(2);

    await page.goto(`${t.url}/admin/providers/${providerId}`);
    await page.getByLabel("Name").waitFor();
    await accessible(page, "provider-edit");
    await page.getByRole("menuitem", { name: /Providers/ }).click();
    await page.getByText(name).first().waitFor();
    await accessible(page, "providers");
    await context.close();
    expect(problems, "errors in the browser").toEqual([]);
    expect(elsewhere, "requests to other hosts").toEqual([]);
  }, 300_000);

  it("sets a provider's intake rules in the Intake panel, and shows duplicates with a badge, a filter and a link to the original", async () => {
    const context = await newContext();
    const page = await context.newPage();
    const admin = await t.token({}, { sub: "intake-admin" });
    const first = await t.provider(`Intake Original ${Date.now()}`);
    const second = await t.provider(`Intake Second ${Date.now()}`);
    const phone = "+1 (415) 555-0173";
    const email = `intake.${Date.now()}@example.com`;
    const original = (await (
      await t.call("POST", "/api/v1/public/leads/", { auth: first.key, body: leadBody({ phone_number: phone, email }) })
    ).json()) as Json;
    const dup = (await (
      await t.call("POST", "/api/v1/public/leads/", {
        auth: second.key,
        body: leadBody({ phone_number: phone, email }),
      })
    ).json()) as Json;
    expect(dup.billable).toBe(false);

    await page.goto(`${t.url}/admin/providers/${second.id}/show/intake#token=${admin}`);
    const panel = page.getByRole("region", { name: "Intake rules" });
    await panel.getByText("never changed").waitFor();
    // The help texts are the rule table's descriptions.
    await panel.getByText("The origin ZIP's state must be one of origin_states.").waitFor();
    await panel.getByLabel("Origin states").click();
    await page.getByRole("option", { name: "FL", exact: true }).click();
    await panel.getByLabel("Origin states").click();
    await page.getByRole("option", { name: "GA", exact: true }).click();
    await page.keyboard.press("Escape");
    await panel.getByLabel("Per day").fill("0");
    await panel.getByRole("button", { name: "Save intake rules" }).click();
    // Saving asks first, listing the changes.
    await page
      .getByRole("dialog", { name: "Save the intake rules?" })
      .getByRole("button", { name: "Save and notify" })
      .click();
    // The service's refusal is shown under the member it names.
    await panel
      .getByText(/Day cap must be a positive integer/)
      .first()
      .waitFor();
    // That refusal was asked for: the browser logs the 400 it got; nothing else may be logged.
    const asked = problems.findIndex((p) => p.includes("status of 400"));
    expect(asked).toBeGreaterThanOrEqual(0);
    problems.splice(asked, 1);
    await panel.getByLabel("Per day").fill("25");
    await expect.poll(() => panel.getByText(/Day cap must be a positive integer/).count()).toBe(1); // the alert only
    await panel.getByLabel("Open only at these hours", { exact: false }).or(panel.getByLabel("Always open")).click();
    await panel
      .getByLabel("Saturday opens")
      .waitFor({ state: "detached" })
      .catch(() => {});
    await panel.getByRole("button", { name: "Add Saturday hours" }).click();
    await panel.getByLabel("Saturday closes").fill("13:00");
    await accessible(page, "provider-intake");
    await panel.getByRole("button", { name: "Save intake rules" }).click();
    // Saving asks first, listing the changes.
    await page
      .getByRole("dialog", { name: "Save the intake rules?" })
      .getByRole("button", { name: "Save and notify" })
      .click();
    await panel.getByText(/^Version 1/).waitFor();
    await panel.getByText(/1 used, 24 left/).waitFor();
    const stored = (await (
      await t.call("GET", `/api/v1/lead_providers/${second.id}/intake_rules/`, { auth: admin })
    ).json()) as Json;
    expect(stored).toMatchObject({
      version: 1,
      origin_states: ["FL", "GA"],
      caps: { day: 25, week: null, month: null },
      schedule: {
        mon: [{ open: "08:00", close: "20:00" }],
        fri: [{ open: "08:00", close: "20:00" }],
        sat: [{ open: "08:00", close: "13:00" }],
      },
    });

    // While a request is in flight the app bar's spinner shows, with a name (axe: aria-progressbar-name).
    let held = true;
    await page.route("**/api/v1/admin/leads/**", async (route) => {
      if (held) await new Promise((r) => setTimeout(r, 1500));
      await route.continue();
    });
    // The duplicates filter, the badge, and the link from the duplicate to the original.
    await page.goto(`${t.url}/admin/leads?filter=${encodeURIComponent(JSON.stringify({ duplicate: true }))}`);
    await page.getByRole("progressbar", { name: "Loading" }).first().waitFor();
    held = false;
    const row = page.getByRole("row").filter({ hasText: dup.order_number });
    await row.getByText("Duplicate (same phone number and email)").waitFor();
    await accessible(page, "leads-duplicates");
    await row.getByText(dup.order_number).click();
    await page.getByRole("link", { name: `Original ${original.order_number}` }).waitFor();
    await accessible(page, "lead-duplicate");
    await page.getByRole("link", { name: `Original ${original.order_number}` }).click();
    await page.getByText(original.external_id).first().waitFor();
    expect(page.url()).toContain(`/leads/${original.id}/show`);
    await context.close();
    expect(problems, "errors in the browser").toEqual([]);
    expect(elsewhere, "requests to other hosts").toEqual([]);
  }, 300_000);

  it("shows the dashboard's charts with this test's numbers and finds a request by its id, at 1280 and 390 px", async () => {
    const admin = await t.token({}, { sub: "dashboard-admin" });
    const name = `Dashboard Leads ${Date.now()}`;
    const p = await t.provider(name);
    const create = (body: Json) => t.call("POST", "/api/v1/public/leads/", { auth: p.key, body });
    for (let i = 0; i < 3; i += 1) {
      const r = await create(
        leadBody({ email: `dash.${Date.now()}.${i}@example.com`, phone_number: `+1 212 555 01${i}5` }),
      );
      expect(r.status).toBe(201);
    }
    const refused = (await (await create(leadBody({ origin_zip: "00000", first_name: "Zebulon" }))).json()) as Json;
    expect(refused.code).toBe("invalid_zip");
    // The entry is written off the request path: wait until the back office's API has it.
    await expect
      .poll(async () => (await t.call("GET", `/api/v1/admin/requests/${refused.request_id}/`, { auth: admin })).status)
      .toBe(200);

    for (const width of WIDTHS) {
      const context = await newContext(width);
      const page = await context.newPage();
      await page.goto(`${t.url}/admin/?provider_id=${p.id}#token=${admin}`);
      await page.getByRole("heading", { name: `${name}, last 30 days` }).waitFor();
      const funnel = page.getByRole("img", { name: "Submitted 4, Accepted 3, Quoted 0, Ordered 0" });
      await funnel.waitFor();
      await page.getByRole("img", { name: "invalid_zip 1" }).waitFor();
      // Business days, in the broker's zone as the service names it.
      const perDay = page.getByRole("img", { name: /^Leads per business day \(America\/New_York\) from / });
      await perDay.waitFor();
      // Real bars drawn by the chart library, not an empty frame.
      await expect.poll(() => perDay.locator("svg rect, svg path").count()).toBeGreaterThan(0);
      await expect.poll(() => funnel.locator("svg rect, svg path").count()).toBeGreaterThan(0);
      await accessible(page, "dashboard-provider");

      await page.goto(`${t.url}/admin/`);
      // A page of providers at a time: ranked by their last lead, this test's comes first.
      await page.getByRole("button", { name: "Last lead" }).click();
      const row = page.getByRole("row").filter({ hasText: name });
      await row.waitFor();
      await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("4");
      await accessible(page, "dashboard");

      // Paste the request id from the provider's error: the search lands on the entry.
      await page.goto(`${t.url}/admin/requests`);
      await page.getByPlaceholder("Request id").fill(refused.request_id);
      await page.waitForURL(`**/admin/requests/${refused.request_id}/show`);
      await page.getByText("Origin ZIP 00000 is not a known US ZIP code").first().waitFor();
      const body = page.getByTestId("request-body");
      await expect.poll(() => body.textContent()).toContain('"first_name": "Z…"');
      expect(await page.content()).not.toContain("Zebulon");
      await page.getByRole("link", { name }).first().waitFor();
      await accessible(page, "request-show");
      await page.goto(`${t.url}/admin/requests?filter=${encodeURIComponent(JSON.stringify({ provider_id: p.id }))}`);
      await page.getByText("400 rejected").first().waitFor();
      await accessible(page, "requests");
      await context.close();
    }
    expect(problems, "errors in the browser").toEqual([]);
    expect(elsewhere, "requests to other hosts").toEqual([]);
  }, 300_000);

  it("works at a 390 px phone width, opens deep links, and takes the token from the URL fragment once", async () => {
    const context = await newContext(WIDTHS[1]);
    const page = await context.newPage();
    const admin = await t.token({}, { sub: "phone-admin" });
    const p = await t.provider(`Phone Provider ${Date.now()}`);
    await page.goto(`${t.url}/admin/providers/${p.id}/show#token=${admin}`);
    await page.getByText(`Phone Provider`).first().waitFor();
    expect(page.url()).not.toContain("token="); // removed from the address bar at once
    expect(page.url()).toContain(`/admin/providers/${p.id}/show`);
    // A link with someone else's token does not silently replace this session: it asks first.
    const stored = () => page.evaluate(() => sessionStorage.getItem("lead-provider-admin-token"));
    const other = await t.token({}, { sub: "other-admin" });
    const asked: string[] = [];
    page.once("dialog", (d) => {
      asked.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${t.url}/admin/providers#token=${other}`);
    await page.getByText(`Phone Provider`).first().waitFor();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain("other-admin");
    expect(asked[0]).toContain("phone-admin");
    expect(await stored()).toBe(admin);
    page.once("dialog", (d) => void d.accept());
    await page.goto(`${t.url}/admin/audit#token=${other}`);
    await page.getByText("provider.created").first().waitFor();
    expect(await stored()).toBe(other);
    expect(page.url()).not.toContain("token=");
    await accessible(page, "provider-show");
    await page.goto(`${t.url}/admin/providers/create`);
    await page.getByLabel("Name").waitFor();
    await accessible(page, "provider-create");
    await page.goto(`${t.url}/admin/providers/${p.id}`);
    await page.getByLabel("Name").waitFor();
    await accessible(page, "provider-edit");
    const lead = (await (
      await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: p.key })
    ).json()) as Json;
    await page.goto(`${t.url}/admin/leads/${lead.id}/show`);
    await page.getByRole("button", { name: "Move to QUOTE" }).waitFor();
    await accessible(page, "lead-show");
    await page.goto(`${t.url}/admin/providers`);
    await page.getByText(`Phone Provider`).first().waitFor();
    await accessible(page, "providers");
    await page.goto(`${t.url}/admin/leads`);
    await page.getByPlaceholder("Name, email, phone, external id or order number").waitFor();
    await accessible(page, "leads");
    await page.goto(`${t.url}/admin/audit`);
    await page.getByText("provider.created").first().waitFor();
    await accessible(page, "audit-log");
    await page.goto(`${t.url}/admin/login`);
    await context.close();
    const phone = await newContext(WIDTHS[1]);
    const signin = await phone.newPage();
    await signin.goto(`${t.url}/admin/login`);
    await signin.getByRole("button", { name: "Sign in" }).waitFor();
    await accessible(signin, "sign-in");
    await signin.getByLabel("Administrator token (JWT)").fill(await t.token({ position: "AGENT" }));
    await signin.getByRole("button", { name: "Sign in" }).click();
    await signin.getByRole("heading", { name: "Your account lacks the admin position" }).waitFor();
    await accessible(signin, "forbidden");
    await phone.close();
    // The 403 of the non-admin sign-in was an answer, not a page error.
    expect(problems.filter((p) => !/status of 403/.test(p))).toEqual([]);
  }, 300_000);

  it("shows a non-admin the missing admin position and no data; a refused token stays on sign-in with the reason", async () => {
    const context = await newContext();
    const page = await context.newPage();
    const agent = await t.token({ position: "AGENT" }, { sub: "agent-007" });
    await page.goto(`${t.url}/admin/login`);
    await page.getByLabel("Administrator token (JWT)").fill(agent);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Your account lacks the admin position" }).waitFor();
    await accessible(page, "forbidden");
    await page.goto(`${t.url}/admin/providers`);
    await page.getByRole("heading", { name: "Your account lacks the admin position" }).waitFor();
    expect(await page.getByText("Phone Provider").count()).toBe(0);

    const expired = await t.token({ exp: Math.floor(Date.now() / 1000) - 60 });
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Administrator token (JWT)").fill(expired);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "The service refused this token" }).first().waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    // An expired token handed over in a link lands on sign-in saying so, not silently.
    await page.goto(`${t.url}/admin/#token=${expired}`);
    await page
      .getByRole("alert")
      .filter({ hasText: /Signed out: the token expired at \d{4}-\d{2}-\d{2}T/ })
      .first()
      .waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await context.close();
    // The 403 and 401 the console received were answers, not page errors.
    expect(problems.filter((p) => !/status of 40[13]/.test(p))).toEqual([]);
  }, 300_000);

  /** An element's background colour as the browser computes it (run in the page). */
  const backgroundOf = (e: unknown) =>
    (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(e)
      .backgroundColor;

  /** Clicks an Export CSV button and returns the downloaded file's text. */
  async function exported(page: Page): Promise<string> {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    const path = await download.path();
    return readFile(path, "utf8");
  }

  /** Data records in a CSV (RFC 4180: newlines inside quotes belong to the field), without the header. */
  function csvRecords(text: string): number {
    let records = 0;
    let quoted = false;
    let content = false;
    for (const c of text) {
      if (c === '"') quoted = !quoted;
      if (c === "\n" && !quoted) {
        if (content) records += 1;
        content = false;
      } else if (c !== "\r") content = true;
    }
    if (content) records += 1;
    return Math.max(0, records - 1);
  }

  /** A CSV's rows of cells (RFC 4180: a quoted cell may hold commas, doubled quotes and line breaks). */
  function csvCells(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let cell = "";
    let quoted = false;
    for (let i = 0; i < text.length; i += 1) {
      const c = text[i];
      if (quoted && c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = !quoted;
      else if (!quoted && c === ",") {
        row.push(cell);
        cell = "";
      } else if (!quoted && (c === "\n" || c === "\r")) {
        if (c === "\r" && text[i + 1] === "\n") i += 1;
        row.push(cell);
        rows.push(row);
        row = [];
        cell = "";
      } else cell += c;
    }
    if (cell !== "" || row.length > 0) rows.push([...row, cell]);
    return rows;
  }

  /** Every row of an admin list over the API, by cursor (what an export must hold). */
  async function countAll(path: string): Promise<number> {
    const admin = await t.token();
    let n = 0;
    let next: string | null = path;
    while (next) {
      const page = (await (await t.call("GET", next, { auth: admin })).json()) as Json;
      if (!Array.isArray(page.results)) throw new Error(`${next}: ${JSON.stringify(page)}`);
      n += page.results.length;
      next = page.next;
    }
    return n;
  }

  it("pages, exports every matching row as a downloaded CSV, and finds leads by what an admin types", async () => {
    const seenBefore = problems.length;
    const admin = await t.token();
    const bigName = `Export Freight ${Date.now()}`;
    const big = await t.provider(bigName);
    const tag = Date.now().toString(36);
    const bodies = Array.from({ length: 130 }, (_, i) => leadBody({ external_id: `exp-${tag}-${i}` }));
    // One lead with two vehicles and two history entries: still one row of the export.
    bodies[0] = leadBody({
      external_id: `exp-${tag}-0`,
      vehicles: [
        { year: 2022, make: "Porsche", model: "911", type: "CAR", tariff: 1450, deposit: 200 },
        { year: 2019, make: "Ford", model: "F-150", type: "PICKUP", tariff: 900, deposit: 100 },
      ],
    });
    const created: Json[] = [];
    for (const body of bodies) {
      const res = await t.call("POST", "/api/v1/public/leads/", { body, auth: big.key });
      expect(res.status).toBe(201);
      created.push((await res.json()) as Json);
    }
    const moved = await t.call("POST", "/leadprovider.v1.LeadWorkflowService/TransitionLead", {
      auth: admin,
      body: { leadId: String(created[0]?.id), toState: "LEAD_STATE_QUOTE" },
    });
    expect(moved.status).toBe(200);
    // A refused request with two errors: one row of the request log's export too.
    expect(
      (
        await t.call("POST", "/api/v1/public/leads/", {
          auth: big.key,
          body: leadBody({ origin_zip: "00000", overseas_type: "FOREIGN", ship_via: "DRIVE_AWAY" }),
        })
      ).status,
    ).toBe(400);
    const seven = await t.provider(`Seven Haulers ${Date.now()}`);
    for (let i = 0; i < 7; i++) await t.call("POST", "/api/v1/public/leads/", { body: leadBody(), auth: seven.key });
    const digits = `415555${String(Date.now() % 10_000).padStart(4, "0")}`;
    const findMe = (await (
      await t.call("POST", "/api/v1/public/leads/", {
        auth: seven.key,
        body: leadBody({
          first_name: "Rosalind",
          last_name: `Quenby${tag}`,
          email: `rosalind.${tag}@example.com`,
          phone_number: `(${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}`,
          external_id: `CRM-${tag}-LOOKUP`,
        }),
      })
    ).json()) as Json;

    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${t.url}/admin/login`);
    await page.getByRole("button", { name: "Use the development token" }).click();
    await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();

    // A list of 8 rows says 8 rows, with no total it does not know and no next page.
    await page.goto(`${t.url}/admin/leads?filter=${encodeURIComponent(JSON.stringify({ provider_id: seven.id }))}`);
    await page.getByRole("status").filter({ hasText: "Rows 1–8" }).waitFor();
    expect(await page.getByRole("status").filter({ hasText: "Rows" }).textContent()).toBe("Rows 1–8");
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    expect(await page.getByText(/\bof\b \d+/).count()).toBe(0);

    // Search: part of the name, an email fragment, the phone as typed another way, part of the external id.
    const search = page.getByPlaceholder("Name, email, phone, external id or order number");
    for (const q of [
      `rosalind quenby${tag}`.toUpperCase(),
      `${tag}@example`,
      `+1 ${digits.slice(0, 3)}.${digits.slice(3, 6)}.${digits.slice(6)}`,
      `${tag}-lookup`,
    ]) {
      await search.fill(q);
      await page.getByRole("status").filter({ hasText: "Rows 1–1" }).waitFor();
      await page.getByText(findMe.order_number).first().waitFor();
    }
    await search.fill("");

    // The provider's own leads, from its page; 131 rows over two pages of 100 in the export.
    await page.goto(`${t.url}/admin/providers/${big.id}/show`);
    await page.getByRole("link", { name: "Leads" }).click();
    await page.waitForURL(/\/admin\/leads\?/);
    expect(new URL(page.url()).searchParams.get("filter")).toContain(`"provider_id":${big.id}`);
    await page.getByRole("status").filter({ hasText: "Rows 1–25, more on the next page" }).waitFor();
    await accessible(page, "leads-of-provider");
    const leadsCsv = await exported(page);
    expect(csvRecords(leadsCsv)).toBe(130);
    for (const body of [bodies[0], bodies[129]]) expect(leadsCsv).toContain(String(body?.external_id));
    // (Every other lead names it too, as the original it duplicates: find it by its Porsche.)
    const twoVehicles = leadsCsv.split("\n").filter((line) => line.includes("Porsche"));
    expect(twoVehicles).toHaveLength(1);
    for (const part of [`exp-${tag}-0,`, "Ford", "QUOTE"]) expect(twoVehicles[0]).toContain(part);
    expect(leadsCsv.split("\n")[0]).toContain("order_number");
    // What a spreadsheet shows: a value or words in every cell, never JSON; the vehicles readable.
    const table = csvCells(leadsCsv);
    const header = table[0] ?? [];
    expect(table.filter((row) => row.length !== header.length)).toEqual([]);
    expect(table.flat().filter((cell) => /^\s*[[{]|\[object Object\]/.test(cell))).toEqual([]);
    const porsche = table.find((row) => row.includes(`exp-${tag}-0`)) ?? [];
    const cellOf = (column: string) => porsche[header.indexOf(column)];
    expect(cellOf("vehicle_count")).toBe("2");
    expect(cellOf("vehicles")).toBe("2022 Porsche 911 (CAR); 2019 Ford F-150 (PICKUP)");
    expect([cellOf("vehicle_1_make"), cellOf("vehicle_2_make"), cellOf("vehicle_2_tariff")]).toEqual([
      "Porsche",
      "Ford",
      "900",
    ]);
    expect(cellOf("history")).toMatch(/^LEAD \S+ by \S+; QUOTE \S+ by \S+$/);

    // Providers, the request log and the audit log export what their filters match, all pages.
    await page.getByRole("menuitem", { name: /Providers/ }).click();
    await page.getByText(bigName).first().waitFor();
    const providerCount = (
      (await (await t.call("GET", "/api/v1/lead_providers/?page_size=1", { auth: admin })).json()) as Json
    ).count;
    expect(csvRecords(await exported(page))).toBe(providerCount);
    await page.goto(`${t.url}/admin/requests?filter=${encodeURIComponent(JSON.stringify({ provider_id: big.id }))}`);
    await page.getByRole("status").filter({ hasText: "Rows 1–25" }).waitFor();
    await expect.poll(() => countAll(`/api/v1/admin/requests/?provider_id=${big.id}&page_size=100`)).toBe(131);
    expect(csvRecords(await exported(page))).toBe(131);
    await page.goto(`${t.url}/admin/audit?filter=${encodeURIComponent(JSON.stringify({ provider_id: big.id }))}`);
    await page.getByText("provider.created").first().waitFor();
    const auditRows = await countAll(`/api/v1/admin/audit_log/?provider_id=${big.id}&page_size=100`);
    expect(auditRows).toBeGreaterThan(0);
    expect(csvRecords(await exported(page))).toBe(auditRows);
    await context.close();
    expect(problems.slice(seenBefore), "errors in the browser").toEqual([]);
    expect(elsewhere, "requests to other hosts").toEqual([]);
  }, 300_000);

  it("shows values as people read them, asks before what cannot be undone, and keeps webhook deliveries in view", async () => {
    const seenBefore = problems.length;
    const admin = await t.token();
    const receiver = await startReceiver();
    receiver.answer = () => 500;
    try {
      const pName = `Readable Cargo ${Date.now()}`;
      const p = await t.provider(pName, { webhook_url: receiver.url });
      const leads: Json[] = [];
      for (let i = 0; i < 12; i++)
        leads.push(
          (await (
            await t.call("POST", "/api/v1/public/leads/", {
              auth: p.key,
              body: leadBody({
                vehicles: [
                  {
                    year: 2022,
                    make: "Porsche",
                    model: "911",
                    type: "CAR",
                    tariff: 1450,
                    deposit: 200,
                    vehicle_run: true,
                  },
                ],
              }),
            })
          ).json()) as Json,
        );
      const testKey = (
        (await (
          await t.call("POST", `/api/v1/lead_providers/${p.id}/generate_api_key/`, {
            auth: admin,
            body: { mode: "test" },
          })
        ).json()) as Json
      ).api_key as string;
      const testLead = (await (
        await t.call("POST", "/api/v1/public/leads/", { auth: testKey, body: leadBody() })
      ).json()) as Json;
      await t.call("PATCH", `/api/v1/lead_providers/${p.id}/`, { auth: admin, body: { rate_limit_per_minute: 90 } });
      await t.call("POST", `/api/v1/lead_providers/${p.id}/webhook/test/`, { auth: admin });
      await receiver.waitFor((all) => all.length >= 14, 10_000, "the first attempts");

      const context = await newContext();
      const page = await context.newPage();
      // The first visit to sign-in shows no error.
      await page.goto(`${t.url}/admin/`);
      await page.getByRole("button", { name: "Use the development token" }).waitFor();
      await page.waitForTimeout(1000);
      expect(await page.locator(".MuiSnackbar-root").count()).toBe(0);
      await page.getByRole("button", { name: "Use the development token" }).click();
      await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();

      // The provider list: leads this week, the last lead, key and webhook health.
      await page.getByRole("menuitem", { name: /Providers/ }).click();
      await page.getByPlaceholder("Search by name").fill(pName);
      const row = page.getByRole("row").filter({ hasText: pName });
      await row.getByText("12", { exact: true }).waitFor();
      await row.getByText(/^Used .* ago$/).waitFor();
      await row.getByText(/^\d+ pending$|^Webhook OK$/).waitFor();
      await row.getByText(/ago$/).first().waitFor();
      await accessible(page, "providers-health");

      // A provider's page: durations in words, safe key rotation and revocation, a chosen overlap.
      await page.goto(`${t.url}/admin/providers/${p.id}/show`);
      const usage = page.getByRole("region", { name: "Usage now" });
      await usage
        .getByText(/resets in \d+ (s|min|h)\)/)
        .first()
        .waitFor();
      expect(await usage.textContent()).not.toMatch(/\d{3,} s\)/);
      // The webhook's secret and deliveries are on the Webhooks tab, opened as a person would.
      await page.getByRole("tab", { name: "Webhooks" }).click();
      await page.waitForURL(new RegExp(`/admin/providers/${p.id}/show/webhooks$`));
      await page.getByRole("button", { name: "Reveal signing secret" }).click();
      await page.getByRole("button", { name: "Rotate secret" }).click();
      const overlap = page.getByRole("dialog", { name: "Rotate the signing secret" });
      expect(await overlap.getByLabel("The previous secret keeps signing for").inputValue()).toBe("24");
      await accessible(page, "secret-rotate", { dialog: true });
      await overlap.getByLabel("The previous secret keeps signing for").fill("2");
      await overlap.getByRole("button", { name: "Rotate secret" }).click();
      await page.getByText("New signing secret; the previous one signs too for 2 h").waitFor();
      const endpoint = (await (
        await t.call("GET", `/api/v1/lead_providers/${p.id}/webhook/`, { auth: admin })
      ).json()) as Json;
      const overlapMs = Date.parse(endpoint.previous_secret_expires_at) - Date.now();
      expect(overlapMs).toBeGreaterThan(7_000_000);
      expect(overlapMs).toBeLessThan(7_300_000);

      // Deliveries: each with its lead, paged, tests marked; retry now; each attempt.
      const deliveries = page.getByRole("table", { name: "Webhook deliveries" });
      await deliveries.getByRole("link", { name: leads[11]?.order_number }).waitFor();
      await deliveries
        .getByRole("row")
        .filter({ hasText: "webhook.test" })
        .getByText("TEST", { exact: true })
        .waitFor();
      await page.getByRole("button", { name: "Older deliveries" }).click();
      await deliveries.getByRole("link", { name: leads[0]?.order_number }).waitFor();
      expect(await deliveries.getByRole("link", { name: leads[11]?.order_number }).count()).toBe(0);
      await page.getByRole("button", { name: "Newer deliveries" }).click();
      const newest = deliveries.getByRole("row").filter({ hasText: leads[11]?.order_number });
      await newest.waitFor();
      expect(await newest.textContent()).toMatch(/in \d+ (s|min|h)/); // the next attempt, in words
      receiver.answer = () => 204;
      await newest.getByRole("button", { name: /^Retry now delivery/ }).click();
      await expect.poll(() => newest.textContent(), { timeout: 10_000 }).toContain("delivered");
      await newest.getByRole("button", { name: /^Attempts of delivery/ }).click();
      const attempts = page.getByRole("dialog");
      await attempts.getByRole("cell", { name: "the endpoint answered 500" }).first().waitFor();
      await attempts.getByRole("cell", { name: "HTTP 204" }).waitFor();
      await accessible(page, "delivery-attempts", { dialog: true });
      await attempts.getByRole("button", { name: "Close" }).click();

      // Revoking is in the console (the Keys tab), red, and stops the key.
      await page.getByRole("tab", { name: "Keys" }).click();
      await page.getByRole("button", { name: "Revoke test key" }).click();
      const revoke = page.getByRole("dialog", { name: "Revoke the test key?" });
      const red = "rgb(198, 40, 40)"; // the theme's error colour, as on the trigger
      expect(await revoke.getByRole("button", { name: "Revoke test key" }).evaluate(backgroundOf)).toBe(red);
      await revoke.getByRole("button", { name: "Revoke test key" }).click();
      await page.getByText("The test key is revoked").waitFor();
      expect((await t.call("GET", `/api/v1/public/leads/${testLead.external_id}/`, { auth: testKey })).status).toBe(
        401,
      );
      // Deactivating asks with a red button, like its trigger; cancelled here.
      await page.getByRole("button", { name: "Deactivate" }).click();
      const deactivate = page.getByRole("dialog", { name: `Deactivate ${pName}?` });
      expect(await deactivate.getByRole("button", { name: "Deactivate" }).evaluate(backgroundOf)).toBe(red);
      await accessible(page, "provider-deactivate", { dialog: true });
      await deactivate.getByRole("button", { name: "Cancel" }).click();

      // A lead: state chips, money with its currency, vehicle_run; a test lead under a TEST banner.
      await page.goto(`${t.url}/admin/leads/${leads[0]?.id}/show`);
      await page.getByText("$1,450 USD").waitFor();
      await page.getByText("$200 USD").waitFor();
      await page.getByRole("cell", { name: "Yes" }).waitFor();
      expect(await page.locator(".MuiChip-label", { hasText: /^LEAD$/ }).count()).toBeGreaterThan(0);
      expect(await page.getByText("TEST — this lead").count()).toBe(0);
      // The move not offered says why.
      const order = page.getByRole("button", { name: "Move to ORDER" });
      expect(await order.isDisabled()).toBe(true);
      const hint = await order.getAttribute("aria-describedby");
      expect(await page.locator(`#${hint}`).textContent()).toContain("moves to QUOTE first");
      await page.goto(`${t.url}/admin/leads/${testLead.id}/show`);
      await page.getByText("TEST — this lead was made with a test key").waitFor();
      await accessible(page, "lead-test");

      // The audit log: part of an actor, links to targets, before and after in field names people use.
      await page.goto(
        `${t.url}/admin/audit?filter=${encodeURIComponent(JSON.stringify({ provider_id: p.id, actor: "TEST-ad" }))}`,
      );
      await page.getByText("Requests per minute: 1,000 → 90").waitFor(); // the app's default, then 90
      await page.getByRole("link", { name: pName }).first().click();
      await page.waitForURL(new RegExp(`/admin/providers/${p.id}/show$`));

      // Creating a provider says so in words.
      await page.goto(`${t.url}/admin/providers/create`);
      const name = `Plain Words ${Date.now()}`;
      await page.getByLabel("Name").fill(name);
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText(`Provider ${name} created`).waitFor();
      await context.close();
      expect(problems.slice(seenBefore), "errors in the browser").toEqual([]);
      expect(elsewhere, "requests to other hosts").toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 300_000);

  it("never scrolls sideways at 390 px, on any screen, with the app bar's actions in reach", async () => {
    const seenBefore = problems.length;
    const admin = await t.token();
    const receiver = await startReceiver();
    try {
      const p = await t.provider(`Narrow Screens Incorporated ${Date.now()}`, { webhook_url: receiver.url });
      const lead = (await (
        await t.call("POST", "/api/v1/public/leads/", {
          auth: p.key,
          body: leadBody({ note_from_shipper: "x".repeat(400) }),
        })
      ).json()) as Json;
      await t.call("POST", `/api/v1/lead_providers/${p.id}/webhook/test/`, { auth: admin });
      const bad = await t.call("POST", "/api/v1/public/leads/", {
        auth: p.key,
        body: leadBody({ origin_zip: "00000" }),
      });
      const requestId = bad.headers.get("x-request-id") as string;
      const phone = await newContext(WIDTHS[1]);
      const page = await phone.newPage();
      await page.goto(`${t.url}/admin/login`);
      await page.getByRole("button", { name: "Use the development token" }).click();
      await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
      const screens: [string, string][] = [
        ["dashboard", "/admin/"],
        ["providers", "/admin/providers"],
        ["provider", `/admin/providers/${p.id}/show`],
        ["provider-edit", `/admin/providers/${p.id}`],
        ["provider-create", "/admin/providers/create"],
        ["leads", "/admin/leads"],
        ["lead", `/admin/leads/${lead.id}/show`],
        ["requests", "/admin/requests"],
        ["request", `/admin/requests/${requestId}/show`],
        ["audit", "/admin/audit"],
      ];
      for (const [screen, path] of screens) {
        await page.goto(`${t.url}${path}`);
        await page.waitForLoadState("networkidle").catch(() => {});
        await page.waitForTimeout(300);
        const width = Number(await page.evaluate("document.documentElement.scrollWidth"));
        expect(width, `${screen} at 390 px`).toBeLessThanOrEqual(390);
        // The app bar's actions (refresh, the user menu) are on screen.
        for (const action of [
          page.getByRole("button", { name: "Refresh" }),
          page.getByRole("button", { name: /dev-admin|Profile/ }),
        ]) {
          const box = await action.first().boundingBox();
          expect(box && box.x + box.width <= 390, `${screen}: app bar action in reach`).toBe(true);
        }
      }
      await phone.close();
      expect(problems.slice(seenBefore), "errors in the browser").toEqual([]);
    } finally {
      await receiver.close();
    }
  }, 300_000);
});

// Headers only: no browser needed, so this runs wherever the suite runs.
describe("the back office's headers", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" });
  });
  afterAll(() => t.stop());

  it("serves the console with a Content-Security-Policy of its own origin only, and leaves the API's headers alone", async () => {
    const page = await t.call("GET", "/admin/providers/1/show");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("connect-src 'self'");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const api = await t.call("GET", "/api/v1/lead_providers/", { auth: await t.token() });
    expect(api.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect((await t.call("GET", "/admin/favicon.svg")).headers.get("content-type")).toContain("image/svg+xml");
    expect((await t.call("GET", "/admin/assets/missing.js")).status).toBe(404);
  });

  it("caches the console's hashed assets for a year, never its HTML", async () => {
    const html = await t.call("GET", "/admin/");
    expect(html.headers.get("cache-control")).toBe("no-store");
    const asset = /\/admin\/assets\/[^"]+\.js/.exec(await html.text())?.[0];
    expect(asset).toBeDefined();
    const res = await t.call("GET", asset as string);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const missing = await t.call("GET", "/admin/assets/missing-0000.js");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("cache-control")).toBe("no-store");
  });
});
