/**
 * Payables: what the broker owes every provider in one book (pending, available, paid out), a
 * page at a time, with the CSV of all of them; and the trial balance, every account of each book
 * added up, whose grand total is always 0 (`GET /api/v1/admin/payables/`,
 * `GET /api/v1/admin/ledger/trial_balance/`).
 */
import DownloadIcon from "@mui/icons-material/Download";
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Link as MuiLink,
  Stack,
  Tab,
  TableCell,
  TableRow,
  Tabs,
  Typography,
} from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Title, useAuthState } from "react-admin";
import { Link } from "react-router-dom";
import { DataTable, numeric } from "../../ui/src/components/DataTable.tsx";
import { PageButtons, usePages } from "../../ui/src/components/money.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { cents } from "../../ui/src/money.ts";
import { api, data, type Schemas } from "./api.ts";
import { getToken } from "./session.ts";

const PAGE = 25;
const ACCOUNTS = [
  ["pending", "Providers' pending"],
  ["available", "Providers' available"],
  ["lead_expense", "Broker's lead expense"],
  ["payouts", "Broker's payouts"],
] as const;

/** The CSV of every payable of the book, fetched with the administrator's token and saved by the browser. */
async function downloadCsv(mode: "live" | "test") {
  const res = await fetch(`/api/v1/admin/payables/?format=csv&mode=${mode}`, {
    headers: { authorization: `Bearer ${getToken() ?? ""}` },
  });
  if (!res.ok) throw new Error(((await res.json()) as { detail?: string }).detail ?? `${res.status}`);
  const a = document.createElement("a");
  a.href = URL.createObjectURL(await res.blob());
  a.download = `payables-${mode}.csv`;
  a.click();
  URL.revokeObjectURL(a.href);
}

function TrialBalance() {
  const { authenticated } = useAuthState();
  const trial = useQuery({
    queryKey: ["trial-balance"],
    enabled: authenticated === true,
    queryFn: () => data(api.GET("/api/v1/admin/ledger/trial_balance/")),
  });
  const t = trial.data;
  return (
    <Card component="section" aria-label="Trial balance" variant="outlined" sx={{ mt: 3 }}>
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>
          Trial balance
        </Typography>
        {trial.isError && <Alert severity="error">{String(trial.error.message)}</Alert>}
        {t && (
          <>
            <DataTable label="Every account of each book" region columns={["Account", ...numeric("Live", "Test")]}>
              {ACCOUNTS.map(([account, name]) => (
                <TableRow key={account}>
                  <TableCell>{name}</TableCell>
                  {t.books.map((b) => (
                    <TableCell key={String(b.livemode)} align="right">
                      {cents(b.accounts[account], t.currency)}
                    </TableCell>
                  ))}
                </TableRow>
              ))}
              <TableRow>
                <TableCell sx={{ fontWeight: 600 }}>Book total</TableCell>
                {t.books.map((b) => (
                  <TableCell key={String(b.livemode)} align="right" sx={{ fontWeight: 600 }}>
                    {cents(b.total_cents, t.currency)}
                  </TableCell>
                ))}
              </TableRow>
            </DataTable>
            <Typography
              variant="body1"
              data-testid="trial-balance-total"
              sx={{ mt: 1, fontWeight: 600, color: t.total_cents === 0 ? "success.dark" : "#b71c1c" }}
            >
              Grand total: {cents(t.total_cents, t.currency)}
              {t.total_cents === 0 ? " — every transaction balances." : " — the ledger does not balance!"}
            </Typography>
            <Typography variant="caption" color="text.secondary">
              As of {when(t.as_of)}.
            </Typography>
          </>
        )}
      </CardContent>
    </Card>
  );
}

export function PayablesPage() {
  const { authenticated } = useAuthState();
  const [mode, setMode] = useState<"live" | "test">("live");
  const [csvError, setCsvError] = useState<string | null>(null);
  const pages = usePages();
  const token = pages.token;
  const payables = useQuery({
    queryKey: ["payables", mode, token],
    enabled: authenticated === true,
    // JSON here (the CSV is the same operation with format=csv, fetched by the button).
    queryFn: () =>
      data(
        api.GET("/api/v1/admin/payables/", {
          params: { query: { mode, page_size: PAGE, ...(token && { page_token: token }) } },
        }),
      ) as Promise<Schemas["PayableList"]>,
  });
  const page = payables.data;
  return (
    <Box sx={{ py: 2 }}>
      <Title title="Payables" />
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }} sx={{ mb: 1 }}>
        <Typography component="h1" variant="h5">
          Payables
        </Typography>
        <Tabs
          value={mode}
          onChange={(_e, v: "live" | "test") => {
            setMode(v);
            pages.reset();
          }}
          aria-label="Book"
        >
          <Tab value="live" label="Live" />
          <Tab value="test" label="Test" />
        </Tabs>
        <Box sx={{ flex: 1 }} />
        <Button
          startIcon={<DownloadIcon />}
          onClick={() => {
            setCsvError(null);
            downloadCsv(mode).catch((err: unknown) =>
              setCsvError(`The CSV could not be made: ${err instanceof Error ? err.message : String(err)}`),
            );
          }}
        >
          Download CSV
        </Button>
      </Stack>
      <Typography variant="body2" gutterBottom>
        What the broker owes each provider: pending (inside the settlement window), available (settled, to be paid out)
        and paid out so far.
      </Typography>
      <TimeZoneNote />
      {csvError && <Alert severity="error">{csvError}</Alert>}
      {payables.isError && <Alert severity="error">{String(payables.error.message)}</Alert>}
      {page && (
        <>
          <DataTable
            label={`Payables (${mode})`}
            region
            columns={["Provider", ...numeric("Pending", "Available", "Paid out")]}
          >
            {page.results.length === 0 && (
              <TableRow>
                <TableCell colSpan={4}>No provider has money in this book yet.</TableCell>
              </TableRow>
            )}
            {page.results.map((p) => (
              <TableRow key={p.provider_id}>
                <TableCell>
                  <MuiLink component={Link} to={`/providers/${p.provider_id}/show`}>
                    {p.provider_name}
                  </MuiLink>
                </TableCell>
                <TableCell align="right">{cents(p.pending_cents, p.currency)}</TableCell>
                <TableCell align="right" sx={{ color: p.available_cents < 0 ? "#b71c1c" : undefined }}>
                  {cents(p.available_cents, p.currency)}
                </TableCell>
                <TableCell align="right">{cents(p.paid_out_cents, p.currency)}</TableCell>
              </TableRow>
            ))}
          </DataTable>
          <PageButtons pages={pages} next={page.next_page_token} what="payables" />
        </>
      )}
      <TrialBalance />
    </Box>
  );
}
