/**
 * The back office's CSV export (admin/src/csv.ts) as a spreadsheet reads it: one row per lead,
 * the same columns in every row, no JSON in any cell, a lead's vehicles in words and in numbered
 * columns, and quotes, commas and line breaks kept inside their cell (read back with a parser of
 * this file's own, RFC 4180).
 */
import { describe, expect, it } from "vitest";
import { flatten, leadForCsv, toCsv } from "../../admin/src/csv.ts";

/** RFC 4180: rows of cells; a quoted cell may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  row.push(cell);
  rows.push(row);
  return rows;
}

/** A lead as GET /api/v1/admin/leads/ returns it (the members the export meets). */
function lead(over: Record<string, unknown>): Record<string, unknown> {
  return {
    id: 1,
    livemode: true,
    order_number: "LP-1001",
    state: "QUOTE",
    lead_status: "QUOTE",
    external_id: "crm-1",
    first_name: "Rosa",
    last_name: "Parks",
    company_name: null,
    consent: null,
    duplicate: null,
    price: { cents: 1500, currency: "USD" },
    return: null,
    origin: { zip: "90210", city: "Beverly Hills", state: "CA" },
    destination: null,
    vehicles: [
      {
        year: 2022,
        make: "Porsche",
        model: "911",
        type: "CAR",
        tariff: 1450,
        deposit: 200,
        vehicle_run: true,
        vin: null,
      },
      {
        year: 2019,
        make: "Ford",
        model: "F-150",
        type: "PICKUP",
        tariff: 900,
        deposit: 100,
        vehicle_run: null,
        vin: "1FTEW1EP5KFA12345",
      },
    ],
    history: [
      {
        from_state: null,
        to_state: "LEAD",
        lead_status: "LEAD",
        changed_at: "2026-11-03T14:25:07.412Z",
        actor: "provider:7",
      },
      {
        from_state: "LEAD",
        to_state: "QUOTE",
        lead_status: "QUOTE",
        changed_at: "2026-11-04T09:00:00.000Z",
        actor: "ops",
      },
    ],
    provider_id: 7,
    ...over,
  };
}

/** The CSV as header → cell objects, one a data row. */
function records(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ""])));
}

describe("the leads CSV export", () => {
  const twoVehicles = lead({});
  const oneVehicle = lead({
    id: 2,
    order_number: "LP-1002",
    company_name: 'Acme "Cars", Inc.\nWest',
    vehicles: [
      {
        year: 2021,
        make: "Toyota",
        model: "Camry",
        type: "CAR",
        tariff: 1150,
        deposit: 150,
        vehicle_run: true,
        vin: null,
      },
    ],
    duplicate: { matched_on: ["phone_number", "email"], original: { id: 1, order_number: "LP-1001", provider_id: 7 } },
    destination: { zip: "10001", city: "New York", state: "NY" },
  });
  const text = toCsv([oneVehicle, twoVehicles].map(leadForCsv));
  const rows = parseCsv(text);
  const [first, second] = records(text);

  it("writes one row per lead, every row as wide as the header", () => {
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row).toHaveLength(rows[0]?.length ?? -1);
  });

  it("puts no JSON and no [object Object] in any cell", () => {
    for (const row of rows) {
      for (const cell of row) {
        expect(cell, cell).not.toMatch(/^\s*[[{]/);
        expect(cell).not.toContain("[object Object]");
        expect(cell).not.toContain('":');
      }
    }
  });

  it("shows the vehicles as a count, in words and in numbered columns", () => {
    expect(second?.vehicle_count).toBe("2");
    expect(second?.vehicles).toBe("2022 Porsche 911 (CAR); 2019 Ford F-150 (PICKUP)");
    expect(second).toMatchObject({
      vehicle_1_year: "2022",
      vehicle_1_make: "Porsche",
      vehicle_1_tariff: "1450",
      vehicle_2_make: "Ford",
      vehicle_2_model: "F-150",
      vehicle_2_vin: "1FTEW1EP5KFA12345",
    });
    // The lead with one vehicle has the second vehicle's columns, empty.
    expect(first?.vehicle_count).toBe("1");
    expect(first?.vehicles).toBe("2021 Toyota Camry (CAR)");
    expect(first?.vehicle_2_make).toBe("");
    // The second vehicle's columns follow the first's.
    const header = rows[0] ?? [];
    expect(header.indexOf("vehicle_2_year")).toBe(header.indexOf("vehicle_1_vin") + 1);
  });

  it("names every column in the API's snake_case, nested members joined with _", () => {
    for (const column of rows[0] ?? []) expect(column).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
    expect(first).toMatchObject({
      origin_zip: "90210",
      origin_state: "CA",
      destination_city: "New York",
      price_cents: "1500",
      duplicate_matched_on: "phone_number; email",
      duplicate_original_order_number: "LP-1001",
    });
    // A member that is null on one lead is an empty cell there, not the other lead's value.
    expect(second?.destination_city).toBe("");
    expect(second?.duplicate_matched_on).toBe("");
  });

  it("writes the history in words and keeps quotes, commas and line breaks inside their cell", () => {
    expect(second?.history).toBe("LEAD 2026-11-03T14:25:07.412Z by provider:7; QUOTE 2026-11-04T09:00:00.000Z by ops");
    expect(first?.company_name).toBe('Acme "Cars", Inc.\nWest');
  });

  it("writes another list of objects (a request's errors) as name: value pairs", () => {
    const row = flatten({
      request_id: "req_1",
      errors: [
        { field: "origin_zip", code: "invalid_zip", message: "Origin ZIP 00000 is not a known US ZIP code" },
        { field: "ship_via", code: "invalid", message: "no" },
      ],
    });
    expect(row.errors).toBe(
      "field: origin_zip, code: invalid_zip, message: Origin ZIP 00000 is not a known US ZIP code; field: ship_via, code: invalid, message: no",
    );
  });

  it("writes text a spreadsheet would run as a formula with a leading apostrophe, numbers as they are", () => {
    const text = toCsv([
      { first_name: '=HYPERLINK("https://evil.example")', last_name: "+1-2", note: "@SUM(A1)", tariff: -150 },
    ]);
    const [header, row] = parseCsv(text);
    expect(header).toEqual(["first_name", "last_name", "note", "tariff"]);
    expect(row).toEqual(['\'=HYPERLINK("https://evil.example")', "'+1-2", "'@SUM(A1)", "-150"]);
  });
});
