/**
 * The provider detail page's panels. Revealing a key or a webhook secret reads it from the
 * Management API, which audits the view (the specification's "view again in the back office").
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
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { useNotify, useRecordContext, useRefresh, useUpdate } from "react-admin";
import { Link } from "react-router-dom";
import { ConfirmDialog } from "../../ui/src/components/ConfirmDialog.tsx";
import { TestChip } from "../../ui/src/components/chips.tsx";
import { Scrolls } from "../../ui/src/components/Scrolls.tsx";
import { num, relative, span, when } from "../../ui/src/format.ts";
import { api, data, type Schemas } from "./api.ts";

/** A length of time typed in minutes, hours or days, as seconds; the unit a person thinks in. */
const UNITS = [
  { id: "minutes", seconds: 60 },
  { id: "hours", seconds: 3600 },
  { id: "days", seconds: 86_400 },
] as const;
type Unit = (typeof UNITS)[number]["id"];

function Duration(props: {
  label: string;
  amount: string;
  unit: Unit;
  max: number;
  onChange: (amount: string, unit: Unit) => void;
}) {
  const seconds = Number(props.amount) * (UNITS.find((u) => u.id === props.unit)?.seconds ?? 1);
  const bad = !Number.isFinite(seconds) || seconds < 0 || seconds > props.max || !/^\d+$/.test(props.amount);
  return (
    <Stack direction="row" spacing={1} sx={{ mt: 1 }}>
      <TextField
        label={props.label}
        type="number"
        value={props.amount}
        onChange={(e) => props.onChange(e.target.value, props.unit)}
        error={bad}
        helperText={bad ? `a whole number, at most ${span(props.max)}` : " "}
        slotProps={{ htmlInput: { min: 0 } }}
        sx={{ flex: 1 }}
      />
      <TextField
        select
        label="Unit"
        value={props.unit}
        onChange={(e) => props.onChange(props.amount, e.target.value as Unit)}
        sx={{ width: 130 }}
      >
        {UNITS.map((u) => (
          <MenuItem key={u.id} value={u.id}>
            {u.id}
          </MenuItem>
        ))}
      </TextField>
    </Stack>
  );
}

const secondsOf = (amount: string, unit: Unit) =>
  /^\d+$/.test(amount) ? Number(amount) * (UNITS.find((u) => u.id === unit)?.seconds ?? 1) : Number.NaN;
const MAX_GRACE = 7 * 86_400;

type Provider = Schemas["Provider"];

export function Panel({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Card component="section" aria-label={title} sx={{ m: 2 }} variant="outlined">
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>
          {title}
        </Typography>
        {children}
      </CardContent>
    </Card>
  );
}

function Secret({ label, value }: { label: string; value: string }) {
  const notify = useNotify();
  return (
    <Stack direction={{ xs: "column", sm: "row" }} spacing={1} alignItems={{ sm: "center" }} sx={{ my: 1 }}>
      <Box
        component="code"
        aria-label={label}
        sx={{ fontFamily: "monospace", wordBreak: "break-all", bgcolor: "grey.100", p: 1, borderRadius: 1 }}
      >
        {value}
      </Box>
      <Button
        size="small"
        onClick={async () => {
          await navigator.clipboard.writeText(value);
          notify(`${label} copied`, { type: "info" });
        }}
      >
        Copy {label.toLowerCase()}
      </Button>
    </Stack>
  );
}

/** Error text of a failed call, as the service worded it. */
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function KeyPanel({ mode }: { mode: "live" | "test" }) {
  const record = useRecordContext<Provider>();
  const notify = useNotify();
  const refresh = useRefresh();
  const [value, setValue] = useState<string | null>(null);
  const [rotating, setRotating] = useState(false);
  const [revoking, setRevoking] = useState(false);
  // The current key keeps working for an hour by default, so a rotation never breaks an integration.
  const [grace, setGrace] = useState<{ amount: string; unit: Unit }>({ amount: "1", unit: "hours" });
  if (!record) return null;
  const summary = mode === "live" ? record.api_key : record.test_api_key;
  const title = mode === "live" ? "Live API key" : "Test API key (sandbox)";

  const reveal = async () => {
    try {
      // Exactly the key asked for (one audited mode), never the provider's other key.
      const revealed = await data(
        api.GET("/api/v1/lead_providers/{id}/api_key/", { params: { path: { id: record.id }, query: { mode } } }),
      );
      setValue(revealed.api_key);
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  };
  const graceSeconds = secondsOf(grace.amount, grace.unit);
  const graceOk = Number.isFinite(graceSeconds) && graceSeconds >= 0 && graceSeconds <= MAX_GRACE;
  const revoke = async () => {
    try {
      await data(
        api.POST("/api/v1/lead_providers/{id}/revoke_api_key/", {
          params: { path: { id: record.id } },
          body: { mode },
        }),
      );
      setValue(null);
      setRevoking(false);
      notify(`The ${mode} key is revoked: requests with it are refused`, { type: "success" });
      refresh();
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  };
  const issue = async () => {
    try {
      const seconds = summary ? graceSeconds : 0;
      const issued = await data(
        api.POST("/api/v1/lead_providers/{id}/generate_api_key/", {
          params: { path: { id: record.id } },
          body: { mode, ...(seconds > 0 && { previous_key_grace_seconds: seconds }) },
        }),
      );
      setValue(issued.api_key);
      setRotating(false);
      notify(
        summary && seconds > 0
          ? `New ${mode} key issued; the old one works ${span(seconds)} more`
          : `New ${mode} key issued`,
        { type: "success" },
      );
      refresh();
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  };

  return (
    <Panel title={title}>
      {summary ? (
        <>
          <Typography variant="body2">
            Key <code>{summary.masked}</code>, issued {when(summary.created_at)}
            {summary.last_used_at ? `, last used ${relative(summary.last_used_at)}` : ", never used"}
            {summary.expires_at ? `, expires ${relative(summary.expires_at)}` : ""}
            {summary.previous_key_expires_at
              ? `; the previous key works until ${when(summary.previous_key_expires_at)} (${relative(summary.previous_key_expires_at)})`
              : ""}
            .
          </Typography>
          {value ? <Secret label={`${mode === "live" ? "Live" : "Test"} key`} value={value} /> : null}
        </>
      ) : (
        <Typography variant="body2">No {mode} key has been issued.</Typography>
      )}
      <Stack direction="row" spacing={1} sx={{ mt: 1 }} flexWrap="wrap" useFlexGap>
        {summary && !value && (
          <Button variant="outlined" onClick={reveal}>
            Reveal {mode} key
          </Button>
        )}
        <Button variant="outlined" onClick={() => (summary ? setRotating(true) : void issue())}>
          {summary ? `Rotate ${mode} key` : `Generate ${mode} key`}
        </Button>
        {summary && (
          <Button variant="outlined" color="error" onClick={() => setRevoking(true)}>
            Revoke {mode} key
          </Button>
        )}
      </Stack>
      <ConfirmDialog
        open={revoking}
        title={`Revoke the ${mode} key?`}
        confirm={`Revoke ${mode} key`}
        danger
        onClose={() => setRevoking(false)}
        onConfirm={() => void revoke()}
      >
        Requests with the {mode} key (and a previous key still in its grace period) are refused at once with 401. The
        other key is untouched. Nothing is issued in its place: generate a new key to let the provider in again.
      </ConfirmDialog>
      <Dialog open={rotating} onClose={() => setRotating(false)} aria-labelledby={`rotate-${mode}-title`}>
        <DialogTitle id={`rotate-${mode}-title`}>Rotate the {mode} key</DialogTitle>
        <DialogContent>
          <Typography variant="body2" gutterBottom>
            A new key is issued at once. The current key stops at once, or after the grace period, so the provider can
            switch without failed requests.
          </Typography>
          <Duration
            label="The current key keeps working for"
            amount={grace.amount}
            unit={grace.unit}
            max={MAX_GRACE}
            onChange={(amount, unit) => setGrace({ amount, unit })}
          />
          <Typography variant="body2">
            {graceOk && graceSeconds === 0
              ? "0: the current key stops at once."
              : graceOk
                ? `The current key stops ${span(graceSeconds)} after the rotation.`
                : "Rotate waits for a whole number of minutes, hours or days, at most 7 days."}
          </Typography>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setRotating(false)}>Cancel</Button>
          <Button variant="contained" onClick={issue} disabled={!graceOk}>
            Rotate
          </Button>
        </DialogActions>
      </Dialog>
    </Panel>
  );
}

type Usage = Schemas["ProviderUsage"];

export function UsagePanel() {
  const record = useRecordContext<Provider>();
  const [usage, setUsage] = useState<Usage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = record?.id;
  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      setUsage(await data(api.GET("/api/v1/lead_providers/{id}/usage/", { params: { path: { id } } })));
      setError(null);
    } catch (err) {
      setError(reason(err));
    }
  }, [id]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 5000);
    return () => clearInterval(timer);
  }, [load]);
  const line = (w: Schemas["WindowUsage"]) =>
    `${w.used === null ? "?" : num(w.used)} of ${num(w.limit)} (resets in ${span(w.reset_seconds)})`;
  return (
    <Panel title="Usage now">
      {error && <Alert severity="error">{error}</Alert>}
      {!usage && !error && <Typography variant="body2">Loading…</Typography>}
      {usage && (
        <Scrolls>
          <Table size="small" aria-label="Requests against the limits">
            <TableHead>
              <TableRow>
                <TableCell>Key</TableCell>
                <TableCell>This minute</TableCell>
                <TableCell>Today (UTC)</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              <TableRow>
                <TableCell>Live</TableCell>
                <TableCell>{line(usage.live.minute)}</TableCell>
                <TableCell>{line(usage.live.day)}</TableCell>
              </TableRow>
              <TableRow>
                <TableCell>Test</TableCell>
                <TableCell>{line(usage.test.minute)}</TableCell>
                <TableCell>{line(usage.test.day)}</TableCell>
              </TableRow>
            </TableBody>
          </Table>
        </Scrolls>
      )}
    </Panel>
  );
}

type Endpoint = Schemas["WebhookEndpoint"];
type Delivery = Schemas["WebhookDelivery"];

const DELIVERY_PAGE = 10;
type TestEvent = Schemas["WebhookAttempt"];
type DeliveryDetail = Schemas["WebhookDeliveryDetail"];

/** A delivery's last answer in words. */
const answered = (d: { last_error: string | null; last_status_code: number | null }) =>
  d.last_error ?? (d.last_status_code !== null ? `HTTP ${d.last_status_code}` : "—");

/** One delivery's attempts: status, latency and error of each. */
function DeliveryDialog({ detail, onClose }: { detail: DeliveryDetail | null; onClose: () => void }) {
  return (
    <Dialog open={detail !== null} onClose={onClose} aria-labelledby="delivery-title" fullWidth maxWidth="md">
      <DialogTitle id="delivery-title">Delivery {detail?.id}</DialogTitle>
      <DialogContent>
        {detail && (
          <>
            <Typography variant="body2" gutterBottom>
              {detail.type} · {detail.state} · event <code>{detail.event_id}</code>
              {detail.order_number ? ` · lead ${detail.order_number}` : ""}
              {detail.next_attempt_at ? ` · next attempt ${relative(detail.next_attempt_at)}` : ""}
            </Typography>
            {detail.attempt_log.length === 0 ? (
              <Typography variant="body2">No attempt yet.</Typography>
            ) : (
              <Scrolls>
                <Table size="small" aria-label={`Attempts of delivery ${detail.id}`}>
                  <TableHead>
                    <TableRow>
                      <TableCell>Attempt</TableCell>
                      <TableCell>When</TableCell>
                      <TableCell>Answer</TableCell>
                      <TableCell>Latency</TableCell>
                    </TableRow>
                  </TableHead>
                  <TableBody>
                    {detail.attempt_log.map((a) => (
                      <TableRow key={`${a.attempt}-${a.at}`}>
                        <TableCell>{a.attempt}</TableCell>
                        <TableCell>{when(a.at)}</TableCell>
                        <TableCell>{a.error ?? `HTTP ${a.status_code}`}</TableCell>
                        <TableCell>{num(a.latency_ms)} ms</TableCell>
                      </TableRow>
                    ))}
                  </TableBody>
                </Table>
              </Scrolls>
            )}
          </>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Close</Button>
      </DialogActions>
    </Dialog>
  );
}

export function WebhookPanel() {
  const record = useRecordContext<Provider>();
  const notify = useNotify();
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [testEvents, setTestEvents] = useState<TestEvent[]>([]);
  // The page tokens of the pages before this one (cursor paging: back is a stack).
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const [nextToken, setNextToken] = useState<string | null>(null);
  const [detail, setDetail] = useState<DeliveryDetail | null>(null);
  const [rotating, setRotating] = useState(false);
  const [overlap, setOverlap] = useState<{ amount: string; unit: Unit }>({ amount: "24", unit: "hours" });
  const [test, setTest] = useState<Schemas["WebhookTestResult"] | null>(null);
  const id = record?.id;
  const token = tokens[tokens.length - 1];
  const loadDeliveries = useCallback(async () => {
    if (id === undefined) return;
    try {
      const page = await data(
        api.GET("/api/v1/lead_providers/{id}/webhook_deliveries/", {
          params: { path: { id }, query: { page_size: DELIVERY_PAGE, ...(token && { page_token: token }) } },
        }),
      );
      setDeliveries(page.results);
      if (token === undefined) setTestEvents(page.test_events);
      setNextToken(page.next_page_token);
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  }, [id, notify, token]);
  useEffect(() => {
    void loadDeliveries();
  }, [loadDeliveries]);
  if (!record || id === undefined) return null;

  const act = async (what: () => Promise<void>) => {
    try {
      await what();
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  };
  const reveal = () =>
    act(async () =>
      setEndpoint(await data(api.GET("/api/v1/lead_providers/{id}/webhook/", { params: { path: { id } } }))),
    );
  const overlapSeconds = secondsOf(overlap.amount, overlap.unit);
  const overlapOk = Number.isFinite(overlapSeconds) && overlapSeconds >= 0 && overlapSeconds <= MAX_GRACE;
  const rotate = () =>
    act(async () => {
      const rotated = await data(
        api.POST("/api/v1/lead_providers/{id}/webhook/rotate_secret/", {
          params: { path: { id } },
          body: { overlap_seconds: overlapSeconds },
        }),
      );
      setEndpoint(
        (e) => e && { ...e, secret: rotated.secret, previous_secret_expires_at: rotated.previous_secret_expires_at },
      );
      setRotating(false);
      notify(
        overlapSeconds > 0
          ? `New signing secret; the previous one signs too for ${span(overlapSeconds)}`
          : "New signing secret; the previous one stopped signing",
        { type: "success" },
      );
    });
  const sendTest = () =>
    act(async () => {
      setTest(await data(api.POST("/api/v1/lead_providers/{id}/webhook/test/", { params: { path: { id } } })));
      if (token === undefined) await loadDeliveries();
    });
  const replay = (delivery: Delivery) =>
    act(async () => {
      await data(
        api.POST("/api/v1/lead_providers/{id}/webhook_deliveries/{delivery_id}/replay/", {
          params: { path: { id, delivery_id: delivery.id } },
        }),
      );
      notify(
        delivery.state === "pending"
          ? `Delivery ${delivery.id}: trying again now`
          : `Delivery ${delivery.id} queued again`,
        {
          type: "success",
        },
      );
      await loadDeliveries();
    });
  const open = (delivery: Delivery) =>
    act(async () =>
      setDetail(
        await data(
          api.GET("/api/v1/lead_providers/{id}/webhook_deliveries/{delivery_id}/", {
            params: { path: { id, delivery_id: delivery.id } },
          }),
        ),
      ),
    );

  return (
    <Panel title="Webhooks">
      <Typography variant="body2" gutterBottom sx={{ overflowWrap: "anywhere" }}>
        {record.webhook_url ? (
          <>
            Events are sent to <code>{record.webhook_url}</code>.
          </>
        ) : (
          "No webhook URL: set one with Edit to send this provider its lead events."
        )}
      </Typography>
      {endpoint && (
        <>
          <Typography variant="body2">
            {endpoint.enabled ? "Enabled." : `Disabled: ${endpoint.disabled_reason ?? "by an administrator"}.`}
            {endpoint.previous_secret_expires_at
              ? ` The previous secret signs too until ${when(endpoint.previous_secret_expires_at)}.`
              : ""}
          </Typography>
          {endpoint.secret && <Secret label="Signing secret" value={endpoint.secret} />}
        </>
      )}
      {test && (
        <Alert severity={test.delivered ? "success" : "warning"} sx={{ my: 1, overflowWrap: "anywhere" }}>
          Test event {test.event_id}: {test.delivered ? "delivered" : "not delivered"}
          {test.status_code !== null ? ` (HTTP ${test.status_code})` : ""} in {num(test.latency_ms)} ms
          {test.error ? ` — ${test.error}` : ""}
        </Alert>
      )}
      <Stack direction="row" spacing={1} sx={{ my: 1 }} flexWrap="wrap" useFlexGap>
        {record.webhook_url && !endpoint && (
          <Button variant="outlined" onClick={reveal}>
            Reveal signing secret
          </Button>
        )}
        {record.webhook_url && endpoint && (
          <Button variant="outlined" onClick={() => setRotating(true)}>
            Rotate secret
          </Button>
        )}
        {record.webhook_url && (
          <Button variant="outlined" onClick={sendTest}>
            Send a test event
          </Button>
        )}
      </Stack>
      <Dialog open={rotating} onClose={() => setRotating(false)} aria-labelledby="rotate-secret-title">
        <DialogTitle id="rotate-secret-title">Rotate the signing secret</DialogTitle>
        <DialogContent>
          <Typography variant="body2" gutterBottom>
            A new secret signs every event from now on. During the overlap the previous one signs too (two signatures
            per event), so the provider can switch without rejecting a delivery.
          </Typography>
          <Duration
            label="The previous secret keeps signing for"
            amount={overlap.amount}
            unit={overlap.unit}
            max={MAX_GRACE}
            onChange={(amount, unit) => setOverlap({ amount, unit })}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setRotating(false)}>Cancel</Button>
          <Button variant="contained" onClick={rotate} disabled={!overlapOk}>
            Rotate secret
          </Button>
        </DialogActions>
      </Dialog>
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>
        Deliveries
      </Typography>
      {deliveries === null ? (
        <Typography variant="body2">Loading…</Typography>
      ) : deliveries.length === 0 && testEvents.length === 0 ? (
        <Typography variant="body2">None yet.</Typography>
      ) : (
        <Scrolls>
          <Table size="small" aria-label="Webhook deliveries">
            <TableHead>
              <TableRow>
                <TableCell>Event</TableCell>
                <TableCell>Lead</TableCell>
                <TableCell>State</TableCell>
                <TableCell>Attempts</TableCell>
                <TableCell>Last answer</TableCell>
                <TableCell>Created</TableCell>
                <TableCell>Next attempt</TableCell>
                <TableCell>
                  <span className="visually-hidden">Actions</span>
                </TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {token === undefined &&
                testEvents.map((e) => (
                  <TableRow key={e.event_id}>
                    <TableCell>
                      <Stack direction="row" spacing={1} alignItems="center">
                        <span>webhook.test</span>
                        <TestChip />
                      </Stack>
                    </TableCell>
                    <TableCell>—</TableCell>
                    <TableCell>{e.error === null ? "delivered" : "not delivered"}</TableCell>
                    <TableCell>1</TableCell>
                    <TableCell>{e.error ?? `HTTP ${e.status_code} in ${num(e.latency_ms)} ms`}</TableCell>
                    <TableCell>{when(e.at)}</TableCell>
                    <TableCell>—</TableCell>
                    <TableCell />
                  </TableRow>
                ))}
              {deliveries.map((d) => (
                <TableRow key={d.id}>
                  <TableCell>
                    <Stack direction="row" spacing={1} alignItems="center">
                      <span>{d.type}</span>
                      {!d.livemode && <TestChip />}
                    </Stack>
                  </TableCell>
                  <TableCell>
                    {d.lead_id !== null ? (
                      <Link to={`/leads/${d.lead_id}/show`}>{d.order_number ?? `Lead ${d.lead_id}`}</Link>
                    ) : (
                      "—"
                    )}
                  </TableCell>
                  <TableCell>{d.state}</TableCell>
                  <TableCell>{num(d.attempts)}</TableCell>
                  <TableCell>{answered(d)}</TableCell>
                  <TableCell>{when(d.created_at)}</TableCell>
                  <TableCell>{d.next_attempt_at ? relative(d.next_attempt_at) : "—"}</TableCell>
                  <TableCell>
                    <Stack direction="row" spacing={0.5}>
                      <Button size="small" onClick={() => open(d)} aria-label={`Attempts of delivery ${d.id}`}>
                        Attempts
                      </Button>
                      <Button
                        size="small"
                        onClick={() => replay(d)}
                        aria-label={`${d.state === "delivered" ? "Replay" : "Retry now"} delivery ${d.id}`}
                      >
                        {/* Pending, failed or disabled: send it now; delivered: send it again. */}
                        {d.state === "delivered" ? "Replay" : "Retry now"}
                      </Button>
                    </Stack>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Scrolls>
      )}
      <Stack direction="row" spacing={1} justifyContent="flex-end" sx={{ mt: 1 }}>
        <Button size="small" disabled={tokens.length <= 1} onClick={() => setTokens((t) => t.slice(0, -1))}>
          Newer deliveries
        </Button>
        <Button size="small" disabled={!nextToken} onClick={() => nextToken && setTokens((t) => [...t, nextToken])}>
          Older deliveries
        </Button>
      </Stack>
      <DeliveryDialog detail={detail} onClose={() => setDetail(null)} />
    </Panel>
  );
}

/** Deactivates the provider after a confirmation (its keys are refused while inactive). */
export function DeactivateButton() {
  const record = useRecordContext<Provider>();
  const [open, setOpen] = useState(false);
  const [update, { isPending }] = useUpdate();
  const notify = useNotify();
  if (!record?.is_active) return null;
  return (
    <>
      <Button color="error" onClick={() => setOpen(true)}>
        Deactivate
      </Button>
      <ConfirmDialog
        open={open}
        busy={isPending}
        danger
        title={`Deactivate ${record.name}?`}
        confirm="Deactivate"
        onClose={() => setOpen(false)}
        onConfirm={() =>
          update(
            "providers",
            { id: record.id, data: { is_active: false }, previousData: record },
            {
              mutationMode: "pessimistic",
              onSuccess: () => {
                setOpen(false);
                notify(`${record.name} deactivated`, { type: "success" });
              },
              onError: (err) => notify(reason(err), { type: "error" }),
            },
          )
        }
      >
        Its API keys are refused (401) until it is activated again with Edit. Its leads, keys and settings stay.
      </ConfirmDialog>
    </>
  );
}
