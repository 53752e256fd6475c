/**
 * The drop-in quote form in Debian's chromium (playwright-core), against a real server: a page on
 * another origin (a node:http server on 127.0.0.2) embeds the snippet exactly as the portal's
 * API gives it; a person fills the form with the keyboard (the ZIP's city shown, a ZIP the
 * directory lacks and a phone number the service refuses shown under their fields, focus on the
 * first), ticks the consent box with Space and sends it: the order number is shown, the
 * `lead-submitted` event fires, and the consent record (read as an administrator) holds the
 * text, its hash, the page, the origin, the fields, TrustedForm and Jornaya. The captured body
 * sent again is refused (each solved challenge counts once). The same page from a origin the
 * provider did not allow (127.0.0.3) gets no CORS answer and the form says so. Consent text
 * with markup is shown as text. axe-core finds nothing at moderate or above at 1280 and 390 px,
 * and nothing scrolls sideways at 390. FORMS_SCREENSHOTS=<dir> saves each screen.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORM_SCRIPT_FILE } from "../src/rest/form-script.ts";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { freshPhone, portalPerson } from "./helpers/money.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`forms.browser.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const SHOTS = process.env.FORMS_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "saffron glacier harbor 73 pier";
const TRUSTED_FORM = `https://cert.trustedform.com/${"0123456789abcdef".repeat(3).slice(0, 40)}`;
const JORNAYA = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f";
const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

const servers: http.Server[] = [];

/** The page's globals as a callback given to page.evaluate sees them (the tests' tsconfig has no DOM types). */
interface PageGlobals {
  document: {
    querySelector(selector: string): {
      shadowRoot: {
        activeElement: { id: string } | null;
        querySelectorAll(selector: string): { length: number };
        querySelector(selector: string): {
          addEventListener(type: string, listener: (e: { detail: { state: string } }) => void): void;
        } | null;
      } | null;
    } | null;
    documentElement: { scrollWidth: number };
    addEventListener(type: string, listener: (e: { detail: unknown }) => void): void;
  };
  submitted?: unknown;
  pwned?: number;
  widgetStates?: string[];
}

/** A provider's marketing page on `host` (a loopback address), port 0: its origin. */
async function pageServer(host: string, html: () => string): Promise<string> {
  const server = http.createServer((req, res) => {
    if ((req.url ?? "/").startsWith("/quote")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(html());
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  servers.push(server);
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

/** The shadow root's element with this id: what has focus, for instance. */
const activeId = (page: Page) =>
  page.evaluate(() => {
    const host = (globalThis as unknown as PageGlobals).document.querySelector("lead-quote-form");
    return host?.shadowRoot?.activeElement?.id ?? null;
  });

describe.skipIf(!HAVE_CHROMIUM)("the drop-in quote form in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let admin: string;
  let provider: { id: number; key: string };
  let snippet = "";
  let allowed = "";
  let refusedOrigin = "";
  const problems: string[] = [];

  async function context(size: { width: number; height: number }): Promise<BrowserContext> {
    const ctx = await browser.newContext({ viewport: size });
    ctx.setDefaultTimeout(60_000);
    ctx.on("weberror", (e) => problems.push(`page error: ${e.error().message}`));
    return ctx;
  }

  async function check(page: Page, screen: string): Promise<void> {
    await page.waitForLoadState("networkidle").catch(() => {});
    await page.waitForTimeout(300);
    const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const bad = result.violations
      .filter((v) => v.impact === "moderate" || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.html.slice(0, 160)).join(" | ")}`);
    const width = page.viewportSize()?.width ?? 0;
    expect(bad, `${screen} at ${width} px: accessibility\n${bad.join("\n")}`).toEqual([]);
    // axe names a node inside a shadow root by a path of selectors (host first): it looked inside.
    const inside = result.passes.flatMap((r) => r.nodes).filter((n) => n.target.some((x) => Array.isArray(x)));
    expect(inside.length, `${screen}: axe saw inside the form's shadow root`).toBeGreaterThan(0);
    const scrollWidth = await page.evaluate(
      () => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth,
    );
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
    if (SHOTS) {
      mkdirSync(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, `${screen}-${width}.png`), fullPage: true });
    }
  }

  async function settings(body: Json): Promise<Json> {
    const res = await t.call("PUT", `/api/v1/lead_providers/${provider.id}/form_settings/`, { auth: admin, body });
    expect(res.status, await res.clone().text()).toBe(200);
    return (await res.json()) as Json;
  }

  beforeAll(async () => {
    expect(existsSync(FORM_SCRIPT_FILE), "forms/dist/quote-form.js is built (make forms/dist/quote-form.js)").toBe(
      true,
    );
    t = await startTestApp(
      { name: "pglite" },
      { BROKER_NAME: "Acme Auto Transport", FORM_LIMIT_PER_IP_PER_HOUR: "1000", RATE_LIMIT_PER_MINUTE: "1000" },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    admin = await t.token();
    provider = await t.provider(`Form Motors ${Date.now()}`);
    const issued = await t.call("POST", `/api/v1/lead_providers/${provider.id}/publishable_key/`, {
      auth: admin,
      body: { mode: "test" },
    });
    expect(issued.status, await issued.clone().text()).toBe(201);

    const html = () => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Ship your car with Form Motors</title></head>
<body><main><h1>Get a free quote</h1>
${snippet}
<input type="hidden" name="xxTrustedFormCertUrl" value="${TRUSTED_FORM}">
<input type="hidden" id="leadid_token" value="${JORNAYA}">
</main></body></html>`;
    allowed = await pageServer("127.0.0.2", html);
    refusedOrigin = await pageServer("127.0.0.3", html);
    await settings({ allowed_origins: [allowed], consent_text: null, enabled: true });

    // The snippet exactly as the portal gives it to one of the provider's people.
    const person = await portalPerson(t, admin, provider.id, PASSWORD);
    const res = await person.portal("GET", "form_settings/");
    expect(res.status).toBe(200);
    const shown = (await res.json()) as Json;
    snippet = String(shown.snippets.test);
    expect(snippet).toBe(
      `<script src="${t.url}/forms/v1/quote-form.js" defer></script>\n` +
        `<lead-quote-form publishable-key="${shown.publishable_keys.test.publishable_key}"></lead-quote-form>`,
    );
  }, 270_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) s.close();
    await t?.stop();
  });

  it("serves the script to any site: JavaScript, cached a year, readable cross-origin, gzipped", async () => {
    const res = await fetch(`${t.url}/forms/v1/quote-form.js`, { headers: { "accept-encoding": "gzip" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400, immutable");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(await res.text()).toContain("lead-quote-form");
    const again = await fetch(`${t.url}/forms/v1/quote-form.js`, {
      headers: { "if-none-match": res.headers.get("etag") ?? "" },
    });
    expect(again.status).toBe(304);
  });

  it("takes a lead from a person on an allowed page, keyboard only, with its consent record (1280 px)", async () => {
    const ctx = await context(DESKTOP);
    const page = await ctx.newPage();
    const pageUrl = `${allowed}/quote?utm_source=fb-spring`;
    await page.goto(pageUrl);
    await page.getByLabel("Pickup ZIP code").waitFor();
    await check(page, "form-empty");

    // Keyboard only, in the order Tab takes: the hidden honeypot is never reached.
    const visited: (string | null)[] = [];
    const tab = async (to: string) => {
      await page.keyboard.press("Tab");
      const id = await activeId(page);
      visited.push(id);
      expect(id, `Tab after ${visited.at(-2)}`).toBe(to);
    };
    await page.getByLabel("Pickup ZIP code").focus();
    await page.keyboard.type("90210");
    await page.getByText("Beverly Hills, CA").waitFor();
    await tab("destination_zip");
    await page.keyboard.type("00000");
    const destination = page.getByLabel("Delivery ZIP code", { exact: true });
    await page.getByText("00000 is not a US ZIP code we know").waitFor();
    await expect.poll(() => destination.getAttribute("aria-invalid")).toBe("true");
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("10001");
    await page.getByText("New York, NY").waitFor();
    expect(await destination.getAttribute("aria-invalid")).toBeNull();
    await tab("estimated_ship_date");
    const ship = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const [yyyy, mm, dd] = ship.split("-");
    await page.keyboard.type(`${mm}${dd}${yyyy}`);
    expect(await page.getByLabel("Ship date").inputValue()).toBe(ship);
    // Tab walks the date's own parts (and its calendar button) before leaving it.
    for (let i = 0; i < 4 && (await activeId(page)) === "estimated_ship_date"; i++) await page.keyboard.press("Tab");
    expect(await activeId(page)).toBe("overseas_type");
    await tab("ship_via");
    await page.keyboard.press("ArrowDown"); // Open carrier → Enclosed carrier
    expect(await page.getByLabel("Shipping method").inputValue()).toBe("ENCLOSED");
    await tab("v0-year");
    await page.keyboard.type("2021");
    await tab("v0-make");
    await page.keyboard.type("Toyota");
    await tab("v0-model");
    await page.keyboard.type("Camry");
    await tab("v0-type");
    await tab("v0-run-yes");
    await tab("add-vehicle");
    await page.keyboard.press("Enter");
    await expect.poll(() => activeId(page)).toBe("v1-year");
    await page.keyboard.type("2019");
    await tab("v1-make");
    await page.keyboard.type("Honda");
    await tab("v1-model");
    await page.keyboard.type("Civic");
    await tab("v1-type");
    await tab("v1-run-yes");
    await page.keyboard.press("ArrowRight"); // it does not run
    expect(await page.getByRole("group", { name: "Vehicle 2" }).getByLabel("No").isChecked()).toBe(true);
    await tab("v1-remove");
    await tab("add-vehicle");
    await tab("first_name");
    await page.keyboard.type("Maria");
    await tab("last_name");
    await page.keyboard.type("Gonzalez");
    await tab("email");
    await page.keyboard.type(`maria.${Date.now()}@example.com`);
    await tab("phone_number");
    await page.keyboard.type("(800) 555-0199"); // toll-free: the service refuses it
    await tab("consent");
    await page.keyboard.press("Space");
    const consent = page.getByRole("checkbox", { name: /Acme Auto Transport/ });
    expect(await consent.isChecked()).toBe(true);
    // Past the consent box: the widget's own box, then the send button (never the honeypot).
    for (let i = 0; i < 3 && (await activeId(page)) !== "submit"; i++) await page.keyboard.press("Tab");
    expect(await activeId(page)).toBe("submit");
    expect(visited).not.toContain("company_website");
    await check(page, "form-filled");

    // Every state the challenge widget goes through from here: a refused answer asks it for a
    // fresh solution, and the error field's focus must not start a second solve that aborts the
    // first (which the widget reports as "Verification failed" in a red popover).
    await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      const states: string[] = [];
      w.widgetStates = states;
      const widget = w.document.querySelector("lead-quote-form")?.shadowRoot?.querySelector("altcha-widget");
      widget?.addEventListener("statechange", (e) => states.push(e.detail.state));
    });
    const refusedAnswer = page.waitForResponse((r) => r.url().includes("/api/v1/forms/leads/"));
    await page.keyboard.press("Enter");
    const refused = (await (await refusedAnswer).json()) as Json;
    expect(refused.code).toBe("validation_error");
    const phoneError = refused.errors.find((e: Json) => e.field === "phone_number");
    expect(phoneError, JSON.stringify(refused)).toBeDefined();
    await page.getByText(phoneError.message).waitFor();
    const phone = page.getByLabel("Phone", { exact: true });
    expect(await phone.getAttribute("aria-invalid")).toBe("true");
    expect(await activeId(page)).toBe("phone_number");
    expect(await page.getByRole("alert").textContent()).toContain("Please correct the field marked below.");
    await check(page, "form-refused");

    await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      w.document.addEventListener("lead-submitted", (e) => {
        w.submitted = e.detail;
      });
    });
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type(freshPhone());
    const sent = page.waitForRequest((r) => r.url().includes("/api/v1/forms/leads/") && r.method() === "POST");
    const answered = page.waitForResponse((r) => r.url().includes("/api/v1/forms/leads/") && r.status() === 201);
    await page.keyboard.press("Enter");
    const body = (await sent).postData() ?? "";
    const created = (await (await answered).json()) as Json;
    expect(created.order_number).toMatch(/^LP-/);
    await page.getByText(`Your quote request ${created.order_number} was received`).waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).submitted)).toEqual({
      order_number: created.order_number,
      external_id: created.external_id,
      livemode: false,
    });
    await check(page, "form-sent");
    const states = await page.evaluate(() => (globalThis as unknown as PageGlobals).widgetStates);
    expect(states, "the widget's states").toContain("verified");
    expect(states, "the widget's states").not.toContain("error");

    const sentBody = JSON.parse(body) as Json;
    expect(sentBody.company_website).toBe("");
    expect(sentBody.sub_id).toBe("fb-spring");
    expect(sentBody.external_id).toBeUndefined();

    const record = await t.call("GET", `/api/v1/admin/consents/${created.consent_id}/`, { auth: admin });
    expect(record.status, await record.clone().text()).toBe(200);
    const c = (await record.json()) as Json;
    expect(c.text).toContain("Acme Auto Transport");
    expect(c.text_sha256).toBe(sha256(c.text));
    expect(c.accepted).toBe(true);
    expect(c.page_url).toBe(pageUrl);
    expect(c.origin).toBe(allowed);
    expect(c.order_number).toBe(created.order_number);
    expect(c.trusted_form_cert_url).toBe(TRUSTED_FORM);
    expect(c.jornaya_lead_id).toBe(JORNAYA);
    expect(c.browser_time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(c.fields).toMatchObject({
      first_name: "Maria",
      last_name: "Gonzalez",
      origin_zip: "90210",
      destination_zip: "10001",
      estimated_ship_date: ship,
      ship_via: "ENCLOSED",
      sub_id: "fb-spring",
      vehicles: [
        { year: 2021, make: "Toyota", model: "Camry", vehicle_run: true },
        { year: 2019, make: "Honda", model: "Civic", vehicle_run: false },
      ],
    });

    // The same solved challenge, sent again from the page: refused.
    const replay = await page.evaluate(
      async ({ url, key, body }) => {
        const r = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "x-publishable-key": key },
          body,
        });
        return { status: r.status, body: (await r.json()) as { code?: string } };
      },
      { url: `${t.url}/api/v1/forms/leads/`, key: keyOf(snippet), body },
    );
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe("challenge_invalid");
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("fits a phone, and shows the provider's consent text with markup as text (390 px)", async () => {
    const marked = 'I agree that <b>Acme</b> <img src=x onerror="window.pwned=1"> may call me about my car.';
    await settings({ allowed_origins: [allowed], consent_text: marked, enabled: true });
    const ctx = await context(PHONE);
    const page = await ctx.newPage();
    await page.goto(`${allowed}/quote`);
    const consent = page.getByRole("checkbox", { name: marked });
    await consent.waitFor();
    const inside = await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      const root = w.document.querySelector("lead-quote-form")?.shadowRoot;
      return { b: root?.querySelectorAll("b, img").length, pwned: w.pwned };
    });
    expect(inside).toEqual({ b: 0, pwned: undefined });
    await check(page, "form-phone");
    // Sending it empty: every field says what it needs, focus on the first.
    await page.getByRole("button", { name: "Get my quote" }).click();
    await expect.poll(() => activeId(page)).toBe("origin_zip");
    expect(await page.getByRole("alert").textContent()).toBe("Please correct the 11 fields marked below.");
    await page.getByText("Tick this box to let us contact you about your quote.").waitFor();
    await check(page, "form-phone-errors");
    await settings({ allowed_origins: [allowed], consent_text: null, enabled: true });
    expect(problems).toEqual([]);
    await ctx.close();
  });

  it("gets no answer on a page of an origin the provider did not allow, and says so", async () => {
    const ctx = await context(DESKTOP);
    const page = await ctx.newPage();
    const failed: string[] = [];
    page.on("requestfailed", (r) => failed.push(r.url()));
    await page.goto(`${refusedOrigin}/quote`);
    await page.getByRole("alert").getByText(`check that this page's address (${refusedOrigin})`).waitFor();
    expect(failed.some((u) => u.includes("/api/v1/forms/config/"))).toBe(true);
    expect(await page.getByLabel("Pickup ZIP code").count()).toBe(0);
    // The service's own answer to that origin: 403 origin_not_allowed, without CORS headers.
    const res = await fetch(`${t.url}/api/v1/forms/config/`, {
      headers: { origin: refusedOrigin, "x-publishable-key": keyOf(snippet) },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await res.json()) as Json).code).toBe("origin_not_allowed");
    await ctx.close();
  });
});

function keyOf(snippet: string): string {
  return /publishable-key="([^"]+)"/.exec(snippet)?.[1] ?? "";
}
