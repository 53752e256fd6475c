/**
 * A provider's webhook: where events go, the signing secret (revealed on request, audited) and its
 * rotation with an overlap, a test event with the answer it got, and the deliveries.
 */
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, Typography } from "@mui/material";
import { useState } from "react";
import { useNotify, useRecordContext, useRefresh } from "react-admin";
import { EVENT_TYPE_OPTIONS } from "../../../src/events/event-type-options.ts";
import { describeEventTypes, EventTypesChoice } from "../../../ui/src/components/EventTypesChoice.tsx";
import { num, span, when } from "../../../ui/src/format.ts";
import { api, data, type Schemas } from "../api.ts";
import { Duration, MAX_GRACE, secondsOf, type Unit, withinGrace } from "./Duration.tsx";
import { Panel, Secret, useAct } from "./Panel.tsx";
import { useDeliveries, WebhookDeliveries } from "./WebhookDeliveries.tsx";

export function WebhookPanel() {
  const record = useRecordContext<Schemas["Provider"]>();
  const notify = useNotify();
  const act = useAct();
  const [endpoint, setEndpoint] = useState<Schemas["WebhookEndpoint"] | null>(null);
  const [rotating, setRotating] = useState(false);
  const [overlap, setOverlap] = useState<{ amount: string; unit: Unit }>({ amount: "24", unit: "hours" });
  const [test, setTest] = useState<Schemas["WebhookTestResult"] | null>(null);
  // The subscription being edited; undefined: the dialog is closed.
  const [choosing, setChoosing] = useState<string[] | null | undefined>(undefined);
  const refresh = useRefresh();
  const id = record?.id;
  const page = useDeliveries(id);
  if (!record || id === undefined) return null;

  const reveal = () =>
    act(async () =>
      setEndpoint(await data(api.GET("/api/v1/lead_providers/{id}/webhook/", { params: { path: { id } } }))),
    );
  const overlapSeconds = secondsOf(overlap.amount, overlap.unit);
  const overlapOk = withinGrace(overlapSeconds);
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
  const saveEventTypes = () =>
    act(async () => {
      if (choosing === undefined) return;
      await data(
        api.PATCH("/api/v1/lead_providers/{id}/", {
          params: { path: { id } },
          body: { webhook_event_types: choosing },
        }),
      );
      setChoosing(undefined);
      notify(`Events sent: ${describeEventTypes(EVENT_TYPE_OPTIONS, choosing)}`, { type: "success" });
      refresh();
    });
  const sendTest = () =>
    act(async () => {
      setTest(await data(api.POST("/api/v1/lead_providers/{id}/webhook/test/", { params: { path: { id } } })));
      if (page.firstPage) await page.load();
    });

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
      <Typography variant="body2" gutterBottom data-testid="webhook-events">
        Events sent: {describeEventTypes(EVENT_TYPE_OPTIONS, record.webhook_event_types ?? null)}.
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
        <Button variant="outlined" onClick={() => setChoosing(record.webhook_event_types ?? null)}>
          Choose events
        </Button>
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
      <Dialog
        open={choosing !== undefined}
        onClose={() => setChoosing(undefined)}
        aria-labelledby="choose-events-title"
        fullWidth
      >
        <DialogTitle id="choose-events-title">Events sent to the webhook</DialogTitle>
        <DialogContent>
          <Typography variant="body2" gutterBottom>
            Events not chosen are not sent (the provider still sees them in its events feed). A change applies to events
            that happen after it.
          </Typography>
          <EventTypesChoice options={EVENT_TYPE_OPTIONS} value={choosing ?? null} onChange={setChoosing} />
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setChoosing(undefined)}>Cancel</Button>
          <Button variant="contained" onClick={saveEventTypes}>
            Save events
          </Button>
        </DialogActions>
      </Dialog>
      <WebhookDeliveries id={id} page={page} />
    </Panel>
  );
}
