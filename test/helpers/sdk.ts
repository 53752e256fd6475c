/**
 * What the SDK tests share: providers with intake rules, the error a call throws, the leads stored
 * under an external_id (straight from the database), and the operations the SDK called.
 */
import { sql } from "kysely";
import { expect } from "vitest";
import { OPERATIONS, type OperationRow } from "../../sdks/typescript/src/index.ts";
import type { Json, TestApp } from "./app.ts";

export const PROVIDERS = "/api/v1/lead_providers/";

/** A provider with a live key, its intake rules set when given; `fields` go to the create. */
export async function ruledProvider(t: TestApp, fields: Json = {}, rules?: Json) {
  const p = await t.provider(undefined, fields);
  if (rules) {
    const res = await t.call("PUT", `${PROVIDERS}${p.id}/intake_rules/`, { auth: await t.token(), body: rules });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  return p;
}

/** The provider's test key (issued now). */
export async function testKeyOf(t: TestApp, providerId: number): Promise<string> {
  const res = await t.call("POST", `${PROVIDERS}${providerId}/generate_api_key/`, {
    auth: await t.token(),
    body: { mode: "test" },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as Json).api_key as string;
}

/** The error a call rejects with; fails when it succeeds. */
export async function refusal<E = Error>(call: Promise<unknown>): Promise<E> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  return outcome.error as E;
}

/** How many leads the database holds with this external_id (any provider, any mode). */
export async function storedWith(t: TestApp, externalId: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from leads where external_id = ${externalId}`.execute(t.app.database.db);
  return Number(rows[0]?.n);
}

/** The operations of the SDK's table none of the requests (`METHOD /path`) called. */
export function operationsNotCalled(
  sent: readonly string[],
  table: Readonly<Record<string, OperationRow>> = OPERATIONS,
) {
  const route = (http: string) => {
    const [method, path] = http.split(" ") as [string, string];
    return new RegExp(`^${method} ${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
  };
  return Object.entries(table)
    .filter(([, row]) => !sent.some((s) => route(row.http).test(s)))
    .map(([id]) => id);
}
