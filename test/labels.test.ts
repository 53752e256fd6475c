/**
 * The one table of words for API names (ui/src/labels.ts), shared by both apps: every field of the
 * openapi schemas the screens display has words there, every rule of the rule table has a title,
 * the helpers turn problem messages into sentences without raw names, and — in chromium, over the
 * portal's screens with a refusal, sub-sources and caps to show — no rendered message says a raw
 * snake_case API field name.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTAKE_RULES_TABLE } from "../src/intake/rule-table.ts";
import {
  CODE_LABELS,
  duplicateLabel,
  FIELD_LABELS,
  fieldLabel,
  namesInWords,
  RULE_LABELS,
  violationSentence,
  words,
} from "../ui/src/labels.ts";
import { startTestApp, type TestApp } from "./helpers/app.ts";
import {
  apiNames,
  DISPLAYED_SCHEMAS,
  displayedFieldNames,
  rawApiNames,
  type Seeded,
  seedPortal,
  signIn,
} from "./helpers/portal-screens.ts";

describe("the table of field labels", () => {
  it(`has words for every field of ${DISPLAYED_SCHEMAS.join(", ")}`, () => {
    const fields = displayedFieldNames();
    expect(fields.length).toBeGreaterThan(100);
    expect(fields.filter((f) => FIELD_LABELS[f] === undefined)).toEqual([]);
  });

  it("has a title for every rule of the rule table, and words for the problem codes", () => {
    for (const row of INTAKE_RULES_TABLE) {
      expect(row.title, row.code).toMatch(/^[A-Z][a-z]/);
      expect(RULE_LABELS[row.code]).toBe(row.title);
    }
    for (const code of ["outside_criteria", "validation_error", "duplicate_lead", "cap_reached", "intake_closed"]) {
      expect(CODE_LABELS[code], code).toMatch(/^[A-Z]/);
    }
  });

  it("turns API names inside messages into words", () => {
    expect(words("must be one of origin_states")).toBe("Must be one of Accepted origin states");
    expect(namesInWords("must be one of origin_states")).toBe("must be one of Accepted origin states");
    expect(fieldLabel("caps.day")).toBe("Day cap");
    expect(words("the caps.day of leads is reached")).toBe("The Day cap of leads is reached");
    expect(words("vehicles[1].type SUV is not accepted; accepted: CAR")).toBe(
      "Vehicle 2 type SUV is not accepted; accepted: CAR",
    );
    expect(duplicateLabel(["phone_number", "email"])).toBe("Duplicate (same phone number and email)");
    expect(
      violationSentence({
        field: "origin_zip",
        code: "origin_state_not_accepted",
        message: "origin state TX is not accepted; accepted: CA, NY",
      }),
    ).toBe("Origin state TX is not accepted; accepted: CA, NY. (Rule: Accepted origin states.)");
    expect(
      violationSentence({
        field: "phone_number",
        code: "invalid_phone",
        message: "phone_number must be a valid number",
      }),
    ).toBe("Phone number must be a valid number. (Rule: Valid phone number.)");
    expect(
      violationSentence({ field: "sub_id", code: "invalid_format", message: "sub_id must be 1 to 64 of A-Z" }),
    ).toBe("Sub-source must be 1 to 64 of A-Z.");
  });

  it("leaves no raw field name in any rule's message or description once in words", () => {
    const names = displayedFieldNames().filter((n) => n.includes("_"));
    for (const row of INTAKE_RULES_TABLE) {
      const said = words(row.description);
      expect(
        names.filter((n) => new RegExp(`\\b${n}\\b`).test(said)),
        `${row.code}: ${said}`,
      ).toEqual([]);
    }
  });
});

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

describe.skipIf(!existsSync(CHROMIUM))("the portal's screens say no raw API name", () => {
  let t: TestApp;
  let browser: Browser;
  let seeded: Seeded;

  beforeAll(async () => {
    t = await startTestApp({ name: "pglite" }, { RATE_LIMIT_PER_MINUTE: "1000" });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
    });
    seeded = await seedPortal(t, `labels${Date.now()}`);
  }, 270_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it("on Home, Statistics, Leads, a lead, Requests, a refused request and the Rules", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, t.url, seeded.email);
    const names = apiNames();
    const screens: Array<[string, string]> = [
      ["", "Accepted"],
      ["statistics", "Total"],
      ["leads", "fb-spring"],
      [`leads/${encodeURIComponent(seeded.fbSpringLeadId)}/show`, "fb-spring"],
      ["requests", "(Rule: Accepted origin states.)"],
      [`requests/${encodeURIComponent(seeded.refusedRequestId)}/show`, "(Rule: Accepted origin states.)"],
      ["rules", "Day cap"],
    ];
    for (const [path, ready] of screens) {
      await page.goto(`${t.url}/portal/${path}`);
      await page.getByText(ready).first().waitFor();
      await page.waitForLoadState("networkidle").catch(() => {});
      expect(await rawApiNames(page, names), `/portal/${path}`).toEqual([]);
    }
    // The check itself: a page that says a raw name is caught.
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { body: { append(s: string): void } } }).document;
      doc.body.append("must be one of origin_states");
    });
    expect(await rawApiNames(page, names)).toEqual(["origin_states"]);
    await page.close();
  }, 300_000);
});
