/**
 * Earnings: what the broker owes the provider in the chosen book (live or test): the balance as
 * cards, what its leads earned per day (MUI X Charts, the broker's calendar), the ledger lines
 * with type and date filters a page at a time, the monthly statements with their CSV and PDF, and
 * the commercial terms in words. Every number is the portal's money routes' (the Public API's
 * answers for the session's provider).
 */
import {
  Alert,
  Box,
  Card,
  CardContent,
  Link,
  MenuItem,
  Stack,
  TableCell,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Title } from "react-admin";
import { DataTable, numeric } from "../../ui/src/components/DataTable.tsx";
import {
  BalanceCards,
  LedgerTable,
  LineTypeFilter,
  PageButtons,
  PerDayChart,
  usePages,
} from "../../ui/src/components/money.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { cents, termsSentences } from "../../ui/src/money.ts";
import { api, data, explain, type Schemas } from "./api.ts";

type Mode = "live" | "test";
const LINES_PAGE = 20;

/** The start of a YYYY-MM-DD day in the viewer's calendar (the lines' times are shown in it), as an instant. */
const startOf = (day: string, plusDays = 0) => {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, d + plusDays).toISOString();
};

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card component="section" aria-label={title} variant="outlined" sx={{ my: 2, minWidth: 0 }}>
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

function Ledger({ mode }: { mode: Mode }) {
  const [type, setType] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const pages = usePages();
  const query = {
    mode,
    page_size: LINES_PAGE,
    ...(type && { type: type as never }),
    ...(from && { created_after: startOf(from) }),
    ...(to && { created_before: startOf(to, 1) }),
    ...(pages.token && { page_token: pages.token }),
  };
  const lines = useQuery({
    queryKey: ["portal-lines", query],
    queryFn: () => data(api.GET("/api/v1/portal/balance_transactions/", { params: { query } })),
  });
  const filter = (set: (v: string) => void) => (v: string) => {
    set(v);
    pages.reset();
  };
  return (
    <Section title="Ledger">
      <Stack direction="row" spacing={2} flexWrap="wrap" useFlexGap sx={{ mb: 1 }}>
        <LineTypeFilter value={type} onChange={filter(setType)} />
        <TextField
          fullWidth={false}
          label="From (your calendar)"
          type="date"
          size="small"
          value={from}
          onChange={(e) => filter(setFrom)(e.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
        <TextField
          fullWidth={false}
          label="To (your calendar)"
          type="date"
          size="small"
          value={to}
          onChange={(e) => filter(setTo)(e.target.value)}
          slotProps={{ inputLabel: { shrink: true } }}
        />
      </Stack>
      {lines.isError && <Alert severity="error">{explain(lines.error)}</Alert>}
      {lines.data && (
        <>
          <LedgerTable lines={lines.data.results} />
          <PageButtons pages={pages} next={lines.data.next_page_token} what="ledger lines" />
        </>
      )}
    </Section>
  );
}

function Statements({ mode }: { mode: Mode }) {
  const pages = usePages();
  const query = { mode, ...(pages.token && { page_token: pages.token }) };
  const statements = useQuery({
    queryKey: ["portal-statements", query],
    queryFn: () => data(api.GET("/api/v1/portal/statements/", { params: { query } })),
  });
  const file = (month: string, format: "csv" | "pdf") =>
    `/api/v1/portal/statements/${month}/?format=${format}${mode === "test" ? "&mode=test" : ""}`;
  return (
    <Section title="Statements">
      <Typography variant="body2" gutterBottom>
        One per calendar month of business days; a month is closed a few minutes after it ends and never changes again.
      </Typography>
      {statements.isError && <Alert severity="error">{explain(statements.error)}</Alert>}
      {statements.data && (
        <>
          <DataTable
            label="Monthly statements"
            region
            columns={["Month", "Status", ...numeric("Opening", "Closing"), "Download"]}
          >
            {statements.data.results.length === 0 && (
              <TableRow>
                <TableCell colSpan={5}>No statement.</TableCell>
              </TableRow>
            )}
            {statements.data.results.map((s) => (
              <TableRow key={s.month}>
                <TableCell>{s.month}</TableCell>
                <TableCell>{s.status === "open" ? "Open" : "Closed"}</TableCell>
                <TableCell align="right">{cents(s.opening_balance_cents, s.currency)}</TableCell>
                <TableCell align="right">{cents(s.closing_balance_cents, s.currency)}</TableCell>
                <TableCell>
                  <Stack direction="row" spacing={2}>
                    <Link href={file(s.month, "csv")} download aria-label={`Statement ${s.month} as CSV`}>
                      CSV
                    </Link>
                    <Link href={file(s.month, "pdf")} download aria-label={`Statement ${s.month} as PDF`}>
                      PDF
                    </Link>
                  </Stack>
                </TableCell>
              </TableRow>
            ))}
          </DataTable>
          <PageButtons pages={pages} next={statements.data.next_page_token} what="statements" />
        </>
      )}
    </Section>
  );
}

function Terms({ terms }: { terms: Schemas["PublishedTerms"] }) {
  const words = termsSentences(terms);
  return (
    <Section title="Your terms">
      <Typography variant="body2" gutterBottom>
        Version {terms.version}
        {terms.effective_at ? `, in force since ${when(terms.effective_at)}` : ""}. A change applies to leads accepted
        after it, never to one already accepted.
      </Typography>
      <Typography component="h3" variant="subtitle1">
        What a lead earns
      </Typography>
      <Box component="ul" sx={{ mt: 0, pl: 3 }} data-testid="terms-prices">
        {words.prices.map((s) => (
          <Typography component="li" variant="body2" key={s}>
            {s}
          </Typography>
        ))}
      </Box>
      <Typography component="h3" variant="subtitle1">
        When it is paid
      </Typography>
      <Typography variant="body2" gutterBottom data-testid="terms-settlement">
        {words.settlement}
      </Typography>
      <Typography component="h3" variant="subtitle1">
        Returns
      </Typography>
      <Typography variant="body2" data-testid="terms-returns">
        {words.returns}
      </Typography>
    </Section>
  );
}

export function EarningsPage() {
  const [mode, setMode] = useState<Mode>("live");
  const balance = useQuery({
    queryKey: ["portal-balance", mode],
    queryFn: () => data(api.GET("/api/v1/portal/balance/", { params: { query: { mode } } })),
  });
  const earnings = useQuery({
    queryKey: ["portal-earnings", mode],
    queryFn: () => data(api.GET("/api/v1/portal/earnings/", { params: { query: { mode, days: 30 } } })),
  });
  const terms = useQuery({
    queryKey: ["portal-terms"],
    queryFn: () => data(api.GET("/api/v1/portal/terms/")),
  });
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Earnings" />
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }}>
        <Typography component="h1" variant="h5">
          Earnings
        </Typography>
        <TextField
          fullWidth={false}
          select
          size="small"
          label="Mode"
          value={mode}
          onChange={(e) => setMode(e.target.value as Mode)}
          sx={{ minWidth: 160 }}
        >
          <MenuItem value="live">Live</MenuItem>
          <MenuItem value="test">Test (sandbox)</MenuItem>
        </TextField>
      </Stack>
      <TimeZoneNote business={earnings.data?.timezone} />
      {balance.isError && <Alert severity="error">{explain(balance.error)}</Alert>}
      {balance.data && <BalanceCards balance={balance.data} />}
      <Section title="Earned per day, last 30 days">
        {earnings.isError && <Alert severity="error">{explain(earnings.error)}</Alert>}
        {earnings.data && <PerDayChart series={earnings.data} title="Earned" />}
      </Section>
      <Ledger key={`ledger-${mode}`} mode={mode} />
      <Statements key={`statements-${mode}`} mode={mode} />
      {terms.data && <Terms terms={terms.data} />}
    </Box>
  );
}
