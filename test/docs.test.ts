/**
 * The published contract: /openapi.yaml is the file in the repository, and /docs is an interactive
 * reference that a real browser renders from this service alone (Scalar's npm bundle; no CDN, no
 * fonts or telemetry from elsewhere). The browser check needs Debian's chromium, which `.ci/run`
 * installs; without it, only that one check is skipped, with a note.
 */
import { existsSync, readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { SPEC_FILE } from "./helpers/prism.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) {
  console.log(
    `docs.test: SKIPPING the browser check of /docs: no chromium at ${CHROMIUM} ` +
      "(apt-get install -y chromium; .ci/run installs it, so CI always runs this check)",
  );
}

const spec = YAML.parse(readFileSync(SPEC_FILE, "utf8")) as Json;

describe("published API reference", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" });
  });
  afterAll(() => t?.stop());

  it("serves /openapi.yaml exactly as the repository's openapi/openapi.yaml", async () => {
    const res = await t.call("GET", "/openapi.yaml");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("yaml");
    expect(await res.text()).toBe(readFileSync(SPEC_FILE, "utf8"));
  });

  it("serves /docs as a page whose scripts all come from this service", async () => {
    const res = await t.call("GET", "/docs");
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:/);
    const html = await res.text();
    const scripts = [...html.matchAll(/<script[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1] as string);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src.startsWith("/")).toBe(true);
      expect((await t.call("GET", src)).status, src).toBe(200);
    }
  });

  it.skipIf(!HAVE_CHROMIUM)(
    "renders /docs in a headless browser with the createLead operation, using no host but the service, and Try it calls the service itself",
    async () => {
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
        ],
      });
      try {
        const context = await browser.newContext();
        const origin = new URL(t.url).origin;
        const requested: string[] = [];
        const elsewhere: string[] = [];
        const problems: string[] = [];
        // Every request of the page and its workers: recorded, and never let out to the network.
        await context.route("**/*", (route) => {
          const url = route.request().url();
          requested.push(url);
          if (/^(data|blob):/.test(url) || new URL(url).origin === origin) return route.continue();
          elsewhere.push(url);
          return route.abort();
        });
        context.on("weberror", (e) => problems.push(`page error: ${e.error().message}`));
        const page = await context.newPage();
        page.on("console", (m) => {
          if (m.type() === "error") problems.push(`console: ${m.text()}`);
        });

        const response = await page.goto(`${t.url}/docs`, { waitUntil: "load" });
        expect(response?.status()).toBe(200);
        const summary = spec.paths["/api/v1/public/leads/"].post.summary as string;
        await page.getByText(summary, { exact: true }).first().waitFor({ state: "visible", timeout: 20_000 });
        // Let late requests (fonts, lazy chunks, telemetry) show up before judging.
        await page.waitForLoadState("networkidle", { timeout: 10_000 }).catch(() => {});

        expect(requested).toContain(`${origin}/openapi.yaml`);
        expect(elsewhere, "requests to hosts other than the service").toEqual([]);
        expect(problems, "errors on the page").toEqual([]);

        // "Try it" sends to the page's own origin (whatever port served it), not the contract's
        // example server: the request reaches this service, which answers it (401: no key given).
        await page.goto(`${t.url}/docs#tag/common/GET/api/v1/common/states/`, { waitUntil: "load" });
        await page.getByRole("button", { name: "Test Request (get /api/v1/common/states/)" }).click();
        await page
          .getByRole("button", { name: `Server: ${origin}` })
          .first()
          .waitFor();
        const answered = page.waitForResponse((r) => r.url() === `${origin}/api/v1/common/states/`);
        await page.getByRole("button", { name: /^Send/ }).first().click();
        expect((await answered).status()).toBe(401);
        expect(elsewhere, "requests to hosts other than the service").toEqual([]);
      } finally {
        await browser.close();
      }
    },
    150_000,
  );
});
