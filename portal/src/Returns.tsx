/**
 * Returns (menu *Returns*, `/portal/returns`): the returns of the provider's leads in the live or
 * test book, newest first, each with its reason, deadline and outcome; a requested one can be
 * contested here, once, before its deadline, with a statement and https evidence links
 * (`GET /api/v1/portal/returns/`, `POST /api/v1/portal/leads/{external_id}/return/contest/`).
 */

import DeleteIcon from "@mui/icons-material/Delete";
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  IconButton,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Title } from "react-admin";
import { PageButtons, usePages } from "../../ui/src/components/money.tsx";
import { EvidenceLinks, ReturnStateChip, reasonWords } from "../../ui/src/components/returns.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { when } from "../../ui/src/format.ts";
import { cents } from "../../ui/src/money.ts";
import { api, data, explain, type Schemas } from "./api.ts";

type Mode = "live" | "test";
type Return = Schemas["ProviderReturn"];

function ContestForm({ r, mode, onDone }: { r: Return; mode: Mode; onDone: () => void }) {
  const [statement, setStatement] = useState("");
  const [consent, setConsent] = useState("");
  const [recording, setRecording] = useState("");
  const [attachments, setAttachments] = useState<{ name: string; url: string }[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const key = r.id;
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const evidence = {
        ...(consent.trim() !== "" && { consent_certificate_url: consent.trim() }),
        ...(recording.trim() !== "" && { recording_url: recording.trim() }),
        attachments: attachments.filter((a) => a.name.trim() !== "" || a.url.trim() !== ""),
      };
      await data(
        api.POST("/api/v1/portal/leads/{external_id}/return/contest/", {
          params: { path: { external_id: r.lead.external_id }, query: { mode } },
          body: { statement, evidence },
        }),
      );
      onDone();
    } catch (err) {
      setError(explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Box component="form" aria-label={`Contest the return of ${r.lead.external_id}`} sx={{ mt: 2 }}>
      <Typography variant="subtitle2" component="h3" gutterBottom>
        Contest this return (until {when(r.contest_deadline)})
      </Typography>
      <Stack spacing={2}>
        <TextField
          id={`statement-${key}`}
          label="Why the lead was good"
          required
          value={statement}
          onChange={(e) => setStatement(e.target.value)}
          multiline
          minRows={3}
          inputProps={{ maxLength: 2000 }}
          helperText={`${statement.length} / 2000`}
        />
        <TextField
          id={`consent-${key}`}
          label="Consent certificate URL (https)"
          type="url"
          value={consent}
          onChange={(e) => setConsent(e.target.value)}
        />
        <TextField
          id={`recording-${key}`}
          label="Call recording URL (https)"
          type="url"
          value={recording}
          onChange={(e) => setRecording(e.target.value)}
        />
        {attachments.map((a, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows are only added and removed at the end or by index
          <Stack key={i} direction={{ xs: "column", sm: "row" }} spacing={1} alignItems={{ sm: "center" }}>
            <TextField
              label={`Attachment ${i + 1} name`}
              value={a.name}
              onChange={(e) =>
                setAttachments((all) => all.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))
              }
            />
            <TextField
              label={`Attachment ${i + 1} URL (https)`}
              type="url"
              value={a.url}
              sx={{ flex: 1 }}
              onChange={(e) =>
                setAttachments((all) => all.map((x, j) => (j === i ? { ...x, url: e.target.value } : x)))
              }
            />
            <IconButton
              aria-label={`Remove attachment ${i + 1}`}
              onClick={() => setAttachments((all) => all.filter((_x, j) => j !== i))}
            >
              <DeleteIcon />
            </IconButton>
          </Stack>
        ))}
        <Box>
          <Button
            size="small"
            disabled={attachments.length >= 10}
            onClick={() => setAttachments((all) => [...all, { name: "", url: "" }])}
          >
            Add an attachment link
          </Button>
        </Box>
        <Typography variant="body2">
          Links are stored as you give them and opened by the broker's people; the service never fetches them.
        </Typography>
        {error && (
          <Alert severity="error" role="alert">
            {error}
          </Alert>
        )}
        <Box>
          <Button variant="contained" disabled={busy || statement.trim() === ""} onClick={() => void submit()}>
            Send contest
          </Button>
        </Box>
      </Stack>
    </Box>
  );
}

function ReturnItem({ r, mode, onDone }: { r: Return; mode: Mode; onDone: () => void }) {
  const [contesting, setContesting] = useState(false);
  const open = r.state === "requested" && new Date(r.contest_deadline).getTime() > Date.now();
  return (
    <Card component="article" variant="outlined" aria-label={`Return of ${r.lead.external_id}`} sx={{ mb: 2 }}>
      <CardContent>
        <Stack direction="row" spacing={1} alignItems="center" flexWrap="wrap" useFlexGap>
          <Typography component="h2" variant="h6" sx={{ overflowWrap: "anywhere" }}>
            {r.lead.external_id}
          </Typography>
          <ReturnStateChip state={r.state} />
        </Stack>
        <Typography variant="body2">
          Order {r.lead.order_number} · {cents(r.amount_cents, r.currency)} · filed {when(r.requested_at)}
        </Typography>
        <Typography variant="body1" sx={{ mt: 1 }}>
          {reasonWords(r.reason)}
          {r.note ? ` — “${r.note}”` : ""}
        </Typography>
        {r.contest && (
          <Box sx={{ mt: 1 }}>
            <Typography variant="subtitle2" component="h3">
              Your contest ({when(r.contest.contested_at)})
            </Typography>
            <Typography variant="body2" sx={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {r.contest.statement}
            </Typography>
            <EvidenceLinks evidence={r.contest.evidence} />
          </Box>
        )}
        {r.decided_at && (
          <Typography variant="body2" sx={{ mt: 1 }}>
            {r.state === "withdrawn" ? "Withdrawn" : "Decided"} {when(r.decided_at)}
            {r.decision_note ? `: ${r.decision_note}` : ""}
          </Typography>
        )}
        {open && !contesting && (
          <Button sx={{ mt: 1 }} variant="outlined" onClick={() => setContesting(true)}>
            Contest
          </Button>
        )}
        {open && contesting && <ContestForm r={r} mode={mode} onDone={onDone} />}
      </CardContent>
    </Card>
  );
}

export function ReturnsPage() {
  const [mode, setMode] = useState<Mode>("live");
  const pages = usePages();
  const token = pages.token;
  const client = useQueryClient();
  const returns = useQuery({
    queryKey: ["portal-returns", mode, token],
    queryFn: () =>
      data(
        api.GET("/api/v1/portal/returns/", {
          params: { query: { mode, page_size: 20, ...(token && { page_token: token }) } },
        }),
      ),
  });
  const page = returns.data;
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Returns" />
      <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }} sx={{ mb: 1 }}>
        <Typography component="h1" variant="h5">
          Returns
        </Typography>
        <TextField
          fullWidth={false}
          select
          size="small"
          label="Mode"
          value={mode}
          onChange={(e) => {
            setMode(e.target.value as Mode);
            pages.reset();
          }}
          sx={{ minWidth: 160 }}
        >
          <MenuItem value="live">Live</MenuItem>
          <MenuItem value="test">Test (sandbox)</MenuItem>
        </TextField>
      </Stack>
      <Typography variant="body2" gutterBottom>
        Leads the broker returned. You may contest a return once, before its deadline; an approved return takes the
        lead's price off your balance, a denied one changes nothing.
      </Typography>
      <TimeZoneNote />
      {returns.isError && <Alert severity="error">{explain(returns.error)}</Alert>}
      {page && page.results.length === 0 && <Typography>No returns.</Typography>}
      {page?.results.map((r) => (
        <ReturnItem
          key={r.id}
          r={r}
          mode={mode}
          onDone={() => void client.invalidateQueries({ queryKey: ["portal-returns"] })}
        />
      ))}
      {page && <PageButtons pages={pages} next={page.next_page_token} what="returns" />}
    </Box>
  );
}
