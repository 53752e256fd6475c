/**
 * Statistics: what became of the provider's leads per day, week or month, optionally per
 * sub-source, newest period first — a chart, the table with a totals row and the rates, and the
 * same view as the API's CSV (`Accept: text/csv`, with its totals row).
 */
import { Alert, Box, Button, MenuItem, Stack, TableCell, TableRow, TextField, Typography } from "@mui/material";
import { BarChart } from "@mui/x-charts/BarChart";
import { useQuery } from "@tanstack/react-query";
import { useRef, useState } from "react";
import { HttpError, Title } from "react-admin";
import { DataTable, numeric } from "../../ui/src/components/DataTable.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { num } from "../../ui/src/format.ts";
import { codeLabel, FIELD_LABELS } from "../../ui/src/labels.ts";
import { api, data, explain, type Schemas } from "./api.ts";
import { thisWeek } from "./Home.tsx";

/** A rate of 0–1 as a percentage with one decimal; "—" when there is none. */
export const percent = (r: number | null | undefined) =>
  r === null || r === undefined ? "—" : `${(r * 100).toFixed(1)} %`;

type Outcomes = Schemas["StatsOutcomes"];
const rejectedOf = (o: Outcomes) => Object.values(o.rejected).reduce((n, v) => n + v, 0);

function Cells({ o, codes }: { o: Outcomes; codes: string[] }) {
  return (
    <>
      <TableCell align="right">{num(o.submitted)}</TableCell>
      <TableCell align="right">{num(o.accepted)}</TableCell>
      <TableCell align="right">{num(o.billable ?? o.accepted - o.duplicates)}</TableCell>
      <TableCell align="right">{num(o.duplicates)}</TableCell>
      <TableCell align="right">{num(rejectedOf(o))}</TableCell>
      {codes.map((c) => (
        <TableCell key={c} align="right">
          {num(o.rejected[c] ?? 0)}
        </TableCell>
      ))}
      <TableCell align="right">{num(o.quoted)}</TableCell>
      <TableCell align="right">{num(o.ordered)}</TableCell>
      <TableCell align="right">{percent(o.acceptance_rate)}</TableCell>
      <TableCell align="right">{percent(o.quote_rate)}</TableCell>
      <TableCell align="right">{percent(o.order_rate)}</TableCell>
    </>
  );
}

export function StatsPage() {
  // Unset: the service's range, the last 30 business days to today in BUSINESS_TIMEZONE (the
  // browser's calendar may be on another day).
  const [from, setFrom] = useState<string | undefined>(undefined);
  const [to, setTo] = useState<string | undefined>(undefined);
  const [granularity, setGranularity] = useState<"day" | "week" | "month">("day");
  const [groupBy, setGroupBy] = useState<"" | "sub_id">("");
  const [mode, setMode] = useState<"live" | "test">("live");
  const [csvError, setCsvError] = useState<string | null>(null);
  const query = { granularity, mode, ...(from && { from }), ...(to && { to }), ...(groupBy && { group_by: groupBy }) };
  const stats = useQuery({
    queryKey: ["stats", query],
    // JSON here (the CSV is the same operation with Accept: text/csv, fetched below).
    queryFn: () => data(api.GET("/api/v1/portal/stats/", { params: { query } })) as Promise<Schemas["Stats"]>,
    // A refused range (400) is the person's to fix, not the network's: no retries.
    retry: (count, err) => !(err instanceof HttpError && err.status < 500) && count < 2,
  });

  // The range the fields show: the one chosen, else the service's (kept while another loads).
  const served = useRef<{ from: string; to: string } | undefined>(undefined);
  if (stats.data) served.current = { from: stats.data.from, to: stats.data.to };
  const shownFrom = from ?? served.current?.from ?? "";
  const shownTo = to ?? served.current?.to ?? "";

  function thisWeekBy(g: "day" | "week") {
    const w = thisWeek(stats.data?.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
    setFrom(w.from);
    setTo(w.to);
    setGranularity(g);
  }

  async function downloadCsv() {
    setCsvError(null);
    const url = `/api/v1/portal/stats/?${new URLSearchParams({ ...query, totals: "true" })}`;
    const res = await fetch(url, { headers: { accept: "text/csv" }, credentials: "same-origin" });
    if (!res.ok) {
      setCsvError(`The CSV could not be made: ${((await res.json()) as { detail?: string }).detail ?? res.status}`);
      return;
    }
    const blob = await res.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `stats-${mode}-${shownFrom}-${shownTo}-${granularity}${groupBy ? "-by-sub-source" : ""}.csv`;
    a.click();
    URL.revokeObjectURL(a.href);
  }

  // Newest period first; within a period, the sub-sources by name.
  const periods = [...(stats.data?.periods ?? [])].sort((a, b) =>
    a.period === b.period ? (a.group ?? "").localeCompare(b.group ?? "") : a.period < b.period ? 1 : -1,
  );
  const codes = Object.keys(stats.data?.totals.rejected ?? {}).sort();
  // The chart: one bar group per period, oldest to newest (sub-sources summed).
  const perPeriod = new Map<string, { accepted: number; quoted: number; ordered: number }>();
  for (const p of stats.data?.periods ?? []) {
    const c = perPeriod.get(p.period) ?? { accepted: 0, quoted: 0, ordered: 0 };
    perPeriod.set(p.period, {
      accepted: c.accepted + p.accepted,
      quoted: c.quoted + p.quoted,
      ordered: c.ordered + p.ordered,
    });
  }
  const chart = [...perPeriod.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
  const empty = chart.every(([, c]) => c.accepted + c.quoted + c.ordered === 0);
  const t = stats.data?.totals;
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Statistics" />
      <Typography component="h1" variant="h5" gutterBottom>
        Statistics
      </Typography>
      <TimeZoneNote business={stats.data?.timezone} times={false} />
      <Stack direction="row" spacing={1} flexWrap="wrap" useFlexGap sx={{ my: 1 }}>
        <Button size="small" variant="outlined" onClick={() => thisWeekBy("week")}>
          This week
        </Button>
        <Button size="small" variant="outlined" onClick={() => thisWeekBy("day")}>
          This week by day
        </Button>
      </Stack>
      <Stack direction="row" spacing={2} flexWrap="wrap" useFlexGap sx={{ my: 1 }}>
        <TextField
          label="From"
          type="date"
          size="small"
          value={shownFrom}
          onChange={(e) => setFrom(e.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField
          label="To"
          type="date"
          size="small"
          value={shownTo}
          onChange={(e) => setTo(e.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
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
        <TextField
          select
          size="small"
          label="Group by"
          value={groupBy}
          onChange={(e) => setGroupBy(e.target.value as never)}
          sx={{ minWidth: 140 }}
        >
          <MenuItem value="">Nothing</MenuItem>
          <MenuItem value="sub_id">{FIELD_LABELS.sub_id}</MenuItem>
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
      {stats.data && t && (
        <>
          <Typography variant="body2" data-testid="stats-totals">
            {num(t.submitted)} submitted, {num(t.accepted)} accepted ({percent(t.acceptance_rate)}), of which{" "}
            {num(t.billable ?? t.accepted - t.duplicates)} billable and {num(t.duplicates)} duplicates (not billed);{" "}
            {num(rejectedOf(t))} rejected, {num(t.quoted)} quoted, {num(t.ordered)} ordered — from {stats.data.from} to{" "}
            {stats.data.to}, business days in {stats.data.timezone}.
          </Typography>
          {empty ? (
            <Typography variant="body2" sx={{ my: 2 }} data-testid="stats-chart-empty">
              No leads in this range yet, so there is nothing to chart.
            </Typography>
          ) : (
            <Box sx={{ width: "100%", minWidth: 0 }}>
              <BarChart
                height={280}
                xAxis={[{ scaleType: "band", data: chart.map(([p]) => p) }]}
                yAxis={[{ tickMinStep: 1, valueFormatter: (v: number) => num(v) }]}
                series={[
                  { data: chart.map(([, c]) => c.accepted), label: "Accepted", color: "#2e7d32" },
                  { data: chart.map(([, c]) => c.quoted), label: "Quoted", color: "#0277bd" },
                  { data: chart.map(([, c]) => c.ordered), label: "Ordered", color: "#4527a0" },
                ]}
              />
            </Box>
          )}
          <DataTable
            label="Statistics per period, newest first"
            region
            columns={[
              "Period",
              ...(groupBy ? [FIELD_LABELS.sub_id as string] : []),
              ...numeric(
                "Submitted",
                "Accepted",
                "Billable",
                "Duplicates (not billed)",
                "Rejected",
                ...codes.map((c) => `Rejected: ${codeLabel(c)}`),
                "Quoted",
                "Ordered",
                "Acceptance rate",
                "Quote rate",
                "Order rate",
              ),
            ]}
          >
            {periods.map((p) => (
              <TableRow key={`${p.period}-${p.group ?? ""}`} data-testid="stats-row">
                <TableCell>{p.period}</TableCell>
                {groupBy && <TableCell>{p.group === "" ? "(none)" : p.group}</TableCell>}
                <Cells o={p} codes={codes} />
              </TableRow>
            ))}
            <TableRow data-testid="stats-total-row" sx={{ "& td": { fontWeight: 700 } }}>
              <TableCell>Total</TableCell>
              {groupBy && <TableCell />}
              <Cells o={t} codes={codes} />
            </TableRow>
          </DataTable>
        </>
      )}
    </Box>
  );
}
