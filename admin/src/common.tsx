/**
 * What every screen of the console shares: paging that says only what it knows, CSV export of
 * every matching row, state chips, the TEST banner, and one way to write numbers, money and
 * durations.
 */
import DownloadIcon from "@mui/icons-material/Download";
import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Stack,
  Typography,
} from "@mui/material";
import jsonExport from "jsonexport/dist";
import { type ReactNode, useState } from "react";
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

/** A request log entry's outcomes, as the filters offer them (console and portal). */
export const OUTCOMES = [
  { id: "accepted", name: "Accepted" },
  { id: "rejected", name: "Rejected" },
  { id: "rate_limited", name: "Rate limited" },
  { id: "failed", name: "Failed" },
];

const NUMBER = new Intl.NumberFormat("en-US");
const USD = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 });

/** A count, the same everywhere: 12,480. */
export const num = (n: number | null | undefined): string => (n === null || n === undefined ? "—" : NUMBER.format(n));
/** Whole dollars with the currency: $1,450 (USD). */
export const money = (n: number | null | undefined): string =>
  n === null || n === undefined ? "—" : `${USD.format(n)} USD`;
/** A date and time as people read it. */
export const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString("en-US") : "—");

/** Field names as the console's screens name them (the API's names, in words). */
const LABELS: Record<string, string> = {
  name: "Name",
  contact_email: "Contact email",
  is_active: "Active",
  rate_limit_per_minute: "Requests per minute",
  rate_limit_per_day: "Requests per day",
  webhook_url: "Webhook URL",
  notes: "Notes",
  provider_id: "Provider",
  from_state: "From",
  to_state: "To",
  lead_status: "Lead status",
  modes: "Keys",
  mode: "Key",
  event_id: "Event",
  delivery_id: "Delivery",
  status_code: "HTTP status",
  previous_key_grace_seconds: "Old key works for",
  overlap_seconds: "Old secret signs for",
  grace_seconds: "Old key works for",
  deleted_leads: "Test leads deleted",
  leads: "Leads",
  version: "Version",
  key_id: "Key id",
  masked: "Key",
  expires_at: "Expires",
};
export const label = (field: string): string =>
  LABELS[field] ?? field.replaceAll("_", " ").replace(/^./, (c) => c.toUpperCase());

/** A value as a person reads it. */
export function shown(v: unknown): string {
  if (v === null || v === undefined || v === "") return "—";
  if (typeof v === "boolean") return v ? "Yes" : "No";
  if (typeof v === "number") return num(v);
  if (Array.isArray(v)) return v.map(shown).join(", ");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** A span of seconds in the largest unit that keeps it readable: "45 s", "12 min", "3 h", "2 days". */
export function span(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round((s / 3600) * 10) / 10} h`;
  const days = Math.round((s / 86_400) * 10) / 10;
  return `${days} ${days === 1 ? "day" : "days"}`;
}
/** "in 12 h" or "3 min ago", from now. */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const seconds = (Date.parse(iso) - now) / 1000;
  return seconds >= 0 ? `in ${span(seconds)}` : `${span(-seconds)} ago`;
}

/** Dark enough on white for WCAG AA in the outlined chip. */
const STATE_COLOURS: Record<string, string> = { LEAD: "#0d47a1", QUOTE: "#7a3d00", ORDER: "#1b5e20" };

export function StateChip({ state }: { state: string | null | undefined }) {
  if (!state) return <span>—</span>;
  const colour = STATE_COLOURS[state] ?? "#333";
  return (
    <Chip size="small" variant="outlined" label={state} sx={{ color: colour, borderColor: colour, fontWeight: 600 }} />
  );
}

/** Test (sandbox) data, marked so it is never taken for a real lead. */
export function TestChip() {
  return <Chip size="small" label="TEST" sx={{ bgcolor: "#5d4037", color: "#fff", fontWeight: 700 }} />;
}

export function TestBanner({ what }: { what: string }) {
  return (
    <Alert severity="warning" icon={false} role="note" sx={{ mb: 1, fontWeight: 600 }}>
      TEST — this {what} was made with a test key (sandbox): it is not a real customer and never billed.
    </Alert>
  );
}

/**
 * Paging of a cursor-paged list: the rows shown and Previous / Next, never a total the service
 * does not count (react-admin's partial pagination, without its "of more than" guess).
 */
export function CursorPagination() {
  const { page, perPage, data, hasNextPage, hasPreviousPage, setPage, isPending } = useListContext();
  if (isPending) return null;
  const rows = data?.length ?? 0;
  const first = rows === 0 ? 0 : (page - 1) * perPage + 1;
  return (
    <Stack
      direction="row"
      alignItems="center"
      justifyContent="flex-end"
      spacing={1}
      sx={{ p: 1 }}
      flexWrap="wrap"
      useFlexGap
    >
      <Typography variant="body2" role="status">
        {rows === 0
          ? "No rows"
          : `Rows ${num(first)}–${num(first + rows - 1)}${hasNextPage ? ", more on the next page" : ""}`}
      </Typography>
      <Button size="small" disabled={!hasPreviousPage} onClick={() => setPage(page - 1)}>
        Previous page
      </Button>
      <Button size="small" disabled={!hasNextPage} onClick={() => setPage(page + 1)}>
        Next page
      </Button>
    </Stack>
  );
}

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

/** A table that scrolls inside itself on a narrow screen instead of widening the page. */
export function Scrolls({ children, label }: { children: ReactNode; label?: string }) {
  // position: relative keeps absolutely placed children (screen-reader-only text) inside the scroll.
  // With a label it is a named region a keyboard can focus and scroll (axe: scrollable-region-focusable).
  return (
    <Box
      {...(label !== undefined && { tabIndex: 0, role: "region", "aria-label": label })}
      sx={{
        overflowX: "auto",
        maxWidth: "100%",
        position: "relative",
        // Words stay whole (the page around may break anywhere); headers stay on one line.
        "& td, & th": { overflowWrap: "normal" },
        "& th": { whiteSpace: "nowrap" },
      }}
    >
      {children}
    </Box>
  );
}

/**
 * A confirmation whose button has the colour of what it does (red for what cannot be undone
 * or takes something away), with the consequences spelled out.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirm: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const id = `confirm-${props.title.replace(/\W+/g, "-").toLowerCase()}`;
  return (
    <Dialog open={props.open} onClose={props.onClose} aria-labelledby={id}>
      <DialogTitle id={id}>{props.title}</DialogTitle>
      <DialogContent>
        <DialogContentText component="div">{props.children}</DialogContentText>
      </DialogContent>
      <DialogActions>
        <Button onClick={props.onClose}>Cancel</Button>
        <Button
          variant="contained"
          color={props.danger ? "error" : "primary"}
          disabled={props.busy}
          onClick={props.onConfirm}
        >
          {props.confirm}
        </Button>
      </DialogActions>
    </Dialog>
  );
}
