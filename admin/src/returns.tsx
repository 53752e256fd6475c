/**
 * Returns in the back office: the queue of returns (menu *Returns*, soonest contest deadline
 * first) with each return's lead, reason, the provider's statement and evidence side by side and
 * Approve / Deny with a note; and, on a lead's page, its return or a Return button
 * (`/api/v1/admin/returns/…`, `POST /api/v1/admin/leads/{lead_id}/returns/`).
 */
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Grid,
  MenuItem,
  Link as MuiLink,
  Stack,
  Tab,
  Tabs,
  TextField,
  Typography,
} from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Title, useAuthState, useNotify, useRecordContext, useRefresh } from "react-admin";
import { Link } from "react-router-dom";
import { PageButtons, usePages } from "../../ui/src/components/money.tsx";
import { EvidenceLinks, RETURN_REASON_WORDS, ReturnStateChip, reasonWords } from "../../ui/src/components/returns.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { cents } from "../../ui/src/money.ts";
import { api, data, type Schemas } from "./api.ts";

type Return = Schemas["Return"];
const PAGE = 20;
const VIEWS = [
  ["contested", "To decide"],
  ["requested", "Awaiting the provider"],
  ["all", "All"],
] as const;
type View = (typeof VIEWS)[number][0];

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Approve or deny a contested return, with a note the provider reads. */
function Decision({ r, onDone }: { r: Return; onDone: () => void }) {
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const notify = useNotify();
  const decide = async (decision: "approve" | "deny") => {
    setBusy(true);
    setError(null);
    try {
      await data(
        api.POST("/api/v1/admin/returns/{return_id}/decide/", {
          params: { path: { return_id: r.id } },
          body: { decision, ...(note.trim() !== "" && { note: note.trim() }) },
        }),
      );
      notify(decision === "approve" ? "Return approved; the purchase is reversed" : "Return denied", {
        type: "success",
      });
      onDone();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const id = `decision-note-${r.id}`;
  return (
    <Stack spacing={1} sx={{ mt: 2 }}>
      <TextField
        id={id}
        label="Decision note (the provider reads it)"
        value={note}
        onChange={(e) => setNote(e.target.value)}
        multiline
        minRows={2}
        inputProps={{ maxLength: 1000 }}
      />
      {error && (
        <Alert severity="error" role="alert">
          {error}
        </Alert>
      )}
      <Stack direction="row" spacing={1}>
        <Button variant="contained" disabled={busy} onClick={() => void decide("approve")}>
          Approve return
        </Button>
        <Button variant="outlined" color="error" disabled={busy} onClick={() => void decide("deny")}>
          Deny return
        </Button>
      </Stack>
    </Stack>
  );
}

function ReturnCard({ r, onDone }: { r: Return; onDone: () => void }) {
  return (
    <Card component="article" variant="outlined" aria-label={`Return of lead ${r.lead.order_number}`} sx={{ mb: 2 }}>
      <CardContent>
        <Grid container spacing={2}>
          <Grid size={{ xs: 12, md: 6 }}>
            <Stack direction="row" spacing={1} alignItems="center" flexWrap="wrap" useFlexGap>
              <Typography component="h2" variant="h6">
                <MuiLink component={Link} to={`/leads/${r.lead.id}/show`}>
                  {r.lead.order_number}
                </MuiLink>
              </Typography>
              <ReturnStateChip state={r.state} />
              {!r.livemode && <Typography variant="body2">(test)</Typography>}
            </Stack>
            <Typography variant="body2">
              Provider{" "}
              <MuiLink component={Link} to={`/providers/${r.provider_id}/show`}>
                {r.provider_id}
              </MuiLink>{" "}
              · external id {r.lead.external_id} · {cents(r.amount_cents, r.currency)}
            </Typography>
            <Typography variant="subtitle2" component="h3" sx={{ mt: 1 }}>
              Reason
            </Typography>
            <Typography variant="body1">{reasonWords(r.reason)}</Typography>
            {r.note && <Typography variant="body2">“{r.note}”</Typography>}
            <Typography variant="body2" sx={{ mt: 1 }}>
              Filed {when(r.requested_at)} · contest deadline {when(r.contest_deadline)}
            </Typography>
            {r.decided_at && (
              <Typography variant="body2">
                Decided {when(r.decided_at)}
                {r.decision_note ? `: ${r.decision_note}` : ""}
              </Typography>
            )}
          </Grid>
          <Grid size={{ xs: 12, md: 6 }}>
            <Typography variant="subtitle2" component="h3">
              The provider's case
            </Typography>
            {r.contest ? (
              <>
                <Typography variant="body1" sx={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
                  {r.contest.statement}
                </Typography>
                <Typography variant="caption" component="p">
                  Contested {when(r.contest.contested_at)}
                </Typography>
                <Typography variant="subtitle2" component="h3" sx={{ mt: 1 }}>
                  Evidence
                </Typography>
                <EvidenceLinks evidence={r.contest.evidence} />
              </>
            ) : (
              <Typography variant="body2">Not contested.</Typography>
            )}
          </Grid>
        </Grid>
        {r.state === "contested" && <Decision r={r} onDone={onDone} />}
      </CardContent>
    </Card>
  );
}

export function ReturnsPage() {
  const { authenticated } = useAuthState();
  const [view, setView] = useState<View>("contested");
  const pages = usePages();
  const token = pages.token;
  const client = useQueryClient();
  const returns = useQuery({
    queryKey: ["returns", view, token],
    enabled: authenticated === true,
    queryFn: () =>
      data(
        api.GET("/api/v1/admin/returns/", {
          params: {
            query: { page_size: PAGE, ...(view !== "all" && { state: view }), ...(token && { page_token: token }) },
          },
        }),
      ),
  });
  const page = returns.data;
  return (
    <Box sx={{ py: 2 }}>
      <Title title="Returns" />
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }} sx={{ mb: 1 }}>
        <Typography component="h1" variant="h5">
          Returns
        </Typography>
        <Tabs
          value={view}
          onChange={(_e, v: View) => {
            setView(v);
            pages.reset();
          }}
          aria-label="Which returns"
          variant="scrollable"
        >
          {VIEWS.map(([value, label]) => (
            <Tab key={value} value={value} label={label} />
          ))}
        </Tabs>
      </Stack>
      <Typography variant="body2" gutterBottom>
        Soonest contest deadline first. A return the provider does not contest by its deadline is approved by itself; a
        contested one waits for your decision. Approving reverses the lead's purchase.
      </Typography>
      <TimeZoneNote />
      {returns.isError && <Alert severity="error">{message(returns.error)}</Alert>}
      {page && page.results.length === 0 && <Typography>No returns here.</Typography>}
      {page?.results.map((r) => (
        <ReturnCard key={r.id} r={r} onDone={() => void client.invalidateQueries({ queryKey: ["returns"] })} />
      ))}
      {page && <PageButtons pages={pages} next={page.next_page_token} what="returns" />}
    </Box>
  );
}

/** On a lead's page: its return (withdraw while open), or a Return button for a billable lead. */
export function LeadReturnPanel() {
  const record = useRecordContext();
  const refresh = useRefresh();
  const notify = useNotify();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("invalid_contact");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!record) return null;
  const ret = record.return as Schemas["LeadReturnStatus"] | null | undefined;
  const file = async () => {
    setBusy(true);
    setError(null);
    try {
      await data(
        api.POST("/api/v1/admin/leads/{lead_id}/returns/", {
          params: { path: { lead_id: Number(record.id) } },
          body: {
            reason: reason as Schemas["ReturnCreate"]["reason"],
            ...(note.trim() !== "" && { note: note.trim() }),
          },
        }),
      );
      notify("Return filed; the provider is notified", { type: "success" });
      setOpen(false);
      refresh();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const withdraw = async () => {
    if (!ret) return;
    try {
      await data(api.POST("/api/v1/admin/returns/{return_id}/withdraw/", { params: { path: { return_id: ret.id } } }));
      notify("Return withdrawn", { type: "success" });
      refresh();
    } catch (err) {
      notify(message(err), { type: "error" });
    }
  };
  if (ret) {
    return (
      <Stack direction="row" spacing={1} alignItems="center" flexWrap="wrap" useFlexGap sx={{ p: 1 }}>
        <Typography variant="body1">Returned ({reasonWords(ret.reason)}):</Typography>
        <ReturnStateChip state={ret.state} />
        <MuiLink component={Link} to="/returns">
          Returns queue
        </MuiLink>
        {(ret.state === "requested" || ret.state === "contested") && (
          <Button size="small" onClick={() => void withdraw()}>
            Withdraw return
          </Button>
        )}
      </Stack>
    );
  }
  if (!record.billable) return null;
  return (
    <Box sx={{ p: 1 }}>
      <Button variant="outlined" color="error" onClick={() => setOpen(true)}>
        Return this lead
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} aria-labelledby="return-title" fullWidth maxWidth="sm">
        <DialogTitle id="return-title">Return {String(record.order_number)}?</DialogTitle>
        <DialogContent>
          <Stack spacing={2} sx={{ mt: 1 }}>
            <TextField select label="Reason" value={reason} onChange={(e) => setReason(e.target.value)}>
              {Object.entries(RETURN_REASON_WORDS).map(([code, words]) => (
                <MenuItem key={code} value={code}>
                  {words}
                </MenuItem>
              ))}
            </TextField>
            <TextField
              label={reason === "other" ? "Note (required for Other)" : "Note (optional)"}
              value={note}
              onChange={(e) => setNote(e.target.value)}
              multiline
              minRows={2}
              inputProps={{ maxLength: 1000 }}
            />
            <Typography variant="body2">
              The provider is told (a <code>lead.return_requested</code> event) and may contest it before its deadline.
            </Typography>
            {error && (
              <Alert severity="error" role="alert">
                {error}
              </Alert>
            )}
          </Stack>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          <Button variant="contained" color="error" disabled={busy} onClick={() => void file()}>
            File return
          </Button>
        </DialogActions>
      </Dialog>
    </Box>
  );
}
