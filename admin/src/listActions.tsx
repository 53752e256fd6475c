/**
 * A list's toolbar in the back office: filters, create (where it exists), and a CSV export of
 * every matching row, all pages.
 */
import DownloadIcon from "@mui/icons-material/Download";
import { Button } from "@mui/material";
import jsonExport from "jsonexport/dist";
import { useState } from "react";
import {
  CreateButton,
  downloadCSV,
  FilterButton,
  TopToolbar,
  useDataProvider,
  useListContext,
  useNotify,
  useResourceContext,
} from "react-admin";
import { num } from "../../ui/src/format.ts";

/** The most rows one export takes; more is refused with a request to narrow the filters. */
export const EXPORT_LIMIT = 50_000;

/**
 * One CSV row per record: nested objects become dotted columns (`origin.zip`), and a list
 * (vehicles, history, errors) stays in one cell as JSON. jsonexport on its own writes one row per
 * list item, which split a lead over several rows and paired its vehicles with the wrong history.
 */
export function rowForCsv(record: Record<string, unknown>, prefix = "", into: Record<string, unknown> = {}) {
  for (const [key, value] of Object.entries(record)) {
    const name = `${prefix}${key}`;
    if (Array.isArray(value)) into[name] = value.length === 0 ? "" : JSON.stringify(value);
    else if (value !== null && typeof value === "object") rowForCsv(value as Record<string, unknown>, `${name}.`, into);
    else into[name] = value;
  }
  return into;
}

/** The rows as the CSV holds them, without react-admin's copy of a string id (request_id is there). */
function rowsForCsv(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((r) =>
    rowForCsv(Object.fromEntries(Object.entries(r).filter(([k]) => k !== "id" || typeof r.id === "number"))),
  );
}

/**
 * Exports every row that matches the list's filters, all pages, as a CSV the browser downloads;
 * a failure is shown, never swallowed.
 */
export function ExportAllButton() {
  const { filterValues, total } = useListContext();
  const resource = useResourceContext() ?? "rows";
  const dataProvider = useDataProvider();
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    try {
      const rows = (await dataProvider.getAll(resource, filterValues ?? {}, EXPORT_LIMIT)) as Record<string, unknown>[];
      const csv = await new Promise<string>((resolve, reject) =>
        jsonExport(rowsForCsv(rows), { fillGaps: true }, (err: Error | null, out: string) =>
          err ? reject(err) : resolve(out),
        ),
      );
      downloadCSV(csv, resource);
      notify(`Exported ${num(rows.length)} ${rows.length === 1 ? "row" : "rows"}`, { type: "success" });
    } catch (err) {
      notify(`Export failed: ${err instanceof Error ? err.message : String(err)}`, { type: "error" });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button size="small" startIcon={<DownloadIcon />} onClick={run} disabled={busy || total === 0}>
      {busy ? "Exporting…" : "Export CSV"}
    </Button>
  );
}

/** A list's toolbar: filters, create (where it exists), export. */
export function ListActions({ create = false }: { create?: boolean }) {
  return (
    <TopToolbar sx={{ flexWrap: "wrap" }}>
      <FilterButton />
      {create && <CreateButton />}
      <ExportAllButton />
    </TopToolbar>
  );
}
