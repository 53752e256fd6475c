/**
 * The console's home: the last 30 business days of one mode (all providers, or one with
 * ?provider_id=): leads per day stacked by outcome, (all providers) the money spent on leads per
 * day, the LEAD→QUOTE→ORDER funnel, the top reject codes, and (all providers) a table per provider
 * with links, a page of providers at a time ranked by the column chosen. Charts are MUI X Charts; the numbers
 * come from GET /api/v1/admin/stats/, as the CSV export does.
 */
import {
  Box,
  Button,
  Card,
  CardContent,
  Link as MuiLink,
  Stack,
  Tab,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TableSortLabel,
  Tabs,
  Typography,
} from "@mui/material";
import { BarChart } from "@mui/x-charts/BarChart";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Title, useAuthState, useDataProvider } from "react-admin";
import { Link, useSearchParams } from "react-router-dom";
import { PerDayChart } from "../../ui/src/components/money.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import type { Schemas } from "./api.ts";
import type { StatsQuery } from "./dataProvider.ts";

type Stats = Schemas["Stats"];
type Outcomes = Schemas["StatsOutcomes"];

const COLOURS = {
  accepted: "#2e7d32",
  duplicates: "#ed6c02",
  rejected: "#c62828",
  quoted: "#0277bd",
  ordered: "#4527a0",
};
const pct = (n: number | null | undefined) => (n === null || n === undefined ? "—" : `${Math.round(n * 1000) / 10}%`);
const rejectedOf = (o: Outcomes) => Object.values(o.rejected).reduce((n, v) => n + v, 0);

/**
 * Through react-admin's data provider (a 401 signs out), and only once signed in: before that
 * the sign-in page shows and nothing is asked.
 */
function useStats(query: {
  provider_id?: number;
  livemode: boolean;
  group_by?: "provider";
  sort?: ProviderSort;
  page_size?: number;
  page_token?: string;
}) {
  const dataProvider = useDataProvider();
  const { authenticated } = useAuthState();
  return useQuery({
    queryKey: ["admin-stats", query],
    enabled: authenticated === true,
    queryFn: (): Promise<Stats> => dataProvider.getStats({ granularity: "day", ...query }),
  });
}

function Section({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card component="section" aria-label={title} sx={{ minWidth: 0 }}>
      <CardContent>
        <Typography variant="h6" component="h2" gutterBottom>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

function PerDay({ stats }: { stats: Stats }) {
  const days = stats.periods.map((p) => p.period.slice(5));
  return (
    <Section title="Leads per day by outcome">
      <Box
        role="img"
        aria-label={`Leads per business day (${stats.timezone}) from ${stats.from} to ${stats.to}: accepted, duplicates and rejected`}
      >
        <BarChart
          height={280}
          xAxis={[{ data: days, scaleType: "band", label: `Business day (${stats.timezone})` }]}
          series={[
            {
              label: "Accepted",
              stack: "day",
              color: COLOURS.accepted,
              data: stats.periods.map((p) => p.accepted - p.duplicates),
            },
            {
              label: "Duplicates",
              stack: "day",
              color: COLOURS.duplicates,
              data: stats.periods.map((p) => p.duplicates),
            },
            { label: "Rejected", stack: "day", color: COLOURS.rejected, data: stats.periods.map(rejectedOf) },
          ]}
        />
      </Box>
    </Section>
  );
}

/** What the broker spent on every provider's leads per business day (GET /api/v1/admin/ledger/spend/). */
function Spend({ livemode }: { livemode: boolean }) {
  const dataProvider = useDataProvider();
  const { authenticated } = useAuthState();
  const spend = useQuery({
    queryKey: ["admin-spend", livemode],
    enabled: authenticated === true,
    queryFn: (): Promise<Schemas["PurchasesPerDay"]> =>
      dataProvider.getSpend({ mode: livemode ? "live" : "test", days: 30 }),
  });
  return (
    <Section title="Spend per day">
      {spend.error && <Typography role="alert">Could not load the spend: {String(spend.error.message)}</Typography>}
      {spend.data && <PerDayChart series={spend.data} title="Spent on leads" />}
    </Section>
  );
}

function Funnel({ totals }: { totals: Outcomes }) {
  const steps = [
    ["Submitted", totals.submitted],
    ["Accepted", totals.accepted],
    ["Quoted", totals.quoted],
    ["Ordered", totals.ordered],
  ] as const;
  return (
    <Section title="Funnel: LEAD → QUOTE → ORDER">
      <Box role="img" aria-label={steps.map(([name, n]) => `${name} ${n}`).join(", ")}>
        <BarChart
          height={220}
          layout="horizontal"
          yAxis={[{ data: steps.map(([name]) => name), scaleType: "band", width: 80 }]}
          series={[{ label: "Leads", color: COLOURS.quoted, data: steps.map(([, n]) => n) }]}
          hideLegend
        />
      </Box>
      <Typography variant="body2">
        Quote rate {pct(totals.quote_rate)} · order rate {pct(totals.order_rate)} · return rate{" "}
        {pct(totals.return_rate ?? null)} (of accepted)
      </Typography>
    </Section>
  );
}

function RejectCodes({ totals }: { totals: Outcomes }) {
  const codes = Object.entries(totals.rejected)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 8);
  return (
    <Section title="Top reject codes">
      {codes.length === 0 ? (
        <Typography variant="body2">No refused leads in these 30 days.</Typography>
      ) : (
        <Box role="img" aria-label={codes.map(([code, n]) => `${code} ${n}`).join(", ")}>
          <BarChart
            height={Math.max(160, codes.length * 36)}
            layout="horizontal"
            yAxis={[{ data: codes.map(([code]) => code), scaleType: "band", width: 140 }]}
            series={[{ label: "Refused", color: COLOURS.rejected, data: codes.map(([, n]) => n) }]}
            hideLegend
          />
        </Box>
      )}
    </Section>
  );
}

/** The columns the provider table ranks by, as the API's `sort` names them ("-" first: descending). */
type ProviderSort = NonNullable<StatsQuery["sort"]>;
const PROVIDERS_PER_PAGE = 25;

interface ProviderRow {
  id: number;
  name: string;
  totals: { submitted: number; accepted: number; duplicates: number; ordered: number; lastLeadAt: string | null };
}

function providerRows(stats: Stats): ProviderRow[] {
  const rows = new Map<number, ProviderRow>();
  for (const p of stats.periods) {
    const id = Number(p.group);
    const row = rows.get(id) ?? {
      id,
      name: p.provider_name ?? String(id),
      totals: { submitted: 0, accepted: 0, duplicates: 0, ordered: 0, lastLeadAt: null },
    };
    row.totals.submitted += p.submitted;
    row.totals.accepted += p.accepted;
    row.totals.duplicates += p.duplicates;
    row.totals.ordered += p.ordered;
    if (p.last_lead_at && (!row.totals.lastLeadAt || p.last_lead_at > row.totals.lastLeadAt)) {
      row.totals.lastLeadAt = p.last_lead_at;
    }
    rows.set(id, row);
  }
  // In the page's order: the API ranks the providers by the column asked for.
  return [...rows.values()];
}

const rate = (n: number, of: number) => (of === 0 ? "—" : pct(n / of));

/** A column header that ranks the providers by its column: most first, then least on a second click. */
function SortHeader(props: {
  column: string;
  label: string;
  sort: ProviderSort;
  onSort: (sort: ProviderSort) => void;
  align?: "right";
}) {
  const active = props.sort === props.column || props.sort === `-${props.column}`;
  const descending = props.sort.startsWith("-");
  return (
    <TableCell align={props.align} sortDirection={active ? (descending ? "desc" : "asc") : false}>
      <TableSortLabel
        active={active}
        direction={active && !descending ? "asc" : "desc"}
        onClick={() => props.onSort((active && descending ? props.column : `-${props.column}`) as ProviderSort)}
      >
        {props.label}
      </TableSortLabel>
    </TableCell>
  );
}

function ProviderTable(props: {
  stats: Stats;
  sort: ProviderSort;
  onSort: (sort: ProviderSort) => void;
  hasPrevious: boolean;
  onPrevious: () => void;
  onNext: (token: string) => void;
}) {
  const { stats, sort, onSort } = props;
  const rows = providerRows(stats);
  const next = stats.next_page_token ?? null;
  return (
    <Section title="Providers">
      <TableContainer sx={{ overflowX: "auto" }}>
        <Table size="small" aria-label="Providers in the last 30 days">
          <TableHead>
            <TableRow>
              <TableCell>Provider</TableCell>
              <SortHeader column="submitted" label="Submitted" align="right" sort={sort} onSort={onSort} />
              <SortHeader column="accepted" label="Accepted" align="right" sort={sort} onSort={onSort} />
              <SortHeader column="duplicates" label="Duplicates" align="right" sort={sort} onSort={onSort} />
              <SortHeader column="ordered" label="Ordered" align="right" sort={sort} onSort={onSort} />
              <SortHeader column="last_lead_at" label="Last lead" sort={sort} onSort={onSort} />
              <TableCell>Links</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {rows.length === 0 && (
              <TableRow>
                <TableCell colSpan={7}>No provider sent anything in these 30 days.</TableCell>
              </TableRow>
            )}
            {rows.map((r) => (
              <TableRow key={r.id}>
                <TableCell>
                  <MuiLink component={Link} to={`/providers/${r.id}/show`}>
                    {r.name}
                  </MuiLink>
                </TableCell>
                <TableCell align="right">{r.totals.submitted}</TableCell>
                <TableCell align="right">{rate(r.totals.accepted, r.totals.submitted)}</TableCell>
                <TableCell align="right">{rate(r.totals.duplicates, r.totals.accepted)}</TableCell>
                <TableCell align="right">{rate(r.totals.ordered, r.totals.accepted)}</TableCell>
                <TableCell>{when(r.totals.lastLeadAt)}</TableCell>
                <TableCell>
                  <Stack direction="row" spacing={1}>
                    <MuiLink component={Link} to={`/?provider_id=${r.id}`} aria-label={`Stats of ${r.name}`}>
                      Stats
                    </MuiLink>
                    <MuiLink
                      component={Link}
                      to={`/requests?filter=${encodeURIComponent(JSON.stringify({ provider_id: r.id }))}`}
                      aria-label={`Requests of ${r.name}`}
                    >
                      Requests
                    </MuiLink>
                  </Stack>
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </TableContainer>
      <Stack direction="row" spacing={1} sx={{ mt: 1 }} justifyContent="flex-end">
        <Button size="small" disabled={!props.hasPrevious} onClick={props.onPrevious}>
          Previous providers
        </Button>
        <Button size="small" disabled={next === null} onClick={() => next !== null && props.onNext(next)}>
          Next providers
        </Button>
      </Stack>
    </Section>
  );
}

export function Dashboard() {
  const [params] = useSearchParams();
  const raw = params.get("provider_id");
  const providerId = raw && /^[1-9][0-9]*$/.test(raw) ? Number(raw) : undefined;
  const [livemode, setLivemode] = useState(true);
  const scope = { livemode, ...(providerId !== undefined && { provider_id: providerId }) };
  const daily = useStats(scope);
  const [sort, setSort] = useState<ProviderSort>("-submitted");
  // The tokens of the pages before this one (the first page has none).
  const [pages, setPages] = useState<string[]>([]);
  const token = pages.at(-1);
  const byProvider = useStats({
    ...scope,
    group_by: "provider",
    sort,
    page_size: PROVIDERS_PER_PAGE,
    ...(token !== undefined && { page_token: token }),
  });
  const stats = daily.data;
  const provider = providerId === undefined ? undefined : byProvider.data?.periods[0]?.provider_name;
  return (
    <Box sx={{ py: 2 }}>
      <Title title="Dashboard" />
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }} sx={{ mb: 2 }}>
        <Typography variant="h5" component="h1">
          {providerId === undefined ? "All providers" : (provider ?? `Provider ${providerId}`)}, last 30 days
        </Typography>
        {providerId !== undefined && (
          <MuiLink component={Link} to="/">
            All providers
          </MuiLink>
        )}
        <Tabs
          value={livemode ? "live" : "test"}
          onChange={(_e, v) => {
            setLivemode(v === "live");
            setPages([]);
          }}
          aria-label="Mode"
        >
          <Tab value="live" label="Live" />
          <Tab value="test" label="Test" />
        </Tabs>
      </Stack>
      <TimeZoneNote business={stats?.timezone} />
      {daily.error && (
        <Typography role="alert">Could not load the statistics: {String(daily.error.message)}</Typography>
      )}
      {stats && (
        <Box
          sx={{
            display: "grid",
            gap: 2,
            gridTemplateColumns: { xs: "minmax(0, 1fr)", md: "repeat(2, minmax(0, 1fr))" },
          }}
        >
          <Box sx={{ gridColumn: { md: "1 / -1" } }}>
            <PerDay stats={stats} />
          </Box>
          {providerId === undefined && (
            <Box sx={{ gridColumn: { md: "1 / -1" } }}>
              <Spend livemode={livemode} />
            </Box>
          )}
          <Funnel totals={stats.totals} />
          <RejectCodes totals={stats.totals} />
          {providerId === undefined && byProvider.data && (
            <Box sx={{ gridColumn: { md: "1 / -1" } }}>
              <ProviderTable
                stats={byProvider.data}
                sort={sort}
                onSort={(next) => {
                  setSort(next);
                  setPages([]);
                }}
                hasPrevious={pages.length > 0}
                onPrevious={() => setPages(pages.slice(0, -1))}
                onNext={(next) => setPages([...pages, next])}
              />
            </Box>
          )}
        </Box>
      )}
    </Box>
  );
}
