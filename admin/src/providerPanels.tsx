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
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { Confirm, useNotify, useRecordContext, useRefresh, useUpdate } from "react-admin";
import { api, data, type Schemas } from "./api.ts";

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
  const [grace, setGrace] = useState("0");
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
  const issue = async () => {
    try {
      const seconds = Number(grace);
      const issued = await data(
        api.POST("/api/v1/lead_providers/{id}/generate_api_key/", {
          params: { path: { id: record.id } },
          body: { mode, ...(seconds > 0 && { previous_key_grace_seconds: seconds }) },
        }),
      );
      setValue(issued.api_key);
      setRotating(false);
      notify(`New ${mode} key issued`, { type: "success" });
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
            Key <code>{summary.masked}</code>, issued {new Date(summary.created_at).toLocaleString()}
            {summary.last_used_at ? `, last used ${new Date(summary.last_used_at).toLocaleString()}` : ", never used"}
            {summary.expires_at ? `, expires ${new Date(summary.expires_at).toLocaleString()}` : ""}
            {summary.previous_key_expires_at
              ? `; the previous key works until ${new Date(summary.previous_key_expires_at).toLocaleString()}`
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
      </Stack>
      <Dialog open={rotating} onClose={() => setRotating(false)} aria-labelledby={`rotate-${mode}-title`}>
        <DialogTitle id={`rotate-${mode}-title`}>Rotate the {mode} key</DialogTitle>
        <DialogContent>
          <Typography variant="body2" gutterBottom>
            A new key is issued at once. The current key stops at once, or after the grace period, so the provider can
            switch without failed requests.
          </Typography>
          <TextField
            label="Grace period for the current key (seconds, up to 604800)"
            type="number"
            value={grace}
            onChange={(e) => setGrace(e.target.value)}
            fullWidth
            sx={{ mt: 1 }}
            slotProps={{ htmlInput: { min: 0, max: 604800 } }}
          />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setRotating(false)}>Cancel</Button>
          <Button variant="contained" onClick={issue}>
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
  const line = (w: Schemas["WindowUsage"]) => `${w.used ?? "?"} of ${w.limit} (resets in ${w.reset_seconds} s)`;
  return (
    <Panel title="Usage now">
      {error && <Alert severity="error">{error}</Alert>}
      {!usage && !error && <Typography variant="body2">Loading…</Typography>}
      {usage && (
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
      )}
    </Panel>
  );
}

type Endpoint = Schemas["WebhookEndpoint"];
type Delivery = Schemas["WebhookDelivery"];

export function WebhookPanel() {
  const record = useRecordContext<Provider>();
  const notify = useNotify();
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [test, setTest] = useState<Schemas["WebhookTestResult"] | null>(null);
  const id = record?.id;
  const loadDeliveries = useCallback(async () => {
    if (id === undefined) return;
    try {
      const page = await data(
        api.GET("/api/v1/lead_providers/{id}/webhook_deliveries/", {
          params: { path: { id }, query: { page_size: 10 } },
        }),
      );
      setDeliveries(page.results);
    } catch (err) {
      notify(reason(err), { type: "error" });
    }
  }, [id, notify]);
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
  const rotate = () =>
    act(async () => {
      const rotated = await data(
        api.POST("/api/v1/lead_providers/{id}/webhook/rotate_secret/", {
          params: { path: { id } },
          body: { overlap_seconds: 86_400 },
        }),
      );
      setEndpoint(
        (e) => e && { ...e, secret: rotated.secret, previous_secret_expires_at: rotated.previous_secret_expires_at },
      );
      notify("New signing secret; the previous one signs too for 24 hours", { type: "success" });
    });
  const sendTest = () =>
    act(async () =>
      setTest(await data(api.POST("/api/v1/lead_providers/{id}/webhook/test/", { params: { path: { id } } }))),
    );
  const replay = (delivery: Delivery) =>
    act(async () => {
      await data(
        api.POST("/api/v1/lead_providers/{id}/webhook_deliveries/{delivery_id}/replay/", {
          params: { path: { id, delivery_id: delivery.id } },
        }),
      );
      notify(`Delivery ${delivery.id} queued again`, { type: "success" });
      await loadDeliveries();
    });

  return (
    <Panel title="Webhooks">
      <Typography variant="body2" gutterBottom>
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
              ? ` The previous secret signs too until ${new Date(endpoint.previous_secret_expires_at).toLocaleString()}.`
              : ""}
          </Typography>
          {endpoint.secret && <Secret label="Signing secret" value={endpoint.secret} />}
        </>
      )}
      {test && (
        <Alert severity={test.delivered ? "success" : "warning"} sx={{ my: 1 }}>
          Test event {test.event_id}: {test.delivered ? "delivered" : "not delivered"}
          {test.status_code !== null ? ` (HTTP ${test.status_code})` : ""} in {test.latency_ms} ms
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
          <Button variant="outlined" onClick={rotate}>
            Rotate secret (24 h overlap)
          </Button>
        )}
        {record.webhook_url && (
          <Button variant="outlined" onClick={sendTest}>
            Send a test event
          </Button>
        )}
      </Stack>
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>
        Recent deliveries
      </Typography>
      {deliveries === null ? (
        <Typography variant="body2">Loading…</Typography>
      ) : deliveries.length === 0 ? (
        <Typography variant="body2">None yet.</Typography>
      ) : (
        <TableContainer>
          <Table size="small" aria-label="Recent webhook deliveries">
            <TableHead>
              <TableRow>
                <TableCell>Event</TableCell>
                <TableCell>State</TableCell>
                <TableCell>Attempts</TableCell>
                <TableCell>Last answer</TableCell>
                <TableCell>
                  <span className="visually-hidden">Actions</span>
                </TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {deliveries.map((d) => (
                <TableRow key={d.id}>
                  <TableCell>
                    {d.type}
                    <br />
                    <small>{d.event_id}</small>
                  </TableCell>
                  <TableCell>{d.state}</TableCell>
                  <TableCell>{d.attempts}</TableCell>
                  <TableCell>
                    {d.last_error ?? (d.last_status_code !== null ? `HTTP ${d.last_status_code}` : "—")}
                  </TableCell>
                  <TableCell>
                    {d.state !== "pending" && (
                      <Button size="small" onClick={() => replay(d)} aria-label={`Replay delivery ${d.id}`}>
                        Replay
                      </Button>
                    )}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
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
      <Confirm
        isOpen={open}
        loading={isPending}
        title={`Deactivate ${record.name}?`}
        content="Its API keys will be refused until it is activated again. Its leads stay."
        confirm="Deactivate"
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
        onClose={() => setOpen(false)}
      />
    </>
  );
}
