/**
 * The provider page's Intake panel: the provider's intake rules as one form, saved with
 * `PUT /api/v1/lead_providers/{id}/intake_rules/`. Every field's help text is the description of
 * its row in the service's rule table (src/intake/rule-table.ts), so the form says what the
 * service enforces; the service's refusal of a bad member is shown under that member.
 */
import {
  Alert,
  Autocomplete,
  Box,
  Button,
  Checkbox,
  FormControlLabel,
  IconButton,
  MenuItem,
  Stack,
  Switch,
  TextField,
  Typography,
} from "@mui/material";
import { useCallback, useEffect, useState } from "react";
import { useNotify, useRecordContext } from "react-admin";
import { INTAKE_RULES_TABLE } from "../../../src/intake/rule-table.ts";
import { ConfirmDialog } from "../../../ui/src/components/ConfirmDialog.tsx";
import { api, data, type Schemas } from "../api.ts";
import { intakeChanges } from "./intake-changes.ts";
import { Panel } from "./Panel.tsx";

type Rules = Schemas["AdminIntakeRules"];
type ListKey = "origin_states" | "destination_states" | "overseas_types" | "ship_via" | "vehicle_types";
type Opening = { open: string; close: string };

const DAYS = [
  ["mon", "Monday"],
  ["tue", "Tuesday"],
  ["wed", "Wednesday"],
  ["thu", "Thursday"],
  ["fri", "Friday"],
  ["sat", "Saturday"],
  ["sun", "Sunday"],
] as const;

/** The rule table's descriptions of the rows a setting drives: the form's help texts. */
const help = (setting: string) =>
  INTAKE_RULES_TABLE.filter((r) => r.setting === setting)
    .map((r) => r.description)
    .join(" ");

const OVERSEAS = ["DOMESTIC", "FOREIGN"];
const SHIP_VIA = ["OPEN", "ENCLOSED", "DRIVE_AWAY", "CONTAINER_20FT", "CONTAINER_40FT", "SHARED", "ROLLON_ROLLOFF"];
const VEHICLES = [
  "CAR",
  "SUV",
  "PICKUP",
  "VAN",
  "MINIVAN",
  "MOTORCYCLE",
  "ATV",
  "BOAT",
  "RV",
  "TRAILER",
  "HEAVY_EQUIPMENT",
  "OTHER",
];

export function IntakePanel() {
  const record = useRecordContext<{ id: number }>();
  const notify = useNotify();
  const [rules, setRules] = useState<Rules | null>(null);
  const [states, setStates] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // The rules as last loaded or saved, and the changes awaiting confirmation (null: none asked).
  const [saved, setSaved] = useState<Rules | null>(null);
  const [asking, setAsking] = useState<string[] | null>(null);
  const id = record?.id;

  const load = useCallback(async () => {
    if (id === undefined) return;
    try {
      const loaded = await data(api.GET("/api/v1/lead_providers/{id}/intake_rules/", { params: { path: { id } } }));
      setRules(loaded);
      setSaved(loaded);
    } catch (err) {
      setFailure(err instanceof Error ? err.message : String(err));
    }
  }, [id]);
  useEffect(() => {
    void load();
    data(api.GET("/api/v1/common/states/"))
      .then((list) => setStates(list.map((s) => s.code)))
      .catch(() => setStates([]));
  }, [load]);

  if (!rules) {
    return (
      <Panel title="Intake rules">
        {failure ? <Alert severity="error">{failure}</Alert> : <Typography variant="body2">Loading…</Typography>}
      </Panel>
    );
  }
  const set = (patch: Partial<Rules>) => {
    setRules({ ...rules, ...patch });
    // A member being edited no longer shows the service's refusal of its old value.
    const edited = Object.keys(patch);
    setErrors((all) =>
      Object.fromEntries(Object.entries(all).filter(([field]) => !edited.some((k) => field.startsWith(k)))),
    );
  };
  const err = (field: string) =>
    Object.entries(errors)
      .filter(([f]) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`))
      .map(([, m]) => m)
      .join(" ");

  const save = async () => {
    setAsking(null);
    setSaving(true);
    setErrors({});
    setFailure(null);
    const { version: _v, updated_at: _u, cap_usage: _c, ...body } = rules;
    try {
      const stored = await data(
        api.PUT("/api/v1/lead_providers/{id}/intake_rules/", { params: { path: { id: id as number } }, body }),
      );
      setRules(stored);
      setSaved(stored);
      notify("Intake rules saved", { type: "success" });
    } catch (e) {
      const body_ = (e as { body?: { errors?: Record<string, string> } }).body;
      setErrors(body_?.errors ?? {});
      setFailure(e instanceof Error ? e.message : String(e));
    } finally {
      setSaving(false);
    }
  };

  const list = (key: ListKey, label: string, options: string[]) => (
    <Autocomplete
      multiple
      options={options}
      value={(rules[key] as string[] | null) ?? []}
      onChange={(_e, value) => set({ [key]: value.length === 0 ? null : value } as Partial<Rules>)}
      renderInput={(params) => (
        <TextField
          {...params}
          label={label}
          placeholder={(rules[key] as string[] | null) ? "" : "Any"}
          helperText={err(key) || help(key)}
          error={Boolean(err(key))}
        />
      )}
    />
  );
  const number = (key: "max_vehicles" | "ship_date_min_days" | "ship_date_max_days", label: string) => (
    <TextField
      type="number"
      label={label}
      value={rules[key]}
      onChange={(e) => set({ [key]: e.target.value === "" ? 0 : Number(e.target.value) } as Partial<Rules>)}
      helperText={err(key) || help(key)}
      error={Boolean(err(key))}
      sx={{ minWidth: 200 }}
    />
  );
  const flag = (key: "require_destination_zip" | "reject_disposable_email" | "consent_required", label: string) => (
    <FormControlLabel
      control={<Checkbox checked={rules[key]} onChange={(e) => set({ [key]: e.target.checked } as Partial<Rules>)} />}
      label={label}
    />
  );
  const cap = (window: "day" | "week" | "month", label: string) => {
    const usage = rules.cap_usage[window];
    return (
      <TextField
        type="number"
        label={label}
        value={rules.caps[window] ?? ""}
        placeholder="No cap"
        onChange={(e) =>
          set({ caps: { ...rules.caps, [window]: e.target.value === "" ? null : Number(e.target.value) } })
        }
        helperText={
          err(`caps.${window}`) ||
          (usage
            ? `${usage.used} used, ${usage.remaining} left; resets ${new Date(usage.resets_at).toLocaleString()}`
            : "No cap")
        }
        error={Boolean(err(`caps.${window}`))}
        sx={{ minWidth: 200 }}
      />
    );
  };
  const schedule = rules.schedule as Record<string, Opening[]> | null;
  const setDay = (day: string, openings: Opening[]) => {
    const next = { ...(schedule ?? {}) };
    if (openings.length === 0) delete next[day];
    else next[day] = openings;
    set({ schedule: next as Rules["schedule"] });
  };

  return (
    <Panel title="Intake rules">
      <Stack spacing={2}>
        <Typography variant="body2">
          Version {rules.version}
          {rules.updated_at ? `, changed ${new Date(rules.updated_at).toLocaleString()}` : ", never changed"}. The
          provider reads these at /api/v1/public/intake_rules/ and is sent intake_rules.changed when they are saved.
        </Typography>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2} alignItems={{ sm: "center" }}>
          <FormControlLabel
            control={
              <Switch
                checked={rules.paused}
                onChange={(e) =>
                  set({ paused: e.target.checked, paused_reason: e.target.checked ? rules.paused_reason : null })
                }
              />
            }
            label="Paused"
          />
          <TextField
            label="Reason shown to the provider"
            value={rules.paused_reason ?? ""}
            disabled={!rules.paused}
            onChange={(e) => set({ paused_reason: e.target.value === "" ? null : e.target.value })}
            helperText={err("paused_reason") || " "}
            error={Boolean(err("paused_reason"))}
            fullWidth
          />
        </Stack>
        <Typography variant="body2">{help("paused")}</Typography>
        <Typography component="h3" variant="subtitle1">
          Criteria
        </Typography>
        {list("origin_states", "Origin states", states)}
        {list("destination_states", "Destination states", states)}
        {list("overseas_types", "Overseas types", OVERSEAS)}
        {list("ship_via", "Ship via", SHIP_VIA)}
        {list("vehicle_types", "Vehicle types", VEHICLES)}
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
          {number("max_vehicles", "Most vehicles per lead")}
          {number("ship_date_min_days", "Ship date at least (days)")}
          {number("ship_date_max_days", "Ship date at most (days)")}
        </Stack>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={1} flexWrap="wrap">
          {flag("require_destination_zip", "Destination ZIP required")}
          {flag("reject_disposable_email", "Refuse disposable emails")}
          {flag("consent_required", "Consent evidence required")}
        </Stack>
        <TextField
          select
          label="Duplicates"
          value={rules.duplicate_policy}
          onChange={(e) => set({ duplicate_policy: e.target.value as Rules["duplicate_policy"] })}
          helperText={err("duplicate_policy") || help("duplicate_policy")}
          sx={{ maxWidth: 360 }}
        >
          <MenuItem value="flag">Flag (store, not billable)</MenuItem>
          <MenuItem value="reject">Refuse</MenuItem>
        </TextField>
        <Typography component="h3" variant="subtitle1">
          Caps (live leads; {help("caps")})
        </Typography>
        <Stack direction={{ xs: "column", sm: "row" }} spacing={2}>
          {cap("day", "Per day")}
          {cap("week", "Per week")}
          {cap("month", "Per month")}
        </Stack>
        <Typography component="h3" variant="subtitle1">
          Schedule
        </Typography>
        <FormControlLabel
          control={
            <Switch
              checked={schedule !== null}
              onChange={(e) =>
                set({
                  schedule: (e.target.checked
                    ? Object.fromEntries(DAYS.slice(0, 5).map(([d]) => [d, [{ open: "08:00", close: "20:00" }]]))
                    : null) as Rules["schedule"],
                })
              }
            />
          }
          label={schedule === null ? "Always open" : "Open only at these hours (business time zone)"}
        />
        {err("schedule") && <Alert severity="error">{err("schedule")}</Alert>}
        {schedule !== null && (
          <Box role="group" aria-label="Weekly schedule">
            {DAYS.map(([day, name]) => {
              const openings = schedule[day] ?? [];
              return (
                <Stack key={day} direction="row" spacing={1} alignItems="center" flexWrap="wrap" sx={{ my: 0.5 }}>
                  <Typography sx={{ width: 96 }}>{name}</Typography>
                  {openings.length === 0 && (
                    <Typography variant="body2" color="text.secondary">
                      Closed
                    </Typography>
                  )}
                  {openings.map((o, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: an opening has no identity but its place in the day
                    <Stack key={`${day}-${i}`} direction="row" spacing={0.5} alignItems="center">
                      <TextField
                        size="small"
                        label={`${name} opens`}
                        value={o.open}
                        onChange={(e) =>
                          setDay(
                            day,
                            openings.map((x, j) => (j === i ? { ...x, open: e.target.value } : x)),
                          )
                        }
                        sx={{ width: 130 }}
                      />
                      <TextField
                        size="small"
                        label={`${name} closes`}
                        value={o.close}
                        onChange={(e) =>
                          setDay(
                            day,
                            openings.map((x, j) => (j === i ? { ...x, close: e.target.value } : x)),
                          )
                        }
                        sx={{ width: 130 }}
                      />
                      <IconButton
                        aria-label={`Remove ${name} opening ${i + 1}`}
                        onClick={() =>
                          setDay(
                            day,
                            openings.filter((_, j) => j !== i),
                          )
                        }
                        size="small"
                      >
                        ×
                      </IconButton>
                    </Stack>
                  ))}
                  <Button size="small" onClick={() => setDay(day, [...openings, { open: "08:00", close: "17:00" }])}>
                    Add {name} hours
                  </Button>
                </Stack>
              );
            })}
          </Box>
        )}
        {failure && (
          <Alert severity="error" role="alert">
            {failure}
          </Alert>
        )}
        <Box>
          <Button variant="contained" onClick={() => setAsking(intakeChanges(saved ?? {}, rules))} disabled={saving}>
            Save intake rules
          </Button>
        </Box>
        <ConfirmDialog
          open={asking !== null}
          title="Save the intake rules?"
          confirm="Save and notify"
          busy={saving}
          onConfirm={save}
          onClose={() => setAsking(null)}
        >
          {asking?.length ? (
            <ul data-testid="intake-changes">
              {asking.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          ) : (
            <p>Nothing differs from the saved rules; saving keeps them as they are.</p>
          )}
          <p>
            The change applies at once to the next lead this provider sends, and the provider is notified
            (intake_rules.changed).
          </p>
        </ConfirmDialog>
      </Stack>
    </Panel>
  );
}
