/**
 * The drop-in form's settings, as the portal's Form page and the back office's provider page both
 * edit them: the publishable keys (shown whole: they are not secret; issued or rotated after a
 * confirmation), the allowed origins (added and removed one by one, each refusal of the service
 * shown under its origin), the consent text (or the default naming the broker) and whether the
 * form takes leads. Each app passes its own calls.
 */
import {
  Alert,
  Box,
  Button,
  FormControlLabel,
  Stack,
  Switch,
  TableCell,
  TableRow,
  TextField,
  Typography,
} from "@mui/material";
import { useEffect, useState } from "react";
import { HttpError } from "react-admin";
import type { components } from "../../../generated/openapi/schema.ts";
import { when } from "../format.ts";
import { ConfirmDialog } from "./ConfirmDialog.tsx";
import { CopyButton } from "./CopyButton.tsx";
import { DataTable } from "./DataTable.tsx";

export type FormSettings = components["schemas"]["FormSettings"];
export type FormSettingsUpdate = components["schemas"]["FormSettingsUpdate"];
export type FormMode = "live" | "test";

/** A refused call's words: its detail, and its field errors by field name. */
function problemOf(err: unknown): { detail: string; fields: Record<string, string> } {
  if (err instanceof HttpError) {
    const body = (err.body ?? {}) as { errors?: Record<string, string> };
    return { detail: err.message, fields: body.errors ?? {} };
  }
  return { detail: err instanceof Error ? err.message : String(err), fields: {} };
}

export function PublishableKeys(props: { settings: FormSettings; rotate: (mode: FormMode) => Promise<void> }) {
  const [asking, setAsking] = useState<FormMode | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const keys = props.settings.publishable_keys;
  async function rotate(mode: FormMode) {
    setAsking(null);
    try {
      await props.rotate(mode);
      setMessage({ ok: true, text: `A new ${mode} publishable key is issued; paste the new snippet into your pages.` });
    } catch (err) {
      setMessage({ ok: false, text: problemOf(err).detail });
    }
  }
  return (
    <Box component="section" aria-labelledby="form-keys-title" sx={{ my: 2 }}>
      <Typography component="h2" variant="h6" id="form-keys-title">
        Publishable keys
      </Typography>
      <Typography variant="body2" gutterBottom>
        A publishable key (<code>lp_pub_…</code>) is not a secret: it sits in your page's HTML and works only from your
        allowed origins. The test key sends test leads (and also works from <code>http://localhost</code>).
      </Typography>
      {message && (
        <Alert severity={message.ok ? "success" : "error"} sx={{ my: 1 }}>
          {message.text}
        </Alert>
      )}
      {(["live", "test"] as const).map((mode) => {
        const k = keys[mode];
        return (
          <Stack key={mode} spacing={1} sx={{ my: 1 }}>
            <Typography variant="body2" sx={{ overflowWrap: "anywhere" }}>
              {mode === "live" ? "Live key" : "Test key"}:{" "}
              {k ? (
                <>
                  <code data-testid={`publishable-key-${mode}`}>{k.publishable_key}</code>, issued {when(k.created_at)}
                </>
              ) : (
                "none issued"
              )}
            </Typography>
            <Box>
              <Button variant="outlined" onClick={() => (k ? setAsking(mode) : rotate(mode))}>
                {k ? `Rotate ${mode} key` : `Issue ${mode} key`}
              </Button>
            </Box>
          </Stack>
        );
      })}
      <ConfirmDialog
        open={asking !== null}
        title={`Rotate the ${asking ?? ""} publishable key?`}
        confirm="Rotate"
        danger
        onConfirm={() => asking && rotate(asking)}
        onClose={() => setAsking(null)}
      >
        A new key is issued and the current one stops at once: pages that still carry the old snippet stop taking quote
        requests until you paste the new one.
      </ConfirmDialog>
    </Box>
  );
}

export function FormSettingsEditor(props: {
  settings: FormSettings;
  save: (body: FormSettingsUpdate) => Promise<void>;
}) {
  const s = props.settings;
  const [origins, setOrigins] = useState<string[]>(s.allowed_origins);
  const [useDefault, setUseDefault] = useState(s.consent_text_is_default);
  const [text, setText] = useState(s.consent_text);
  const [enabled, setEnabled] = useState(s.enabled);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string; fields: Record<string, string> } | null>(null);
  useEffect(() => {
    setOrigins(s.allowed_origins);
    setUseDefault(s.consent_text_is_default);
    setText(s.consent_text);
    setEnabled(s.enabled);
  }, [s]);
  const fields = outcome?.fields ?? {};

  async function save() {
    setBusy(true);
    try {
      await props.save({
        allowed_origins: origins.map((o) => o.trim()).filter((o) => o !== ""),
        consent_text: useDefault ? null : text,
        enabled,
      });
      setOutcome({ ok: true, text: "The form settings are saved.", fields: {} });
    } catch (err) {
      const p = problemOf(err);
      const n = Object.keys(p.fields).filter((f) => f !== "allowed_origins").length;
      // Each field's words are under it; the summary says how many.
      const text =
        n > 0 ? `The settings were not saved: ${n === 1 ? "1 field needs" : `${n} fields need`} a change.` : p.detail;
      setOutcome({ ok: false, text, fields: p.fields });
    } finally {
      setBusy(false);
    }
  }

  return (
    <Box
      component="form"
      aria-labelledby="form-settings-title"
      sx={{ my: 2 }}
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Typography component="h2" variant="h6" id="form-settings-title">
        Settings
      </Typography>
      <FormControlLabel
        control={<Switch checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />}
        label="The form takes quote requests"
      />
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2, fontWeight: 600 }}>
        Allowed origins
      </Typography>
      <Typography variant="body2" gutterBottom>
        The sites whose pages may show the form, each as <code>https://host</code> (with <code>:port</code> if it is not
        443). Up to 20.
      </Typography>
      {fields.allowed_origins && (
        <Alert severity="error" sx={{ my: 1 }}>
          {fields.allowed_origins}
        </Alert>
      )}
      <Stack spacing={1} sx={{ my: 1 }}>
        {origins.map((o, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the rows are positions in the list the service numbers too
          <Stack key={i} direction={{ xs: "column", sm: "row" }} spacing={1} alignItems={{ sm: "flex-start" }}>
            <TextField
              size="small"
              label={`Allowed origin ${i + 1}`}
              value={o}
              onChange={(e) => setOrigins(origins.map((x, j) => (j === i ? e.target.value : x)))}
              error={Boolean(fields[`allowed_origins[${i}]`])}
              helperText={fields[`allowed_origins[${i}]`] ?? " "}
              sx={{ flex: 1, minWidth: 0 }}
              slotProps={{ htmlInput: { inputMode: "url", spellCheck: false } }}
            />
            <Box>
              <Button onClick={() => setOrigins(origins.filter((_, j) => j !== i))}>Remove origin {i + 1}</Button>
            </Box>
          </Stack>
        ))}
        <Box>
          <Button onClick={() => setOrigins([...origins, ""])} disabled={origins.length >= 20}>
            Add an origin
          </Button>
        </Box>
      </Stack>
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2, fontWeight: 600 }}>
        Consent text
      </Typography>
      <FormControlLabel
        control={
          <Switch
            checked={useDefault}
            onChange={(e) => {
              setUseDefault(e.target.checked);
              if (!e.target.checked && s.consent_text_is_default) setText(s.consent_text);
            }}
          />
        }
        label="Use the default text (it names the broker)"
      />
      {useDefault ? (
        <Box
          component="blockquote"
          data-testid="default-consent-text"
          sx={{ borderLeft: 4, borderColor: "divider", m: 0, my: 1, pl: 2, whiteSpace: "pre-wrap" }}
        >
          {s.consent_text_is_default ? s.consent_text : "The default text naming the broker (shown once saved)."}
        </Box>
      ) : (
        <TextField
          label="Consent text"
          multiline
          minRows={4}
          fullWidth
          value={text}
          onChange={(e) => setText(e.target.value)}
          error={Boolean(fields.consent_text)}
          helperText={
            fields.consent_text ??
            "Shown beside the consent box, which the person ticks themselves. 20 to 2,000 characters; kept word for word in each lead's consent record."
          }
          sx={{ my: 1 }}
        />
      )}
      {outcome && (
        <Alert severity={outcome.ok ? "success" : "error"} sx={{ my: 1 }} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
        </Alert>
      )}
      <Button type="submit" variant="contained" disabled={busy}>
        Save form settings
      </Button>
    </Box>
  );
}

/** The snippet to paste into a page, exactly as the service gives it, with its copy button. */
export function Snippet({ snippet, mode }: { snippet: string | null; mode: FormMode }) {
  if (snippet === null) {
    return <Typography variant="body2">Issue a {mode} key to get its snippet.</Typography>;
  }
  return (
    <Box>
      <Box
        component="pre"
        data-testid={`snippet-${mode}`}
        aria-label={`The ${mode} snippet`}
        sx={{ whiteSpace: "pre-wrap", wordBreak: "break-all", bgcolor: "#f4f6f8", p: 1, borderRadius: 1, my: 1 }}
      >
        {snippet}
      </Box>
      <CopyButton text={snippet} label="Copy the snippet" />
    </Box>
  );
}

const REFUSALS: Record<string, string> = {
  validation_error: "Fields the service refused",
  challenge_invalid: "Bot check missing, expired or used twice",
  honeypot_filled: "Filled in by a program (the hidden field)",
  consent_required: "Consent box not ticked",
  rate_limited: "Too many from one address",
  duplicate_lead: "Duplicate of a lead you already sent",
  cap_reached: "Your cap was reached",
  intake_closed: "Intake closed",
  intake_paused: "Intake paused",
  outside_criteria: "Outside the accepted criteria",
  origin_not_allowed: "From a site that is not allowed",
  form_disabled: "The form was switched off",
};

/** This week's form leads and refusals by reason. */
export function FormWeek(props: { stats: components["schemas"]["FormStats"] | undefined; mode: FormMode }) {
  const st = props.stats;
  return (
    <Box component="section" aria-labelledby="form-week-title" sx={{ my: 2 }}>
      <Typography component="h2" variant="h6" id="form-week-title">
        This week ({props.mode})
      </Typography>
      {st && (
        <>
          <Typography variant="body2" gutterBottom data-testid="form-leads">
            {st.form_leads} form {st.form_leads === 1 ? "lead" : "leads"} since {when(st.week_start)}: the start of the
            business week (Monday 00:00 in the broker's time zone), in your time.
          </Typography>
          <DataTable label="Refused submissions by reason" columns={["Reason", "Code", "Refused"]}>
            {st.refusals.length === 0 ? (
              <TableRow>
                <TableCell colSpan={3}>No refusals this week.</TableCell>
              </TableRow>
            ) : (
              st.refusals.map((r) => (
                <TableRow key={r.code}>
                  <TableCell>{REFUSALS[r.code] ?? r.code}</TableCell>
                  <TableCell>
                    <code>{r.code}</code>
                  </TableCell>
                  <TableCell>{r.count}</TableCell>
                </TableRow>
              ))
            )}
          </DataTable>
        </>
      )}
    </Box>
  );
}
