/**
 * A provider's portal with something to read, for the browser checks of the portal's screens
 * (test/portal-screens.browser.test.ts, test/labels.test.ts): intake rules with a day cap, leads
 * of two sub-sources (one a flagged duplicate), a lead refused by a named rule, another provider's
 * lead with the same phone, and a signed-in person; plus the scan for raw API names on a page.
 */
import { readFileSync } from "node:fs";
import type { Page } from "playwright-core";
import YAML from "yaml";
import { INTAKE_RULES_TABLE } from "../../src/intake/rule-table.ts";
import { type Json, leadBody, type TestApp } from "./app.ts";

export const PASSWORD = "copper violet tundra 87 quay";

export interface Seeded {
  readonly email: string;
  /** The external ids of the leads with phone 310-555-0101 (a search for "555-0101"). */
  readonly phoneMatches: readonly string[];
  readonly refusedRequestId: string;
  readonly fbSpringLeadId: string;
}

const create = (t: TestApp, key: string, body: Json) => t.call("POST", "/api/v1/public/leads/", { auth: key, body });

export async function seedPortal(t: TestApp, tag: string): Promise<Seeded> {
  const admin = await t.token();
  const mine = await t.provider(`Harbor Leads ${tag}`);
  const theirs = await t.provider(`Other Leads ${tag}`);
  const rules = await t.call("PUT", `/api/v1/lead_providers/${mine.id}/intake_rules/`, {
    auth: admin,
    body: { origin_states: ["CA", "NY"], max_vehicles: 3, caps: { day: 100 } },
  });
  if (rules.status !== 200) throw new Error(`intake rules: ${rules.status} ${await rules.text()}`);
  const mail = (n: string) => `${n}.${tag}@harbor-mail.example`;
  const l1 = leadBody({ sub_id: "fb-spring", phone_number: "+1 (310) 555-0101", email: mail("one") });
  const l2 = leadBody({ sub_id: "fb-spring", phone_number: "+1 (310) 555-0102", email: mail("two") });
  // L1's phone again: accepted, flagged as a duplicate, not billed.
  const l3 = leadBody({ sub_id: "fb-spring", phone_number: "310.555.0101", email: mail("three") });
  const l4 = leadBody({ sub_id: "google", phone_number: "+1 (415) 555-0175", email: mail("four") });
  for (const body of [l1, l2, l3, l4]) {
    const res = await create(t, mine.key, body);
    if (res.status !== 201) throw new Error(`lead: ${res.status} ${await res.text()}`);
  }
  // Origin 73301 is in Texas: outside the accepted origin states.
  const refused = await create(t, mine.key, leadBody({ origin_zip: "73301", email: mail("five") }));
  if (refused.status !== 400) throw new Error(`refusal: ${refused.status}`);
  // Another provider's lead with the same phone: never in this provider's search.
  await create(t, theirs.key, leadBody({ phone_number: "+1 (310) 555-0101", email: mail("other") }));
  await t.app.requestLog?.flush();

  const email = `dana.${tag}@harbor-leads.example`;
  const invited = await t.call("POST", `/api/v1/lead_providers/${mine.id}/portal_users/`, {
    auth: admin,
    body: { email, name: "Dana Ruiz" },
  });
  const token = String(((await invited.json()) as Json).invite_url).split("#invite=")[1];
  const accepted = await t.call("POST", "/api/v1/portal/invite/accept/", {
    body: { token, password: PASSWORD },
    headers: { origin: t.url },
  });
  if (accepted.status !== 200) throw new Error(`accept: ${accepted.status} ${await accepted.text()}`);
  return {
    email,
    phoneMatches: [String(l1.external_id), String(l3.external_id)],
    refusedRequestId: String(refused.headers.get("x-request-id")),
    fbSpringLeadId: String(l1.external_id),
  };
}

export async function signIn(page: Page, url: string, email: string): Promise<void> {
  await page.goto(`${url}/portal/`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "This week" }).waitFor();
}

/** The field names of the openapi schemas the portal's screens display (snake_case ones). */
export const DISPLAYED_SCHEMAS = ["Lead", "PublishedIntakeRules", "RequestLogEntry", "Stats", "Problem"] as const;

export function displayedFieldNames(): string[] {
  const doc = YAML.parse(readFileSync(new URL("../../openapi/openapi.yaml", import.meta.url), "utf8"));
  const schemas = doc.components.schemas as Record<string, Json>;
  const out = new Set<string>();
  const seen = new Set<string>();
  const walk = (s: Json | undefined): void => {
    if (!s || typeof s !== "object") return;
    if (typeof s.$ref === "string") {
      const name = s.$ref.split("/").pop() as string;
      if (seen.has(name)) return;
      seen.add(name);
      walk(schemas[name]);
      return;
    }
    for (const k of ["allOf", "oneOf", "anyOf"]) for (const x of s[k] ?? []) walk(x);
    walk(s.items);
    if (typeof s.additionalProperties === "object") walk(s.additionalProperties);
    for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      out.add(k);
      walk(v);
    }
  };
  for (const name of DISPLAYED_SCHEMAS) walk({ $ref: `#/components/schemas/${name}` });
  return [...out].sort();
}

/**
 * The raw API names (snake_case field names of the displayed schemas, rule and problem codes) in
 * what the page shows as words: its text without code, pre (the request body as received) and
 * form values.
 */
export async function rawApiNames(page: Page, names: readonly string[]): Promise<string[]> {
  const text = await page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { body: { cloneNode(deep: boolean): unknown } } }).document;
    const body = doc.body.cloneNode(true) as {
      querySelectorAll(s: string): Iterable<{ remove(): void }>;
      innerText?: string;
      textContent: string;
    };
    for (const el of body.querySelectorAll("pre, code, script, style, input, textarea")) el.remove();
    return body.textContent;
  });
  const snake = names.filter((n) => n.includes("_"));
  return snake.filter((n) => new RegExp(`(^|[^A-Za-z0-9_])${n}($|[^A-Za-z0-9_])`).test(text));
}

/** Every API name a screen must say in words: the displayed fields, the rule codes, the problem codes. */
export function apiNames(): string[] {
  const problems = ["outside_criteria", "validation_error", "duplicate_lead", "duplicate_external_id", "cap_reached"];
  return [...new Set([...displayedFieldNames(), ...INTAKE_RULES_TABLE.map((r) => r.code), ...problems])];
}
