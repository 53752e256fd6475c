/**
 * Browser checks shared by the back office's and the provider portal's tests (chromium +
 * playwright-core): a context that lets the page fetch nothing but this service and records page
 * errors, and axe-core on a screen once its animations have settled.
 */
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";

export interface Watch {
  /** Page errors and console errors. */
  readonly problems: string[];
  /** Requests to anywhere but the service (aborted). */
  readonly elsewhere: string[];
}

export async function watchedContext(
  browser: Browser,
  serviceUrl: string,
  viewport: { width: number; height: number },
  watch: Watch,
  options: { timeoutMs?: number; ignoreConsole?: RegExp; timezoneId?: string } = {},
): Promise<BrowserContext> {
  // timezoneId: the viewer's time zone (the browser's own unless given).
  const context = await browser.newContext({ viewport, ...(options.timezoneId && { timezoneId: options.timezoneId }) });
  // A ceiling on each wait for the page (an element, a navigation): 60 s, for a loaded machine.
  context.setDefaultTimeout(options.timeoutMs ?? 60_000);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: serviceUrl });
  const origin = new URL(serviceUrl).origin;
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (/^(data|blob):/.test(url) || new URL(url).origin === origin) return route.continue();
    watch.elsewhere.push(url);
    return route.abort();
  });
  context.on("weberror", (e) => watch.problems.push(`page error: ${e.error().message}`));
  context.on("page", (page) =>
    page.on("console", (m) => {
      if (m.type() === "error" && !options.ignoreConsole?.test(m.text())) watch.problems.push(`console: ${m.text()}`);
    }),
  );
  return context;
}

/** axe's impact levels, least to most severe. */
const IMPACTS = ["minor", "moderate", "serious", "critical"] as const;

/**
 * The screen's axe violations (WCAG 2.1 A and AA) of `least` impact or worse (serious unless
 * given), once it has settled.
 */
export async function axeViolations(page: Page, least: (typeof IMPACTS)[number] = "serious"): Promise<string[]> {
  const counted = new Set<string>(IMPACTS.slice(IMPACTS.indexOf(least)));
  await page.waitForLoadState("networkidle").catch(() => {});
  // A dialog fading in has not its final colours yet: judge the screen once it has settled
  // (MUI's transitions take 225 ms and may start a frame after the click).
  await page.waitForTimeout(300);
  await page
    // A function, not a string: the pages' CSP forbids eval, which a string would need.
    .waitForFunction(
      () =>
        (globalThis as unknown as { document: { getAnimations(): { playState: string }[] } }).document
          .getAnimations()
          .every((a) => a.playState !== "running"),
      undefined,
      { timeout: 5000 },
    )
    .catch(() => {});
  const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return result.violations
    .filter((v) => counted.has(v.impact ?? ""))
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => `${n.target.join(" ")} ${n.html.slice(0, 160)}`)
          .slice(0, 3)
          .join(" | ")}`,
    );
}
