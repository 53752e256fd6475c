/**
 * Statistics: what became of the provider's leads per day, week or month (MUI X Charts), the
 * table of the same numbers, and the CSV the API gives (`Accept: text/csv`).
 */
import { Alert, Box, Button, MenuItem, Stack, TableCell, TableRow, TextField, Typography } from "@mui/material";
import { BarChart } from "@mui/x-charts/BarChart";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { HttpError, Title } from "react-admin";
import { DataTable, numeric } from "../../ui/src/components/DataTable.tsx";
import { num } from "../../ui/src/format.ts";
import { api, data, explain, type Schemas } from "./api.ts";
import { thisWeek } from "./Home.tsx";

const daysAgo = (n: number) => {
  const d = new Date(Date.now() - n * 86_400_000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

export function StatsPage() {
  const [from, setFrom] = useState(daysAgo(29));
  const [to, setTo] = useState(thisWeek().to);
  const [granularity, setGranularity] = useState<"day" | "week" | "month">("day");
  const [mode, setMode] = useState<"live" | "test">("live");
  const [csvError, setCsvError] = useState<string | null>(null);
  const query = { from, to, granularity, mode };
  const stats = useQuery({
    queryKey: ["stats", query],
    // JSON here (the CSV is the same operation with Accept: text/csv, fetched below).
    queryFn: () => data(api.GET("/api/v1/portal/stats/", { params: { query } })) as Promise<Schemas["Stats"]>,
    // A refused range (400) is the person's to fix, not the network's: no retries.
    retry: (count, err) => !(err instanceof HttpError && err.status < 500) && count < 2,
  });

  async function downloadCsv() {
    setCsvError(null);
    const url = `/api/v1/portal/stats/?${new URLSearchParams(query)}`;
    const res = await fetch(url, { headers: { accept: "text/csv" }, credentials: "same-origin" });
    if (!res.ok) {
      setCsvError(`The CSV could not be made: ${((await res.json()) as { detail?: string }).detail ?? res.status}`);
      return;
    }
    const blob = await res.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `stats-${mode}-${from}-${to}-${granularity}.csv`;
    a.click();
    URL.revokeObjectURL(a.href);
  }

  const periods = stats.data?.periods ?? [];
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Statistics" />
      <Typography component="h1" variant="h5" gutterBottom>
        Statistics
      </Typography>
      <Stack direction="row" spacing={2} flexWrap="wrap" useFlexGap sx={{ my: 1 }}>
        <TextField label="From" type="date" size="small" value={from} onChange={(e) => setFrom(e.target.value)} />
        <TextField label="To" type="date" size="small" value={to} onChange={(e) => setTo(e.target.value)} />
        <TextField
          select
          size="small"
          label="Per"
          value={granularity}
          onChange={(e) => setGranularity(e.target.value as never)}
        >
          <MenuItem value="day">Day</MenuItem>
          <MenuItem value="week">Week</MenuItem>
          <MenuItem value="month">Month</MenuItem>
        </TextField>
        <TextField select size="small" label="Mode" value={mode} onChange={(e) => setMode(e.target.value as never)}>
          <MenuItem value="live">Live</MenuItem>
          <MenuItem value="test">Test (sandbox)</MenuItem>
        </TextField>
        <Button variant="outlined" onClick={downloadCsv}>
          Download CSV
        </Button>
      </Stack>
      {csvError && <Alert severity="error">{csvError}</Alert>}
      {stats.isError && <Alert severity="error">{explain(stats.error)}</Alert>}
      {stats.data && (
        <>
          <Typography variant="body2" data-testid="stats-totals">
            {num(stats.data.totals.submitted)} submitted, {num(stats.data.totals.accepted)} accepted,{" "}
            {num(stats.data.totals.quoted)} quoted, {num(stats.data.totals.ordered)} ordered,{" "}
            {num(stats.data.totals.returned ?? 0)} returned ({stats.data.timezone}).
          </Typography>
          <Box sx={{ width: "100%", minWidth: 0 }}>
            <BarChart
              height={280}
              xAxis={[{ scaleType: "band", data: periods.map((p) => p.period) }]}
              series={[
                { data: periods.map((p) => p.accepted), label: "Accepted", color: "#2e7d32" },
                { data: periods.map((p) => p.quoted), label: "Quoted", color: "#0277bd" },
                { data: periods.map((p) => p.ordered), label: "Ordered", color: "#4527a0" },
              ]}
            />
          </Box>
          <DataTable
            label="Statistics per period"
            region
            columns={["Period", ...numeric("Submitted", "Accepted", "Duplicates", "Quoted", "Ordered", "Returned")]}
          >
            {periods.map((p) => (
              <TableRow key={`${p.period}-${p.group ?? ""}`}>
                <TableCell>{p.period}</TableCell>
                <TableCell align="right">{num(p.submitted)}</TableCell>
                <TableCell align="right">{num(p.accepted)}</TableCell>
                <TableCell align="right">{num(p.duplicates)}</TableCell>
                <TableCell align="right">{num(p.quoted)}</TableCell>
                <TableCell align="right">{num(p.ordered)}</TableCell>
                <TableCell align="right">{num(p.returned ?? 0)}</TableCell>
              </TableRow>
            ))}
          </DataTable>
        </>
      )}
    </Box>
  );
}
