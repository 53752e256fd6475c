/** A provider's requests against its limits this minute and today, per key, refreshed every 5 seconds. */
import { Alert, TableCell, TableRow, Typography } from "@mui/material";
import { useCallback, useEffect, useState } from "react";
import { useRecordContext } from "react-admin";
import { DataTable } from "../../../ui/src/components/DataTable.tsx";
import { num, span } from "../../../ui/src/format.ts";
import { api, data, type Schemas } from "../api.ts";
import { Panel, reason } from "./Panel.tsx";

type Usage = Schemas["ProviderUsage"];

export function UsagePanel() {
  const record = useRecordContext<Schemas["Provider"]>();
  const [usage, setUsage] = useState<Usage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = record?.id;
  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      setUsage(await data(api.GET("/api/v1/lead_providers/{id}/usage/", { params: { path: { id } } })));
      setError(null);
    } catch (err) {
      setError(reason(err));
    }
  }, [id]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 5000);
    return () => clearInterval(timer);
  }, [load]);
  const line = (w: Schemas["WindowUsage"]) =>
    `${w.used === null ? "?" : num(w.used)} of ${num(w.limit)} (resets in ${span(w.reset_seconds)})`;
  return (
    <Panel title="Usage now">
      {error && <Alert severity="error">{error}</Alert>}
      {!usage && !error && <Typography variant="body2">Loading…</Typography>}
      {usage && (
        <DataTable label="Requests against the limits" columns={["Key", "This minute", "Today (UTC)"]}>
          <TableRow>
            <TableCell>Live</TableCell>
            <TableCell>{line(usage.live.minute)}</TableCell>
            <TableCell>{line(usage.live.day)}</TableCell>
          </TableRow>
          <TableRow>
            <TableCell>Test</TableCell>
            <TableCell>{line(usage.test.minute)}</TableCell>
            <TableCell>{line(usage.test.day)}</TableCell>
          </TableRow>
        </DataTable>
      )}
    </Panel>
  );
}
