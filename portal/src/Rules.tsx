/**
 * The provider's intake rules in words, live: the same answer as `GET /api/v1/public/intake_rules/`
 * (the portal's route calls the same service and the same JSON mapping), so what this page says
 * cannot drift from what is enforced. Caps with today's usage; the schedule in business hours of
 * BUSINESS_TIMEZONE, labelled; instants in the viewer's own zone, labelled.
 */
import { Alert, Box, List, ListItem, MenuItem, Stack, TableCell, TableRow, TextField, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { type ReactNode, useState } from "react";
import { Title } from "react-admin";
import { DataTable } from "../../ui/src/components/DataTable.tsx";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { whenYours as at, num } from "../../ui/src/format.ts";
import { FIELD_LABELS, fieldLabel, RULE_LABELS, words } from "../../ui/src/labels.ts";
import { api, data, explain, type Schemas } from "./api.ts";

type Published = Schemas["PublishedIntakeRules"];

const WEEKDAYS = [
  ["mon", "Monday"],
  ["tue", "Tuesday"],
  ["wed", "Wednesday"],
  ["thu", "Thursday"],
  ["fri", "Friday"],
  ["sat", "Saturday"],
  ["sun", "Sunday"],
] as const;
const CAP_WHEN = { day: "today", week: "this week", month: "this month" } as const;

const anyOr = (list: readonly string[] | null | undefined, any: string) =>
  list === null || list === undefined ? any : list.length === 0 ? "None" : list.join(", ");

/** One rule as a sentence (label: words). */
function Rule({ name, children, testId }: { name: string; children: ReactNode; testId?: string }) {
  return (
    <ListItem disableGutters sx={{ display: "block" }} data-testid={testId}>
      <Typography component="span" sx={{ fontWeight: 600 }}>
        {name}:
      </Typography>{" "}
      <Typography component="span">{children}</Typography>
    </ListItem>
  );
}

function Caps({ r }: { r: Published }) {
  return (
    <>
      {(["day", "week", "month"] as const).map((w) => {
        const cap = r.cap_usage[w];
        return (
          <Rule key={w} name={fieldLabel(`caps.${w}`)} testId={`cap-${w}`}>
            {cap
              ? `${num(cap.used)} of ${num(cap.limit)} used ${CAP_WHEN[w]}, ${num(cap.remaining)} left; it resets ${at(cap.resets_at)}.`
              : `No ${w} cap.`}
          </Rule>
        );
      })}
    </>
  );
}

function Schedule({ r }: { r: Published }) {
  if (r.schedule === null || r.schedule === undefined) {
    return <Typography variant="body2">Always open: every day, all day.</Typography>;
  }
  const schedule = r.schedule as Record<string, { open: string; close: string }[] | undefined>;
  return (
    <DataTable label={`Intake hours, business days in ${r.business_timezone}`} columns={["Day", "Open"]}>
      {WEEKDAYS.map(([key, day]) => (
        <TableRow key={key}>
          <TableCell>{day}</TableCell>
          <TableCell>{(schedule[key] ?? []).map((o) => `${o.open}–${o.close}`).join(", ") || "Closed"}</TableCell>
        </TableRow>
      ))}
    </DataTable>
  );
}

export function RulesPage() {
  const [mode, setMode] = useState<"live" | "test">("live");
  const rules = useQuery({
    queryKey: ["rules", mode],
    queryFn: () => data(api.GET("/api/v1/portal/intake_rules/", { params: { query: { mode } } })) as Promise<Published>,
  });
  const r = rules.data;
  const dup = r?.duplicate_match.map((f) => fieldLabel(f).toLowerCase()).join(" or ");
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Intake rules" />
      <Typography component="h1" variant="h5" gutterBottom>
        Intake rules
      </Typography>
      <TimeZoneNote business={r?.business_timezone} />
      <Typography variant="body2" gutterBottom>
        What the broker accepts from you now, as the API answers it (<code>GET /api/v1/public/intake_rules/</code>).
        Only the broker's administrators change these rules.
      </Typography>
      <TextField
        select
        size="small"
        label="Mode"
        value={mode}
        onChange={(e) => setMode(e.target.value as never)}
        sx={{ my: 1 }}
      >
        <MenuItem value="live">Live</MenuItem>
        <MenuItem value="test">Test (sandbox)</MenuItem>
      </TextField>
      {rules.isError && <Alert severity="error">{explain(rules.error)}</Alert>}
      {r && (
        <Stack spacing={2}>
          <Alert severity={r.open ? "success" : "warning"} data-testid="rules-status">
            {r.open
              ? `Intake is open${r.closes_at ? ` until ${at(r.closes_at)}` : ""}.`
              : r.paused
                ? `Intake is paused by the broker${r.paused_reason ? `: ${r.paused_reason}` : ""}.`
                : `Intake is closed${r.opens_at ? `; it opens ${at(r.opens_at)}` : ""}.`}
          </Alert>
          <Box>
            <Typography component="h2" variant="h6">
              What is accepted
            </Typography>
            <List dense>
              <Rule name={FIELD_LABELS.origin_states as string} testId="rule-origin-states">
                {anyOr(r.origin_states, "Any state")}
              </Rule>
              <Rule name={FIELD_LABELS.destination_states as string}>{anyOr(r.destination_states, "Any state")}</Rule>
              <Rule name={FIELD_LABELS.vehicle_types as string}>{anyOr(r.vehicle_types, "Any type")}</Rule>
              <Rule name={FIELD_LABELS.overseas_types as string}>{anyOr(r.overseas_types, "Any")}</Rule>
              <Rule name="Accepted ways to ship">{anyOr(r.ship_via, "Any")}</Rule>
              <Rule name={FIELD_LABELS.max_vehicles as string} testId="rule-max-vehicles">
                {num(r.max_vehicles)} vehicles per lead.
              </Rule>
              <Rule name="Ship date" testId="rule-ship-date">
                {r.ship_date_min_days > 0
                  ? `from ${num(r.ship_date_min_days)} to ${num(r.ship_date_max_days)} days after today`
                  : `from today (yesterday at the earliest) to ${num(r.ship_date_max_days)} days after today`}{" "}
                (business days in {r.business_timezone}).
              </Rule>
              <Rule name={FIELD_LABELS.require_destination_zip as string}>
                {r.require_destination_zip ? "Yes" : "No"}
              </Rule>
              <Rule name={FIELD_LABELS.consent_required as string}>
                {r.consent_required ? "Yes: a TrustedForm certificate or a Jornaya lead id" : "No"}
              </Rule>
              <Rule name={FIELD_LABELS.reject_disposable_email as string}>
                {r.reject_disposable_email ? "Yes, refused" : "No: accepted with a warning"}
              </Rule>
              <Rule name={FIELD_LABELS.duplicate_policy as string} testId="rule-duplicates">
                {r.duplicate_policy === "reject"
                  ? `A lead whose ${dup} matches one of the last ${num(r.duplicate_window_days)} days is refused.`
                  : `A lead whose ${dup} matches one of the last ${num(r.duplicate_window_days)} days is accepted, flagged as a duplicate and not billed.`}
              </Rule>
            </List>
          </Box>
          <Box>
            <Typography component="h2" variant="h6">
              Caps
            </Typography>
            <List dense>
              <Caps r={r} />
              <Rule name="Rate limits">
                {num(r.rate_limits.per_minute)} requests a minute, {num(r.rate_limits.per_day)} a day.
              </Rule>
            </List>
          </Box>
          <Box>
            <Typography component="h2" variant="h6">
              Intake hours (business days in {r.business_timezone})
            </Typography>
            <Schedule r={r} />
          </Box>
          <Box>
            <Typography component="h2" variant="h6">
              Every rule
            </Typography>
            <List dense>
              {r.rules.map((rule) => (
                <Rule key={`${rule.code}-${rule.outcome}`} name={RULE_LABELS[rule.code] ?? fieldLabel(rule.code)}>
                  {words(rule.description)} {rule.active ? "" : "(Not in force for you now.)"}
                </Rule>
              ))}
            </List>
          </Box>
        </Stack>
      )}
    </Box>
  );
}
