// Offline, against the contract's examples: run `make mock` in the API's repository (Prism on
// http://127.0.0.1:4010), then `node mock.mjs` where @lead-provider/sdk is installed. The mock
// accepts any key and answers each call with the contract's documented example.
import { LeadProvider, ValidationError } from "@lead-provider/sdk";

const client = new LeadProvider({
  apiKey: "lp_test_mock",
  baseUrl: process.env.LEAD_PROVIDER_BASE_URL ?? "http://127.0.0.1:4010",
});

const lead = await client.leads.create({
  external_id: "crm-48213",
  first_name: "Maria",
  last_name: "Gonzalez",
  email: "maria@example.com",
  phone_number: "+1 (310) 555-0142",
  origin_zip: "90210",
  estimated_ship_date: "2027-03-15",
  overseas_type: "DOMESTIC",
  ship_via: "ENCLOSED",
  vehicles: [{ year: 2022, make: "Porsche", model: "911", type: "CAR", tariff: 1450, deposit: 200 }],
});
console.log("created", lead.order_number, lead.state);

for await (const listed of client.leads.listAll({ state: "LEAD" })) console.log("listed", listed.external_id);

try {
  await client.leads.create({ external_id: "incomplete" });
} catch (err) {
  if (!(err instanceof ValidationError)) throw err;
  console.log("refused", err.code, err.errors.map((e) => e.field).join(","));
}
