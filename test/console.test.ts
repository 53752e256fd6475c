/**
 * The back office at /admin/, driven in Debian's chromium (playwright-core), as an administrator
 * would use it: sign in, create a provider, issue, reveal, copy and rotate its key, find a lead
 * submitted with that key, move it to QUOTE and ORDER over Connect, read the history and the audit
 * log. axe-core checks every screen at 1280 px and at a 390 px phone width; the page must log no
 * errors and fetch nothing but this service. CONSOLE_SCREENSHOTS=<dir> also saves each screen.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page, type Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`console.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.CONSOLE_SCREENSHOTS;
const WIDTHS = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;

describe.skipIf(!HAVE_CHROMIUM)("the back office in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  async function newContext(width: (typeof WIDTHS)[number] = WIDTHS[0]): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: width.width, height: width.height } });
    context.setDefaultTimeout(30_000);
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: t.url });
    const origin = new URL(t.url).origin;
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (/^(data|blob):/.test(url) || new URL(url).origin === origin) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    context.on("weberror", (e) => problems.push(`page error: ${e.error().message}`));
    context.on("page", (page) =>
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console: ${m.text()}`);
      }),
    );
    return context;
  }

  /** axe-core on the current screen: no serious or critical violation. */
  async function accessible(page: Page, screen: string): Promise<void> {
    await page.waitForLoadState("networkidle").catch(() => {});
    const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const bad = result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} — ${v.nodes
            .map((n) => `${n.target.join(" ")} ${n.html.slice(0, 160)}`)
            .slice(0, 3)
            .join(" | ")}`,
      );
    expect(bad, `${screen}: accessibility\n${bad.join("\n")}`).toEqual([]);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      const width = page.viewportSize()?.width ?? 0;
      await page.screenshot({ path: join(SHOTS, `${screen}-${width}.png`), fullPage: width > 400 });
    }
  }

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
  });
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
    await page.getByRole("dialog").getByRole("button", { name: "Rotate" }).click();
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
    await page.getByPlaceholder("External id or order number").fill(String(body.external_id));
    await page.getByText(lead.order_number).first().click();
    await page.getByRole("button", { name: "Move to QUOTE" }).waitFor();
    await accessible(page, "lead-show");
    await page.getByRole("button", { name: "Move to QUOTE" }).click();
    await page.getByRole("button", { name: "Move to ORDER" }).and(page.locator(":enabled")).waitFor();
    await page.getByRole("button", { name: "Move to ORDER" }).click();
    await expect
      .poll(
        async () =>
          (await t
            .call("GET", `/api/v1/public/leads/${body.external_id}/`, { auth: key })
            .then((r) => r.json())) as Json,
      )
      .toMatchObject({ state: "ORDER" });
    await page.reload();
    const history = page
      .locator("table")
      .filter({ hasText: "to_state" })
      .or(page.locator("table").filter({ hasText: "To state" }));
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
  }, 180_000);

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

    await page.goto(`${t.url}/admin/providers/${second.id}/show#token=${admin}`);
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
    // The service's refusal is shown under the member it names.
    await panel
      .getByText(/caps\.day must be a positive integer/)
      .first()
      .waitFor();
    // That refusal was asked for: the browser logs the 400 it got; nothing else may be logged.
    const asked = problems.findIndex((p) => p.includes("status of 400"));
    expect(asked).toBeGreaterThanOrEqual(0);
    problems.splice(asked, 1);
    await panel.getByLabel("Per day").fill("25");
    await expect.poll(() => panel.getByText(/caps\.day must be a positive integer/).count()).toBe(1); // the alert only
    await panel.getByLabel("Open only at these hours", { exact: false }).or(panel.getByLabel("Always open")).click();
    await panel
      .getByLabel("Saturday opens")
      .waitFor({ state: "detached" })
      .catch(() => {});
    await panel.getByRole("button", { name: "Add Saturday hours" }).click();
    await panel.getByLabel("Saturday closes").fill("13:00");
    await accessible(page, "provider-intake");
    await panel.getByRole("button", { name: "Save intake rules" }).click();
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
    await row.getByText("Duplicate (phone_number, email)").waitFor();
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
  }, 120_000);

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
      const perDay = page.getByRole("img", { name: /^Leads per day from / });
      await perDay.waitFor();
      // Real bars drawn by the chart library, not an empty frame.
      await expect.poll(() => perDay.locator("svg rect, svg path").count()).toBeGreaterThan(0);
      await expect.poll(() => funnel.locator("svg rect, svg path").count()).toBeGreaterThan(0);
      await accessible(page, "dashboard-provider");

      await page.goto(`${t.url}/admin/`);
      const row = page.getByRole("row").filter({ hasText: name });
      await row.waitFor();
      await expect.poll(() => row.getByRole("cell").nth(1).textContent()).toBe("4");
      await accessible(page, "dashboard");

      // Paste the request id from the provider's error: the search lands on the entry.
      await page.goto(`${t.url}/admin/requests`);
      await page.getByPlaceholder("Request id").fill(refused.request_id);
      await page.waitForURL(`**/admin/requests/${refused.request_id}/show`);
      await page.getByText("origin_zip 00000 is not a known US ZIP code").first().waitFor();
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
  }, 180_000);

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
    await page.getByPlaceholder("External id or order number").waitFor();
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
  }, 120_000);

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
    await context.close();
    // The 403 and 401 the console received were answers, not page errors.
    expect(problems.filter((p) => !/status of 40[13]/.test(p))).toEqual([]);
  }, 120_000);
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
});
