/**
 * A provider's live or test key: when it was issued and last used, reveal (audited), rotate with a
 * grace period for the current key, revoke, or generate the first one.
 */
import { Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, Typography } from "@mui/material";
import { useState } from "react";
import { useNotify, useRecordContext, useRefresh } from "react-admin";
import { ConfirmDialog } from "../../../ui/src/components/ConfirmDialog.tsx";
import { relative, span, when } from "../../../ui/src/format.ts";
import { api, data, type Schemas } from "../api.ts";
import { Duration, MAX_GRACE, secondsOf, type Unit, withinGrace } from "./Duration.tsx";
import { Panel, reason, Secret } from "./Panel.tsx";

export function KeyPanel({ mode }: { mode: "live" | "test" }) {
  const record = useRecordContext<Schemas["Provider"]>();
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
  const graceOk = withinGrace(graceSeconds);
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
