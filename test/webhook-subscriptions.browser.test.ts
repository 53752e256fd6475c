/**
 * Choosing a webhook's events in a browser (Debian's chromium, playwright-core): a provider's
 * person in the portal subscribes to one event type, sees a waiting delivery's next attempt and
 * the body it will send (opened from the keyboard), and is asked before clearing the URL; an
 * administrator chooses a provider's event types in the console. axe-core: any moderate, serious
 * or critical violation fails, at 1280 and 390 px, and no screen scrolls sideways.
 */
import { existsSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeadState } from "../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadWorkflowService } from "../generated/proto/leadprovider/v1/lead_workflow_service_pb.ts";
import { EVENT_TYPE_DESCRIPTIONS } from "../src/events/event-types.ts";
import { type Json, leadBody, startTestApp, type TestApp } from "./helpers/app.ts";
import { watchedContext } from "./helpers/browser.ts";
import { bearer, connectClient } from "./helpers/grpc.ts";
import { type Receiver, startReceiver } from "./helpers/receiver.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "copper violet tundra 87 quay";
const PROVIDERS = "/api/v1/lead_providers/";

describe.skipIf(!HAVE_CHROMIUM)("webhook event subscriptions in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let receiver: Receiver;
  let admin: string;
  const problems: string[] = [];
  const elsewhere: string[] = [];

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    watchedContext(
      browser,
      t.url,
      size,
      { problems, elsewhere }, // A request cut off when a context closes mid-load is not a fault of the page.
      { ignoreConsole: /status of (400|401)|ERR_CONNECTION_RESET/ },
    );

  /** No moderate, serious or critical axe violation, and no sideways scrolling. */
  async function check(page: Page, screen: string): Promise<void> {
    await page.waitForLoadState("networkidle").catch(() => {});
    await page.waitForTimeout(400); // MUI's transitions settle
    const result = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const bad = result.violations
      .filter((v) => v.impact === "moderate" || v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`);
    const width = page.viewportSize()?.width ?? 0;
    expect(bad, `${screen} at ${width} px`).toEqual([]);
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
  }

  /** Ticks only `keep` in the checklist (after choosing "only the events ticked"). */
  async function chooseOnly(scope: Page, keep: string) {
    await scope.getByRole("radio", { name: "Only the events ticked below" }).check();
    await scope.getByRole("checkbox", { name: keep }).waitFor();
    for (const description of Object.values(EVENT_TYPE_DESCRIPTIONS)) {
      if (description !== keep) await scope.getByRole("checkbox", { name: description }).uncheck();
    }
  }

  const provider = async (id: number) =>
    (await (await t.call("GET", `${PROVIDERS}${id}/`, { auth: admin })).json()) as Json;

  beforeAll(async () => {
    // The first attempt fails and the next one waits 10 minutes: the delivery stays pending.
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000", WEBHOOK_RETRY_SCHEDULE: "600,600" });
    admin = await t.token();
    receiver = await startReceiver();
    receiver.answer = () => 500;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await t?.stop();
  });

  it("a provider subscribes to one event type, sees a delivery's next attempt and body, and confirms clearing the URL", async () => {
    const mine = await t.provider(undefined, { webhook_url: receiver.url });
    const email = `dana.${Date.now()}@harbor-leads.example`;
    const invite = (await (
      await t.call("POST", `${PROVIDERS}${mine.id}/portal_users/`, { auth: admin, body: { email, name: "Dana Ruiz" } })
    ).json()) as Json;
    const token = String(invite.invite_url).split("#invite=")[1] ?? "";
    const accepted = await t.call("POST", "/api/v1/portal/invite/accept/", {
      body: { token, password: PASSWORD },
      headers: { origin: t.url },
    });
    expect(accepted.status).toBe(200);

    for (const size of [DESKTOP, PHONE]) {
      const context = await newContext(size);
      const page = await context.newPage();
      await page.goto(`${t.url}/portal/`);
      await page.getByLabel("Email").fill(email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "This week" }).waitFor();
      await page.goto(`${t.url}/portal/webhooks`);
      await page.getByRole("radio", { name: "Every event, including kinds added later" }).waitFor();
      await check(page, "portal webhooks");
      if (size === PHONE) {
        await context.close();
        continue;
      }

      await chooseOnly(page, EVENT_TYPE_DESCRIPTIONS["lead.quoted"]);
      await check(page, "portal webhooks, choosing events");
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await page.getByText("Events sent: a lead was quoted.").waitFor();
      expect((await provider(mine.id)).webhook_event_types).toEqual(["lead.quoted"]);

      // A lead is created (not sent) and quoted (sent, refused with a 500: waits for its retry).
      const lead = (await (
        await t.call("POST", "/api/v1/public/leads/", { auth: mine.key, body: leadBody() })
      ).json()) as Json;
      await connectClient(LeadWorkflowService, t.port, "grpc").transitionLead(
        { leadId: BigInt(lead.id), toState: LeadState.QUOTE },
        bearer(admin),
      );
      await receiver.waitFor((r) => r.length >= 1, 30_000, "the quoted event's first attempt");
      await page.reload();
      await page.getByRole("cell", { name: "lead.quoted" }).waitFor();
      expect(await page.getByRole("cell", { name: "lead.quoted" }).count()).toBe(1);
      expect(await page.getByRole("cell", { name: "lead.created" }).count()).toBe(0);
      const header = await page.getByRole("columnheader", { name: /^Next attempt \(/ }).textContent();
      expect(header).toMatch(/^Next attempt \(your time, [A-Za-z][A-Za-z0-9_/+-]+\)$/);

      // Opened from the keyboard: the next attempt with its zone, and the body to be sent.
      const details = page.getByRole("button", { name: /^Details of delivery / });
      await expect.poll(() => page.getByRole("row").filter({ hasText: "pending" }).count()).toBe(1);
      await details.focus();
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog");
      await dialog.getByTestId("next-attempt").waitFor();
      expect(await dialog.getByTestId("next-attempt").textContent()).toMatch(
        /^Next attempt: .+ (UTC|GMT[+-]?\d*|[A-Z]{2,5})$/,
      );
      const body = JSON.parse(String(await dialog.getByTestId("delivery-payload").textContent())) as Json;
      expect(body).toMatchObject({ type: "lead.quoted", livemode: true, data: { lead: { id: lead.id } } });
      // The body shown is the one the receiver got.
      expect(JSON.parse(receiver.received[0]?.body ?? "{}")).toEqual(body);
      await check(page, "portal delivery details");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "hidden" });

      // Clearing the URL asks first, saying that nothing more is sent.
      await page.getByLabel("Webhook URL").fill("");
      await page.getByRole("button", { name: "Save", exact: true }).click();
      const confirm = page.getByRole("dialog", { name: "Clear the webhook URL?" });
      await confirm.getByText("no events are sent to you at all").waitFor();
      await check(page, "portal clear URL confirmation");
      await confirm.getByRole("button", { name: "Cancel" }).click();
      expect((await provider(mine.id)).webhook_url).toBe(receiver.url);
      await page.getByRole("button", { name: "Save", exact: true }).click();
      await confirm.getByRole("button", { name: "Clear URL" }).click();
      await page.getByText("The webhook URL is cleared: no events are sent.").waitFor();
      expect((await provider(mine.id)).webhook_url).toBeNull();
      await context.close();
    }
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("an administrator chooses a provider's event types in the console", async () => {
    const theirs = await t.provider(undefined, { webhook_url: receiver.url });
    const untouched = await t.provider(undefined, { webhook_url: receiver.url });
    for (const size of [DESKTOP, PHONE]) {
      const context = await newContext(size);
      const page = await context.newPage();
      await page.goto(`${t.url}/admin/`);
      await page.getByRole("button", { name: "Use the development token" }).click();
      await page.getByRole("heading", { name: "All providers, last 30 days" }).waitFor();
      await page.goto(`${t.url}/admin/providers/${theirs.id}/show/webhooks`);
      await page.getByTestId("webhook-events").waitFor();
      if (size === DESKTOP) {
        expect(await page.getByTestId("webhook-events").textContent()).toBe(
          "Events sent: every event, including kinds added later.",
        );
      }
      await page.getByRole("button", { name: "Choose events" }).click();
      const dialog = page.getByRole("dialog", { name: "Events sent to the webhook" });
      await dialog.getByRole("radio", { name: "Every event, including kinds added later" }).waitFor();
      await check(page, "console choose events");
      if (size === PHONE) {
        await context.close();
        continue;
      }
      await chooseOnly(page, EVENT_TYPE_DESCRIPTIONS["lead.ordered"]);
      await dialog.getByRole("button", { name: "Save events" }).click();
      await dialog.waitFor({ state: "hidden" });
      await expect
        .poll(() => page.getByTestId("webhook-events").textContent())
        .toBe("Events sent: a lead became an order.");
      expect((await provider(theirs.id)).webhook_event_types).toEqual(["lead.ordered"]);
      expect((await provider(untouched.id)).webhook_event_types).toBeNull();
      await context.close();
    }
    expect(problems).toEqual([]);
  }, 300_000);
});
