/**
 * The back office's CSV exports as a spreadsheet reads them: one row per record, every row with
 * the same columns, a value per cell and never JSON. Column names are the API's snake_case names;
 * a nested member joins its path with `_` (`origin_zip`, `duplicate_original_id`), and a list is
 * written in words in one cell (`phone_number; email`). A lead's vehicles also get a count and
 * numbered columns of their own, so they can be sorted and summed.
 *
 * Written here rather than with react-admin's jsonexport: jsonexport names nested members with
 * dots and orders a column first met in a later row at the end, where `vehicle_2_year` belongs
 * beside `vehicle_1_vin`; the CSV writing itself is RFC 4180's three quoting rules.
 */

type Cell = string | number | boolean | null;
export type CsvRow = Record<string, Cell>;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A list item in words: a value as it is, an object as `name: value` pairs. */
function itemInWords(item: unknown): string {
  if (Array.isArray(item)) return item.map(itemInWords).join(", ");
  if (isObject(item)) {
    return Object.entries(flatten(item))
      .filter(([, v]) => v !== null && v !== "")
      .map(([k, v]) => `${k}: ${v}`)
      .join(", ");
  }
  return item === null || item === undefined ? "" : String(item);
}

/** A list in one cell: its items in words, separated by "; ". */
export function listInWords(list: unknown[]): string {
  return list.map(itemInWords).join("; ");
}

/** One record as flat cells: nested objects become `parent_member` columns, lists words. */
export function flatten(record: Record<string, unknown>, prefix = "", into: CsvRow = {}): CsvRow {
  for (const [key, value] of Object.entries(record)) {
    const name = `${prefix}${key}`;
    if (Array.isArray(value)) into[name] = listInWords(value);
    else if (isObject(value)) flatten(value, `${name}_`, into);
    else if (value === undefined) into[name] = null;
    else into[name] = value as Cell;
  }
  return into;
}

type Vehicle = { year?: number; make?: string; model?: string; type?: string } & Record<string, unknown>;
type StateChange = { to_state?: string; changed_at?: string; actor?: string };

/** A lead's members that are an object or null (the API's `anyOf: [object, null]`). */
const NULLABLE_OBJECTS = ["consent", "duplicate", "price", "return", "destination"];

/** "2022 Porsche 911 (CAR)". */
export const vehicleInWords = (v: Vehicle) => `${v.year} ${v.make} ${v.model}${v.type ? ` (${v.type})` : ""}`;

/**
 * A lead's row: its members flattened, the vehicles as a count, in words ("2022 Porsche 911 (CAR);
 * 2019 Ford F-150 (PICKUP)") and as numbered columns (`vehicle_1_year`, `vehicle_1_make`, …), and
 * its history as "LEAD 2026-11-03T14:25:07.412Z by provider; QUOTE … by …".
 */
export function leadForCsv(lead: Record<string, unknown>): CsvRow {
  const { vehicles, history, ...rest } = lead;
  const list = (Array.isArray(vehicles) ? vehicles : []) as Vehicle[];
  // An object that is absent (no duplicate, no return, …) has its members' columns left empty,
  // rather than a column of its own name that would always be empty beside them.
  for (const key of NULLABLE_OBJECTS) if (rest[key] === null) delete rest[key];
  const row = flatten(rest);
  row.vehicle_count = list.length;
  row.vehicles = list.map(vehicleInWords).join("; ");
  if (Array.isArray(history)) {
    row.history = (history as StateChange[]).map((h) => `${h.to_state} ${h.changed_at} by ${h.actor}`).join("; ");
  }
  // Numbered columns last, so a lead with more vehicles only adds columns at the end.
  list.forEach((v, i) => {
    for (const [key, value] of Object.entries(flatten(v))) row[`vehicle_${i + 1}_${key}`] = value;
  });
  return row;
}

/**
 * A cell as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break. Text a
 * spreadsheet would run as a formula (a provider's lead named `=HYPERLINK(…)`) gets a leading
 * apostrophe, as the portal's export does (portal/src/leads-csv.ts).
 */
function cell(value: Cell | undefined): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The rows as CSV text: a header of every column any row has, then one line per row with a cell
 * for each column (empty where the row has none). A column first met in a later row goes right
 * after the one before it in that row, so `vehicle_2_year` follows `vehicle_1_vin` and a member of
 * an object that was null in the first rows sits with its neighbours, not at the end.
 */
export function toCsv(rows: CsvRow[]): string {
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    let previous: string | undefined;
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.splice(previous === undefined ? 0 : columns.indexOf(previous) + 1, 0, key);
      }
      previous = key;
    }
  }
  const lines = [columns.map((c) => cell(c)).join(",")];
  for (const row of rows) lines.push(columns.map((c) => cell(row[c])).join(","));
  return lines.join("\r\n");
}
