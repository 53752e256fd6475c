/**
 * Money on both apps' screens: a book's balance as three cards, its ledger lines as a table, a
 * page of them at a time (cursor paging: back is a stack of page tokens), and purchases per day as
 * a chart (MUI X Charts, as the statistics are drawn).
 */
import {
  Box,
  Button,
  Card,
  CardContent,
  MenuItem,
  Stack,
  TableCell,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { BarChart } from "@mui/x-charts/BarChart";
import { useState } from "react";
import type { components } from "../../../generated/openapi/schema.ts";
import { num, when } from "../format.ts";
import { cents, LINE_TYPES } from "../money.ts";
import { DataTable, numeric } from "./DataTable.tsx";

type Schemas = components["schemas"];
type Balance = Schemas["Balance"];
type Line = Schemas["BalanceTransaction"];
type PerDay = Schemas["PurchasesPerDay"];

function MoneyCard({
  name,
  cents: amount,
  currency,
  help,
}: {
  name: string;
  cents: number;
  currency: string;
  help: string;
}) {
  return (
    <Card variant="outlined" sx={{ minWidth: 150, flex: "1 1 150px" }}>
      <CardContent>
        <Typography variant="body2">{name}</Typography>
        <Typography
          component="p"
          variant="h5"
          data-testid={`balance-${name.toLowerCase().replaceAll(" ", "-")}`}
          sx={{ color: amount < 0 ? "#b71c1c" : "text.primary" }}
        >
          {cents(amount, currency)}
        </Typography>
        <Typography variant="caption" color="text.secondary">
          {help}
        </Typography>
      </CardContent>
    </Card>
  );
}

/** Pending, available and paid out, each a card. */
export function BalanceCards({ balance }: { balance: Balance }) {
  return (
    <Stack direction="row" flexWrap="wrap" useFlexGap spacing={2} sx={{ my: 1 }} aria-label="Balance" role="group">
      <MoneyCard
        name="Pending"
        cents={balance.pending_cents}
        currency={balance.currency}
        help="Inside the settlement window"
      />
      <MoneyCard
        name="Available"
        cents={balance.available_cents}
        currency={balance.currency}
        help="Settled, not yet paid out"
      />
      <MoneyCard name="Paid out" cents={balance.paid_out_cents} currency={balance.currency} help="So far" />
    </Stack>
  );
}

/** A line type filter: every type, or one. */
export function LineTypeFilter({ value, onChange }: { value: string; onChange: (type: string) => void }) {
  return (
    <TextField
      fullWidth={false}
      select
      size="small"
      label="Type"
      value={value}
      onChange={(e) => onChange(e.target.value)}
      sx={{ minWidth: 180 }}
    >
      <MenuItem value="">Every type</MenuItem>
      {Object.entries(LINE_TYPES).map(([type, name]) => (
        <MenuItem key={type} value={type}>
          {name}
        </MenuItem>
      ))}
    </TextField>
  );
}

/** Ledger lines, newest first: when, type, account, amount, the account's balance after it, what it is. */
export function LedgerTable({ lines, label = "Ledger lines" }: { lines: Line[]; label?: string }) {
  return (
    <DataTable
      label={label}
      region
      columns={["When", "Type", "Account", ...numeric("Amount", "Balance after"), "Description"]}
    >
      {lines.length === 0 && (
        <TableRow>
          <TableCell colSpan={6}>No lines.</TableCell>
        </TableRow>
      )}
      {lines.map((l) => (
        <TableRow key={l.id}>
          <TableCell sx={{ whiteSpace: "nowrap" }}>{when(l.created_at)}</TableCell>
          <TableCell>{LINE_TYPES[l.type] ?? l.type}</TableCell>
          <TableCell>{l.account === "pending" ? "Pending" : "Available"}</TableCell>
          <TableCell
            align="right"
            sx={{ color: l.amount_cents < 0 ? "#b71c1c" : "text.primary", whiteSpace: "nowrap" }}
          >
            {cents(l.amount_cents, l.currency)}
          </TableCell>
          <TableCell align="right" sx={{ whiteSpace: "nowrap" }}>
            {cents(l.balance_after_cents, l.currency)}
          </TableCell>
          <TableCell>
            {l.description}
            {l.reference && l.type !== "payout" ? ` (${l.reference})` : ""}
          </TableCell>
        </TableRow>
      ))}
    </DataTable>
  );
}

/** Cursor paging for a list: the token of the page shown, and newer/older moves. */
export function usePages() {
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  return {
    token: tokens[tokens.length - 1],
    first: tokens.length === 1,
    older: (next: string) => setTokens((t) => [...t, next]),
    newer: () => setTokens((t) => (t.length > 1 ? t.slice(0, -1) : t)),
    reset: () => setTokens([undefined]),
  };
}

/** Newer / Older under a cursor-paged list. */
export function PageButtons(props: {
  pages: ReturnType<typeof usePages>;
  next: string | null | undefined;
  what: string;
}) {
  const { pages, next } = props;
  return (
    <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
      <Button size="small" disabled={pages.first} onClick={pages.newer} aria-label={`Newer ${props.what}`}>
        Newer
      </Button>
      <Button
        size="small"
        disabled={!next}
        onClick={() => next && pages.older(next)}
        aria-label={`Older ${props.what}`}
      >
        Older
      </Button>
    </Stack>
  );
}

/** Purchases per day as bars (amounts), with the totals in words for every reader. */
export function PerDayChart({ series, title }: { series: PerDay; title: string }) {
  const amounts = series.days.map((d) => d.amount_cents / 100);
  return (
    <Box>
      <Typography variant="body2" data-testid="per-day-total">
        {cents(series.total_cents, series.currency)} for {num(series.total_leads)}{" "}
        {series.total_leads === 1 ? "lead" : "leads"} from {series.from} to {series.to} (business days in{" "}
        {series.timezone}).
      </Typography>
      <Box
        role="img"
        aria-label={`${title} from ${series.from} to ${series.to}: ${cents(series.total_cents, series.currency)} in all`}
        sx={{ width: "100%", minWidth: 0 }}
      >
        <BarChart
          height={240}
          xAxis={[{ scaleType: "band", data: series.days.map((d) => d.date.slice(5)), label: "Business day" }]}
          yAxis={[
            { valueFormatter: (v: number | null) => cents(Math.round((v ?? 0) * 100), series.currency), width: 80 },
          ]}
          series={[
            {
              data: amounts,
              label: title,
              color: "#2e7d32",
              valueFormatter: (v: number | null) => cents(Math.round((v ?? 0) * 100), series.currency),
            },
          ]}
          hideLegend
        />
      </Box>
    </Box>
  );
}
