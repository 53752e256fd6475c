/**
 * A list's toolbar in the back office: filters, create (where it exists), and a CSV export of
 * every matching row, all pages.
 */
import DownloadIcon from "@mui/icons-material/Download";
import { Button } from "@mui/material";
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
import { type CsvRow, flatten, toCsv } from "./csv.ts";

/** The most rows one export takes; more is refused with a request to narrow the filters. */
export const EXPORT_LIMIT = 50_000;

/** The records without react-admin's copy of a string id (request_id is there). */
const withoutCopiedId = (r: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(r).filter(([k]) => k !== "id" || typeof r.id === "number"));

/**
 * Exports every row that matches the list's filters, all pages, as a CSV the browser downloads;
 * a failure is shown, never swallowed.
 */
export function ExportAllButton({ row = flatten }: { row?: (record: Record<string, unknown>) => CsvRow }) {
  const { filterValues, total } = useListContext();
  const resource = useResourceContext() ?? "rows";
  const dataProvider = useDataProvider();
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  const run = async () => {
    setBusy(true);
    try {
      const rows = (await dataProvider.getAll(resource, filterValues ?? {}, EXPORT_LIMIT)) as Record<string, unknown>[];
      downloadCSV(toCsv(rows.map((r) => row(withoutCopiedId(r)))), resource);
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

/** A list's toolbar: filters, create (where it exists), export (`exportRow` shapes a record's CSV row). */
export function ListActions({
  create = false,
  exportRow,
}: {
  create?: boolean;
  exportRow?: (record: Record<string, unknown>) => CsvRow;
}) {
  return (
    <TopToolbar sx={{ flexWrap: "wrap" }}>
      <FilterButton />
      {create && <CreateButton />}
      <ExportAllButton {...(exportRow ? { row: exportRow } : {})} />
    </TopToolbar>
  );
}
