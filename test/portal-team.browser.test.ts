/**
 * The portal's Team page and password reset in Debian's chromium (playwright-core), with a real SMTP
 * server receiving the service's mail: a provider's portal admin invites a teammate, who opens the
 * e-mailed link, chooses a password and signs in; the admin makes them an administrator (after a
 * confirmation), and they then have Team; the admin disables them (after a confirmation)
 * and they can no longer sign in; a password reset by e-mail works once, and the same link is then
 * refused in words. axe-core (moderate, serious and critical violations fail) checks every screen
 * at 1280 or 390 px, neither of which may scroll sideways.
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startTestApp, type TestApp } from "./helpers/app.ts";
import { axeViolations, watchedContext } from "./helpers/browser.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM) console.log(`portal-team.browser.test: SKIPPING the browser checks: no chromium at ${CHROMIUM}`);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const ADMIN_PASSWORD = "copper violet tundra 87 quay";
const TEAMMATE_PASSWORD = "lantern orbit meadow 19 pebble";
const RESET_PASSWORD = "walnut glacier ember 52 sparrow";

describe.skipIf(!HAVE_CHROMIUM)("the portal's team and password reset in a browser", () => {
  let t: TestApp;
  let browser: Browser;
  let smtp: SMTPServer;
  const mails: { to: string; text: string }[] = [];
  const problems: string[] = [];
  const elsewhere: string[] = [];
  const adminEmail = `robin.${Date.now()}@harbor-freight.example`;
  const teammateEmail = `sam.${Date.now()}@harbor-freight.example`;

  const newContext = (size = DESKTOP): Promise<BrowserContext> =>
    watchedContext(
      browser,
      t.url,
      size,
      { problems, elsewhere },
      // A refused sign-in or a used link is an answer the page shows, not a fault.
      { ignoreConsole: /status of (400|401|404)/ },
    );

  /** axe-core on the current screen (no moderate, serious or critical violation), and no sideways scrolling. */
  async function check(page: Page, screen: string): Promise<void> {
    const bad = await axeViolations(page, "moderate");
    const width = page.viewportSize()?.width ?? 0;
    expect(bad, `${screen} at ${width} px: accessibility\n${bad.join("\n")}`).toEqual([]);
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    expect(scrollWidth, `${screen} at ${width} px scrolls sideways`).toBeLessThanOrEqual(width);
  }

  /** The link of kind `invite` or `reset` in the newest such mail to `to`, once it has arrived. */
  async function linkFromMail(to: string, kind: "invite" | "reset", count = 1): Promise<string> {
    const pattern = new RegExp(`(http://\\S+/portal/#${kind}=[A-Za-z0-9_-]{43})`);
    let link: string | undefined;
    await expect
      .poll(() => {
        const found = mails.filter((m) => m.to === to && pattern.test(m.text));
        link = found.length >= count ? pattern.exec(found.at(-1)?.text ?? "")?.[1] : undefined;
        return link;
      })
      .toBeDefined();
    return link as string;
  }

  async function signIn(page: Page, email: string, password: string) {
    await page.goto(`${t.url}/portal/`);
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  beforeAll(async () => {
    // A real SMTP server on port 0 receives what nodemailer sends.
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          // Quoted-printable may wrap a long link: keep the text unwrapped.
          const text = Buffer.concat(chunks)
            .toString()
            .replace(/=\r?\n/g, "")
            .replace(/=3D/g, "=");
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(","), text });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await startTestApp(
      { name: "pglite" },
      {
        RATE_LIMIT_PER_MINUTE: "1000",
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        SMTP_FROM: "Portal <portal@broker.example>",
      },
    );
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    // The broker's administrators invite the provider's first person, who becomes its portal admin.
    const provider = await t.provider("Harbor Freight");
    const res = await t.call("POST", `/api/v1/lead_providers/${provider.id}/portal_users/`, {
      auth: await t.token(),
      body: { email: adminEmail, name: "Robin Admin" },
    });
    const invited = (await res.json()) as Json;
    expect(invited.user.role).toBe("admin");
    const accepted = await t.call("POST", "/api/v1/portal/invite/accept/", {
      body: { token: String(invited.invite_url).split("#invite=")[1], password: ADMIN_PASSWORD },
      headers: { origin: t.url },
    });
    expect(accepted.status).toBe(200);
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  it("an admin invites a teammate by e-mail, who signs in; disabled, they cannot sign in again", async () => {
    const adminContext = await newContext();
    const admin = await adminContext.newPage();
    await signIn(admin, adminEmail, ADMIN_PASSWORD);
    await admin.getByRole("heading", { name: "This week" }).waitFor();
    await admin.getByRole("menuitem", { name: "Team" }).click();
    await admin.getByRole("heading", { name: "Team", level: 1 }).waitFor();
    await admin.getByRole("cell", { name: `Robin Admin (${adminEmail})` }).waitFor();
    await check(admin, "team");

    await admin.getByLabel("Email").fill(teammateEmail);
    await admin.getByLabel("Name").fill("Sam Lee");
    await admin.getByRole("button", { name: "Invite" }).click();
    await admin.getByText(`An invite was e-mailed to ${teammateEmail}.`).waitFor();
    await admin.getByRole("cell", { name: `Sam Lee (${teammateEmail})` }).waitFor();
    await check(admin, "team-invited");

    // Sam opens the e-mailed link on a phone, chooses a password and signs in.
    const link = await linkFromMail(teammateEmail, "invite");
    const samContext = await newContext(PHONE);
    const sam = await samContext.newPage();
    await sam.goto(link);
    await sam.getByRole("heading", { name: "Choose your password" }).waitFor();
    expect(sam.url()).toBe(`${t.url}/portal/invite`);
    await sam.getByText("you are invited to the portal of").waitFor();
    await check(sam, "invite");
    await sam.getByLabel("New password").fill(TEAMMATE_PASSWORD);
    await sam.getByLabel("Repeat the password").fill(TEAMMATE_PASSWORD);
    await sam.getByRole("button", { name: "Set password" }).click();
    await sam.getByText("Your password is set.").waitFor();
    await sam.getByRole("button", { name: "Go to sign-in" }).click();
    await sam.getByLabel("Email").fill(teammateEmail);
    await sam.getByLabel("Password").fill(TEAMMATE_PASSWORD);
    await sam.getByRole("button", { name: "Sign in" }).click();
    await sam.getByRole("heading", { name: "This week" }).waitFor();
    // A member is not shown the Team page (the menu at full width has no Team), and the page itself says why.
    await sam.setViewportSize(DESKTOP);
    await sam.getByRole("menuitem", { name: "Account" }).waitFor();
    expect(await sam.getByRole("menuitem", { name: "Team" }).count()).toBe(0);
    await sam.setViewportSize(PHONE);
    await sam.goto(`${t.url}/portal/team`);
    await sam.getByText("Only your provider's portal administrators can manage its team.").waitFor();
    await check(sam, "team-member");

    // The admin makes Sam an administrator, after a confirmation; Sam then has Team.
    await admin.reload();
    await admin.getByRole("row", { name: /Sam Lee.*Member/ }).waitFor();
    await admin.getByRole("button", { name: "Make administrator: Sam Lee" }).click();
    const promote = admin.getByRole("dialog", { name: "Make this person an administrator?" });
    await promote.getByText("will also be able to invite, disable and re-invite people").waitFor();
    await check(admin, "team-role-dialog");
    await promote.getByRole("button", { name: "Make administrator" }).click();
    await admin.getByText("Sam Lee is now an administrator.").waitFor();
    await admin.getByRole("row", { name: /Sam Lee.*Administrator/ }).waitFor();
    await check(admin, "team-promoted");
    await sam.setViewportSize(DESKTOP);
    await sam.goto(`${t.url}/portal/`);
    await sam.getByRole("heading", { name: "This week" }).waitFor();
    await sam.getByRole("menuitem", { name: "Team" }).click();
    await sam.getByRole("heading", { name: "Team", level: 1 }).waitFor();
    await sam.getByRole("cell", { name: `Robin Admin (${adminEmail})` }).waitFor();
    await check(sam, "team-as-promoted");
    await sam.setViewportSize(PHONE);

    // The admin disables Sam, after a confirmation that says what happens.
    await admin.getByRole("cell", { name: `Sam Lee (${teammateEmail})` }).waitFor();
    await admin.getByRole("button", { name: "Disable Sam Lee" }).click();
    const dialog = admin.getByRole("dialog", { name: "Disable this person?" });
    await dialog.getByText("can no longer sign in").waitFor();
    await check(admin, "team-disable-dialog");
    await dialog.getByRole("button", { name: "Disable" }).click();
    await admin.getByText("Sam Lee is disabled: they can no longer sign in.").waitFor();
    await admin.getByRole("row", { name: /Sam Lee.*Disabled/ }).waitFor();
    await check(admin, "team-disabled");

    // Sam's open session has ended, and signing in again is refused.
    await sam.goto(`${t.url}/portal/`);
    await sam.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await sam.getByLabel("Email").fill(teammateEmail);
    await sam.getByLabel("Password").fill(TEAMMATE_PASSWORD);
    await sam.getByRole("button", { name: "Sign in" }).click();
    await sam.getByRole("alert").getByText("email or password is incorrect").waitFor();
    await check(sam, "sign-in-refused");

    // The Team page on a phone too.
    const phoneContext = await newContext(PHONE);
    const phone = await phoneContext.newPage();
    await signIn(phone, adminEmail, ADMIN_PASSWORD);
    await phone.getByRole("heading", { name: "This week" }).waitFor();
    await phone.goto(`${t.url}/portal/team`);
    await phone.getByRole("cell", { name: `Sam Lee (${teammateEmail})` }).waitFor();
    await check(phone, "team");
    await Promise.all([adminContext.close(), samContext.close(), phoneContext.close()]);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);

  it("resets a forgotten password by e-mail once; the same link is then refused in words", async () => {
    const context = await newContext(PHONE);
    const page = await context.newPage();
    await page.goto(`${t.url}/portal/`);
    await page.getByRole("heading", { name: "Lead Provider portal" }).waitFor();
    await page.getByRole("link", { name: "Forgot password?" }).click();
    await page.getByRole("heading", { name: "Forgot your password?" }).waitFor();
    await check(page, "forgot-password");
    await page.getByLabel("Email").fill(adminEmail);
    await page.getByRole("button", { name: "Send me a link" }).click();
    await page
      .getByText("If an active account has this email, a link to choose a new password is on its way")
      .waitFor();
    await check(page, "forgot-password-sent");

    const link = await linkFromMail(adminEmail, "reset");
    const first = await context.newPage();
    await first.goto(link);
    await first.getByRole("heading", { name: "Choose a new password" }).waitFor();
    expect(first.url()).toBe(`${t.url}/portal/reset`);
    await check(first, "reset-password");
    // The password rule in words: the provider's name is refused.
    await first.getByLabel("New password").fill("HarborFreight violet 2026");
    await first.getByLabel("Repeat the password").fill("HarborFreight violet 2026");
    await first.getByRole("button", { name: "Set new password" }).click();
    await first
      .getByRole("alert")
      .getByText("password must not contain your email address, your name or your provider's name")
      .waitFor();
    await first.getByLabel("New password").fill(RESET_PASSWORD);
    await first.getByLabel("Repeat the password").fill(RESET_PASSWORD);
    await first.getByRole("button", { name: "Set new password" }).click();
    await first.getByText("Your new password is set.").waitFor();
    await first.getByRole("button", { name: "Go to sign-in" }).click();
    await first.getByLabel("Email").fill(adminEmail);
    await first.getByLabel("Password").fill(RESET_PASSWORD);
    await first.getByRole("button", { name: "Sign in" }).click();
    await first.getByRole("heading", { name: "This week" }).waitFor();

    // The same link, opened again, is refused with a clear message.
    const again = await (await newContext(PHONE)).newPage();
    await again.goto(link);
    await again.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await again.getByLabel("New password").fill("another fresh phrase 42 willow");
    await again.getByLabel("Repeat the password").fill("another fresh phrase 42 willow");
    await again.getByRole("button", { name: "Set new password" }).click();
    await again
      .getByRole("alert")
      .getByText("this password reset link has expired or was already used; ask for a new one on the sign-in page")
      .waitFor();
    await check(again, "reset-password-used");

    // The old password no longer signs in; the new one does (checked above).
    const res = await t.call("POST", "/api/v1/portal/sign_in/", {
      body: { email: adminEmail, password: ADMIN_PASSWORD },
      headers: { origin: t.url },
    });
    expect(res.status).toBe(401);
    await context.close();
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 300_000);
});
