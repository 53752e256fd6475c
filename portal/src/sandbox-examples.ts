/**
 * The Sandbox page's examples with the user's test key: a curl and the TypeScript SDK, each
 * creating a test lead the sandbox moves to QUOTE a couple of seconds later. Plain text, so that
 * they can be run as they stand (test/portal.console.test.ts runs the curl,
 * test/sdk-typescript-package.test.ts the SDK snippet against the packed SDK).
 */

/** A valid test lead with a fresh external_id (`prefix-<now>`) and a ship date two weeks ahead. */
export function sandboxLead(prefix: string): Record<string, unknown> {
  const shipDate = new Date(Date.now() + 14 * 86_400_000).toISOString().slice(0, 10);
  return {
    external_id: `${prefix}-${Date.now()}`,
    first_name: "Test",
    last_name: "Customer",
    email: "test.customer@example.com",
    phone_number: "+1 (310) 555-0142",
    origin_zip: "90210",
    destination_zip: "10001",
    estimated_ship_date: shipDate,
    ship_via: "OPEN",
    overseas_type: "DOMESTIC",
    note_from_shipper: "sandbox:quote",
    vehicles: [
      { year: 2021, make: "Toyota", model: "Camry", type: "CAR", tariff: 950, deposit: 150, vehicle_run: true },
    ],
  };
}

/** A curl that creates a test lead. */
export function curlFor(key: string, origin: string): string {
  return [
    `curl -sS -X POST ${origin}/api/v1/public/leads/ \\`,
    `  -H 'Authorization: Bearer ${key}' \\`,
    "  -H 'Content-Type: application/json' \\",
    `  -d '${JSON.stringify(sandboxLead("sandbox"))}'`,
  ].join("\n");
}

/** The same with the TypeScript SDK (`npm install @lead-provider/sdk`), as an ES module. */
export function sdkSnippetFor(key: string, origin: string): string {
  const body = JSON.stringify(sandboxLead("sandbox-sdk"), null, 2).replace(/\n/g, "\n  ");
  return [
    'import { LeadProvider } from "@lead-provider/sdk";',
    "",
    `const client = new LeadProvider({ apiKey: "${key}", baseUrl: "${origin}" });`,
    `const lead = await client.leads.create(${body});`,
    "console.log(JSON.stringify({ order_number: lead.order_number, state: lead.state, livemode: lead.livemode }));",
  ].join("\n");
}
