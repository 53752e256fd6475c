/**
 * The provider's webhook, run by its own people: the URL (the administrators' checks apply), the
 * signing secret (shown on request) and its rotation, a test event with the answer it got, and
 * the deliveries with each attempt, replay and retry.
 */
import {
  Alert,
  Box,
  Button,
  Chip,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  Stack,
  TableCell,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Title } from "react-admin";
import { EVENT_TYPE_OPTIONS } from "../../src/events/event-type-options.ts";
import { ConfirmDialog } from "../../ui/src/components/ConfirmDialog.tsx";
import { TestChip } from "../../ui/src/components/chips.tsx";
import { DataTable } from "../../ui/src/components/DataTable.tsx";
import { describeEventTypes, EventTypesChoice } from "../../ui/src/components/EventTypesChoice.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { relative, resendLabel, when, yourTime } from "../../ui/src/format.ts";
import { api, data, explain, type Schemas } from "./api.ts";

type Delivery = Schemas["WebhookDelivery"];
const PAGE = 10;

/** A delivery's next attempt, its attempts and the body sent (or to be sent). */
function Attempts({ id, onClose }: { id: number; onClose: () => void }) {
  const detail = useQuery({
    queryKey: ["delivery", id],
    queryFn: () =>
      data(api.GET("/api/v1/portal/webhook/deliveries/{delivery_id}/", { params: { path: { delivery_id: id } } })),
  });
  return (
    <Dialog open onClose={onClose} aria-labelledby="attempts-title" fullWidth>
      <DialogTitle id="attempts-title">Delivery {id}</DialogTitle>
      <DialogContent>
        {detail.data?.state === "pending" && (
          <Typography gutterBottom data-testid="next-attempt">
            Next attempt: {when(detail.data.next_attempt_at)}
          </Typography>
        )}
        <Typography component="h3" variant="subtitle1">
          Attempts
        </Typography>
        {detail.data && detail.data.attempt_log.length === 0 && <Typography>No attempt yet.</Typography>}
        <ol>
          {detail.data?.attempt_log.map((a) => (
            <li key={a.attempt}>
              {when(a.at)}: {a.status_code ?? "no answer"} in {a.latency_ms} ms{a.error ? ` — ${a.error}` : ""}
            </li>
          ))}
        </ol>
        <Typography component="h3" variant="subtitle1">
          {detail.data?.state === "pending" ? "Body to be sent" : "Body sent"}
        </Typography>
        {detail.data && detail.data.payload === null && (
          <Typography>The event is no longer kept, so its body cannot be shown.</Typography>
        )}
        {detail.data?.payload && (
          <Box
            component="pre"
            tabIndex={0}
            aria-label="Body of the delivery"
            data-testid="delivery-payload"
            sx={{
              maxHeight: 320,
              overflow: "auto",
              p: 1,
              bgcolor: "action.hover",
              fontSize: 12,
              whiteSpace: "pre-wrap",
            }}
          >
            {JSON.stringify(detail.data.payload, null, 2)}
          </Box>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}

function Deliveries() {
  const client = useQueryClient();
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const token = tokens[tokens.length - 1];
  const page = useQuery({
    queryKey: ["deliveries", token],
    queryFn: () =>
      data(
        api.GET("/api/v1/portal/webhook/deliveries/", { params: { query: { page_size: PAGE, page_token: token } } }),
      ),
  });
  const [attempts, setAttempts] = useState<number | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  async function replay(d: Delivery) {
    try {
      await data(
        api.POST("/api/v1/portal/webhook/deliveries/{delivery_id}/replay/", {
          params: { path: { delivery_id: d.id } },
        }),
      );
      setMessage({
        ok: true,
        text: d.state === "delivered" ? `Delivery ${d.id} queued again.` : `Delivery ${d.id} is due now.`,
      });
      await client.invalidateQueries({ queryKey: ["deliveries"] });
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    }
  }

  return (
    <Box sx={{ mt: 3 }}>
      <Typography component="h2" variant="h6" gutterBottom>
        Deliveries
      </Typography>
      {message && (
        <Alert severity={message.ok ? "success" : "error"} onClose={() => setMessage(null)} sx={{ mb: 1 }}>
          {message.text}
        </Alert>
      )}
      {page.data && page.data.test_events.length > 0 && (
        <Typography variant="body2" gutterBottom>
          Latest test events:{" "}
          {page.data.test_events
            .slice(0, 3)
            .map((t) => `${relative(t.at)} ${t.error === null ? `delivered (${t.status_code})` : `failed: ${t.error}`}`)
            .join("; ")}
        </Typography>
      )}
      <DataTable
        label="Webhook deliveries"
        region
        columns={[
          "Event",
          "Lead",
          "State",
          "Attempts",
          "Last answer",
          yourTime("Created"),
          yourTime("Next attempt"),
          "Actions",
        ]}
      >
        {page.data?.results.length === 0 && (
          <TableRow>
            <TableCell colSpan={8}>No deliveries yet.</TableCell>
          </TableRow>
        )}
        {page.data?.results.map((d) => (
          <TableRow key={d.id}>
            <TableCell>
              {d.type} {!d.livemode && <TestChip />}
            </TableCell>
            <TableCell>{d.order_number ?? "—"}</TableCell>
            <TableCell>
              <Chip size="small" label={d.state} />
            </TableCell>
            <TableCell>{d.attempts}</TableCell>
            <TableCell>{d.last_error ?? d.last_status_code ?? "—"}</TableCell>
            <TableCell>{when(d.created_at)}</TableCell>
            <TableCell>{d.state === "pending" ? when(d.next_attempt_at) : "—"}</TableCell>
            <TableCell>
              <Stack direction="row" spacing={1}>
                <Button size="small" onClick={() => setAttempts(d.id)} aria-label={`Details of delivery ${d.id}`}>
                  Details
                </Button>
                <Button size="small" onClick={() => replay(d)}>
                  {resendLabel(d.state)}
                </Button>
              </Stack>
            </TableCell>
          </TableRow>
        ))}
      </DataTable>
      <Stack direction="row" spacing={1} justifyContent="flex-end" sx={{ p: 1 }}>
        <Button size="small" disabled={tokens.length === 1} onClick={() => setTokens(tokens.slice(0, -1))}>
          Previous page
        </Button>
        <Button
          size="small"
          disabled={!page.data?.next_page_token}
          onClick={() => setTokens([...tokens, page.data?.next_page_token ?? undefined])}
        >
          Next page
        </Button>
      </Stack>
      {attempts !== null && <Attempts id={attempts} onClose={() => setAttempts(null)} />}
    </Box>
  );
}

export function WebhooksPage() {
  const client = useQueryClient();
  const endpoint = useQuery({ queryKey: ["webhook"], queryFn: () => data(api.GET("/api/v1/portal/webhook/")) });
  // What the person typed; null: the field shows the saved URL (loading it never overwrites typing).
  const [typed, setTyped] = useState<string | null>(null);
  const url = typed ?? endpoint.data?.url ?? "";
  const [showSecret, setShowSecret] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [rotating, setRotating] = useState(false);
  const [clearing, setClearing] = useState(false);
  // The event types chosen; undefined: the saved ones.
  const [picked, setPicked] = useState<string[] | null | undefined>(undefined);
  const eventTypes = picked === undefined ? (endpoint.data?.event_types ?? null) : picked;
  const [busy, setBusy] = useState(false);

  async function act(what: () => Promise<string>) {
    setBusy(true);
    setMessage(null);
    try {
      setMessage({ ok: true, text: await what() });
      await client.invalidateQueries({ queryKey: ["webhook"] });
      await client.invalidateQueries({ queryKey: ["deliveries"] });
    } catch (err) {
      setMessage({ ok: false, text: explain(err) });
    } finally {
      setBusy(false);
    }
  }

  const store = () =>
    act(async () => {
      setClearing(false);
      const cleared = url.trim() === "";
      await data(
        api.PUT("/api/v1/portal/webhook/", {
          body: { webhook_url: cleared ? null : url.trim(), webhook_event_types: eventTypes },
        }),
      );
      setTyped(null);
      setPicked(undefined);
      return cleared
        ? "The webhook URL is cleared: no events are sent."
        : `The webhook is saved. Events sent: ${describeEventTypes(EVENT_TYPE_OPTIONS, eventTypes)}.`;
    });
  const save = (e: FormEvent) => {
    e.preventDefault();
    // Clearing a saved URL stops every event: asked first.
    if (url.trim() === "" && endpoint.data?.url) setClearing(true);
    else void store();
  };
  const test = () =>
    act(async () => {
      const r = await data(api.POST("/api/v1/portal/webhook/test/"));
      if (!r.delivered) throw new Error(`The test event was not delivered: ${r.error ?? r.status_code}`);
      return `Test event ${r.event_id} delivered: your endpoint answered ${r.status_code} in ${r.latency_ms} ms.`;
    });
  const rotate = () =>
    act(async () => {
      setRotating(false);
      const r = await data(api.POST("/api/v1/portal/webhook/rotate_secret/", { body: { overlap_seconds: 86_400 } }));
      setShowSecret(true);
      return `A new signing secret is in use; the previous one also signs until ${when(r.previous_secret_expires_at)}.`;
    });

  const e = endpoint.data;
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Webhooks" />
      <Typography component="h1" variant="h5" gutterBottom>
        Webhooks
      </Typography>
      <Typography variant="body2" gutterBottom>
        Each lead event is POSTed to this URL, signed (Standard Webhooks: webhook-id, webhook-timestamp,
        webhook-signature) with the secret below.
      </Typography>
      <TimeZoneNote />
      {message && (
        <Alert severity={message.ok ? "success" : "error"} sx={{ my: 1 }} role={message.ok ? "status" : "alert"}>
          {message.text}
        </Alert>
      )}
      {e && !e.enabled && e.url && <Alert severity="warning">Sending is disabled: {e.disabled_reason}</Alert>}
      <Box component="form" onSubmit={save} sx={{ my: 2 }}>
        <Stack direction="row" spacing={1} flexWrap="wrap" useFlexGap>
          <TextField
            label="Webhook URL"
            value={url}
            onChange={(ev) => setTyped(ev.target.value)}
            placeholder="https://hooks.example.com/lead-provider"
            sx={{ flex: "1 1 320px" }}
          />
          <Button type="submit" variant="contained" disabled={busy}>
            Save
          </Button>
          <Button variant="outlined" disabled={busy || !e?.url} onClick={test}>
            Send test event
          </Button>
        </Stack>
        {e && <EventTypesChoice options={EVENT_TYPE_OPTIONS} value={eventTypes} onChange={setPicked} disabled={busy} />}
        <Typography variant="body2">
          Events not chosen are not sent; they stay in your events feed. A change applies to events that happen after
          you save it.
        </Typography>
      </Box>
      <ConfirmDialog
        open={clearing}
        title="Clear the webhook URL?"
        confirm="Clear URL"
        danger
        onConfirm={() => void store()}
        onClose={() => setClearing(false)}
      >
        With no URL, no events are sent to you at all, whichever events are chosen, until you set a URL again. Events
        that happen meanwhile stay in your events feed.
      </ConfirmDialog>
      {e?.secret && (
        <Stack direction="row" spacing={1} alignItems="center" flexWrap="wrap" useFlexGap>
          <Typography variant="body2" sx={{ overflowWrap: "anywhere" }}>
            Signing secret:{" "}
            <code data-testid="webhook-secret">{showSecret ? e.secret : `${e.secret.slice(0, 10)}…`}</code>
          </Typography>
          <Button size="small" onClick={() => setShowSecret(!showSecret)}>
            {showSecret ? "Hide" : "Show"} secret
          </Button>
          <Button size="small" onClick={() => setRotating(true)}>
            Rotate secret
          </Button>
          {e.secret_rotated_at && <Typography variant="body2">Last rotated {when(e.secret_rotated_at)}</Typography>}
        </Stack>
      )}
      <ConfirmDialog
        open={rotating}
        title="Rotate the signing secret?"
        confirm="Rotate"
        onConfirm={rotate}
        onClose={() => setRotating(false)}
      >
        A new secret signs every delivery from now on. The current one keeps signing too for 24 hours, so you can switch
        your receiver without dropping an event.
      </ConfirmDialog>
      <Deliveries />
    </Box>
  );
}
