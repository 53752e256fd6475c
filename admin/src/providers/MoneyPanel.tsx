/**
 * The provider page's Money panel: the balance of one book (live or test) as cards, its ledger
 * lines (type filter, newer / older pages), and the two things an administrator records: a
 * payout (at most the available balance: the service's 409 is shown as it words it) and an
 * adjustment. Each asks first, in red, naming the amount and the provider.
 */
import {
  Alert,
  Box,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Stack,
  Tab,
  Tabs,
  TextField,
  Typography,
} from "@mui/material";
import { useCallback, useEffect, useState } from "react";
import { useNotify, useRecordContext } from "react-admin";
import { BalanceCards, LedgerTable, LineTypeFilter, PageButtons, usePages } from "../../../ui/src/components/money.tsx";
import { cents } from "../../../ui/src/money.ts";
import { api, data, type Schemas } from "../api.ts";
import { Panel, reason } from "./Panel.tsx";

type Mode = "live" | "test";
const LINES_PAGE = 10;

/** Dollars as typed → whole cents (NaN when it is not an amount). */
const toCents = (s: string) => {
  const t = s.trim().replace(/^\$/, "").replaceAll(",", "");
  return t === "" ? Number.NaN : Math.round(Number(t) * 100);
};
/** A datetime-local value for now. */
const localNow = () => {
  const d = new Date();
  d.setSeconds(0, 0);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

type Kind = "payout" | "adjustment";

/** A payout's or an adjustment's form, then its red confirmation; the service's refusal is shown in the dialog. */
function RecordDialog(props: {
  kind: Kind;
  open: boolean;
  provider: { id: number; name: string };
  mode: Mode;
  balance: Schemas["Balance"] | null;
  onClose: () => void;
  onDone: () => void;
}) {
  const { kind, provider, mode } = props;
  const notify = useNotify();
  const [amount, setAmount] = useState("");
  const [reference, setReference] = useState("");
  const [paidAt, setPaidAt] = useState(localNow());
  const [reasonText, setReason] = useState("");
  const [leadId, setLeadId] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const currency = props.balance?.currency ?? "USD";
  const value = toCents(amount);
  const shown = Number.isFinite(value) ? cents(Math.abs(value), currency) : amount;
  const book = mode === "test" ? " (test book)" : "";

  useEffect(() => {
    if (!props.open) return;
    setAmount("");
    setReference("");
    setPaidAt(localNow());
    setReason("");
    setLeadId("");
    setConfirming(false);
    setFailure(null);
    setErrors({});
  }, [props.open]);

  const title = kind === "payout" ? "Record a payout" : "Record an adjustment";
  const question =
    kind === "payout"
      ? `Pay out ${shown} to ${provider.name}${book}?`
      : value < 0
        ? `Take ${shown} from ${provider.name}${book}?`
        : `Credit ${shown} to ${provider.name}${book}?`;

  const submit = async () => {
    setBusy(true);
    setFailure(null);
    setErrors({});
    try {
      if (kind === "payout") {
        await data(
          api.POST("/api/v1/lead_providers/{id}/payouts/", {
            params: { path: { id: provider.id } },
            body: {
              amount_cents: Number.isFinite(value) ? value : (amount as never),
              reference,
              paid_at: new Date(paidAt).toISOString(),
              mode,
            },
          }),
        );
        notify(`Payout of ${shown} to ${provider.name} recorded`, { type: "success" });
      } else {
        await data(
          api.POST("/api/v1/lead_providers/{id}/adjustments/", {
            params: { path: { id: provider.id } },
            body: {
              amount_cents: Number.isFinite(value) ? value : (amount as never),
              reason: reasonText,
              ...(leadId.trim() !== "" && { lead_id: Number(leadId) }),
              ...(reference.trim() !== "" && { reference }),
              mode,
            },
          }),
        );
        notify(`Adjustment of ${value < 0 ? "-" : ""}${shown} for ${provider.name} recorded`, { type: "success" });
      }
      props.onDone();
    } catch (err) {
      setFailure(reason(err));
      setErrors((err as { body?: { errors?: Record<string, string> } }).body?.errors ?? {});
      setConfirming(false);
    } finally {
      setBusy(false);
    }
  };

  const id = `record-${kind}`;
  return (
    <Dialog open={props.open} onClose={props.onClose} aria-labelledby={id} fullWidth maxWidth="sm">
      <DialogTitle id={id}>{confirming ? question : `${title} for ${provider.name}${book}`}</DialogTitle>
      <DialogContent>
        {failure && (
          <Alert severity="error" role="alert" sx={{ mb: 2 }}>
            {failure}
          </Alert>
        )}
        {confirming ? (
          <DialogContentText component="div">
            <Alert severity="error" icon={false}>
              {kind === "payout"
                ? `This records ${shown} paid to ${provider.name} (reference ${reference}), taken from its available balance of ${cents(props.balance?.available_cents, currency)}. A payout is never edited or removed: a mistake is corrected with an adjustment.`
                : `This ${value < 0 ? "takes" : "credits"} ${shown} ${value < 0 ? "from" : "to"} ${provider.name}'s available balance, with the reason "${reasonText}", which the provider sees. It is never edited or removed: a mistake is corrected with another adjustment.`}
            </Alert>
          </DialogContentText>
        ) : (
          <Stack spacing={2} sx={{ mt: 1 }}>
            {kind === "payout" && props.balance && (
              <Typography variant="body2">
                Available to pay out: {cents(props.balance.available_cents, currency)}
              </Typography>
            )}
            <TextField
              label={kind === "payout" ? "Amount" : "Amount (negative takes money away)"}
              value={amount}
              onChange={(e) => setAmount(e.target.value)}
              slotProps={{ htmlInput: { inputMode: "decimal" } }}
              helperText={errors.amount_cents ?? `In ${currency}, e.g. 150.00`}
              error={Boolean(errors.amount_cents)}
              autoFocus
            />
            {kind === "payout" ? (
              <>
                <TextField
                  label="Reference"
                  value={reference}
                  onChange={(e) => setReference(e.target.value)}
                  helperText={
                    errors.reference ?? "The wire or transfer reference; a retry with it records nothing twice"
                  }
                  error={Boolean(errors.reference)}
                />
                <TextField
                  label="Paid at"
                  type="datetime-local"
                  value={paidAt}
                  onChange={(e) => setPaidAt(e.target.value)}
                  helperText={errors.paid_at ?? " "}
                  error={Boolean(errors.paid_at)}
                  slotProps={{ inputLabel: { shrink: true } }}
                />
              </>
            ) : (
              <>
                <TextField
                  label="Reason"
                  value={reasonText}
                  onChange={(e) => setReason(e.target.value)}
                  helperText={errors.reason ?? "The provider reads it on its statement"}
                  error={Boolean(errors.reason)}
                  multiline
                />
                <TextField
                  label="Lead id (optional)"
                  value={leadId}
                  onChange={(e) => setLeadId(e.target.value)}
                  helperText={errors.lead_id ?? "One of the provider's leads this is about"}
                  error={Boolean(errors.lead_id)}
                />
                <TextField
                  label="Reference (optional)"
                  value={reference}
                  onChange={(e) => setReference(e.target.value)}
                  helperText={errors.reference ?? "With one, a retry records nothing twice"}
                  error={Boolean(errors.reference)}
                />
              </>
            )}
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={confirming ? () => setConfirming(false) : props.onClose}>
          {confirming ? "Back" : "Cancel"}
        </Button>
        {confirming ? (
          <Button variant="contained" color="error" disabled={busy} onClick={submit}>
            {kind === "payout" ? `Pay out ${shown}` : `Record ${value < 0 ? "-" : ""}${shown}`}
          </Button>
        ) : (
          <Button
            variant="contained"
            color="error"
            disabled={amount.trim() === ""}
            onClick={() => {
              setFailure(null);
              setConfirming(true);
            }}
          >
            Continue
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
}

export function MoneyPanel() {
  const record = useRecordContext<{ id: number; name: string }>();
  const id = record?.id;
  const [mode, setMode] = useState<Mode>("live");
  const [type, setType] = useState("");
  const [balance, setBalance] = useState<Schemas["Balance"] | null>(null);
  const [lines, setLines] = useState<Schemas["BalanceTransactionList"] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [dialog, setDialog] = useState<Kind | null>(null);
  const pages = usePages();
  const token = pages.token;

  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      const [b, l] = await Promise.all([
        data(api.GET("/api/v1/lead_providers/{id}/balance/", { params: { path: { id }, query: { mode } } })),
        data(
          api.GET("/api/v1/lead_providers/{id}/balance_transactions/", {
            params: {
              path: { id },
              query: {
                mode,
                page_size: LINES_PAGE,
                ...(type && { type: type as never }),
                ...(token && { page_token: token }),
              },
            },
          }),
        ),
      ]);
      setBalance(b);
      setLines(l);
      setFailure(null);
    } catch (err) {
      setFailure(reason(err));
    }
  }, [id, mode, type, token]);
  useEffect(() => {
    void load();
  }, [load]);

  if (!record) return null;
  return (
    <Panel title="Money">
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }}>
        <Tabs
          value={mode}
          onChange={(_e, v: Mode) => {
            setMode(v);
            pages.reset();
          }}
          aria-label="Book"
        >
          <Tab value="live" label="Live" />
          <Tab value="test" label="Test" />
        </Tabs>
        <Box sx={{ flex: 1 }} />
        <Button variant="outlined" color="error" onClick={() => setDialog("payout")}>
          Record payout
        </Button>
        <Button variant="outlined" color="error" onClick={() => setDialog("adjustment")}>
          Record adjustment
        </Button>
      </Stack>
      {failure && <Alert severity="error">{failure}</Alert>}
      {balance && <BalanceCards balance={balance} />}
      <Stack direction="row" spacing={2} alignItems="center" sx={{ my: 1 }}>
        <Typography component="h3" variant="subtitle1">
          Ledger
        </Typography>
        <LineTypeFilter
          value={type}
          onChange={(t) => {
            setType(t);
            pages.reset();
          }}
        />
      </Stack>
      {lines && (
        <>
          <LedgerTable lines={lines.results} label={`Ledger lines of ${record.name} (${mode})`} />
          <PageButtons pages={pages} next={lines.next_page_token} what="ledger lines" />
        </>
      )}
      {dialog && (
        <RecordDialog
          kind={dialog}
          open
          provider={{ id: record.id, name: record.name }}
          mode={mode}
          balance={balance}
          onClose={() => setDialog(null)}
          onDone={() => {
            setDialog(null);
            pages.reset();
            void load();
          }}
        />
      )}
    </Panel>
  );
}
