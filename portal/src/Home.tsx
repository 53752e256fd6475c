/**
 * The portal's home: this week's numbers (Monday to today, the broker's calendar) — submitted,
 * accepted (billable and duplicates), rejected by reason in words, quoted, ordered — and whether
 * intake is open now, with the caps.
 */
import { Alert, Box, Card, CardContent, Chip, Stack, Typography } from "@mui/material";
import { useQuery } from "@tanstack/react-query";
import { Title } from "react-admin";
import { Link } from "react-router-dom";
import { TimeZoneNote } from "../../ui/src/components/TimeZoneNote.tsx";
import { dayIn, num, when } from "../../ui/src/format.ts";
import { codeLabel, fieldLabel } from "../../ui/src/labels.ts";
import { api, data, explain, type Schemas } from "./api.ts";

/**
 * Monday of this week and today, as YYYY-MM-DD business days: the calendar of `zone`
 * (BUSINESS_TIMEZONE, as the service names it), not the browser's.
 */
export function thisWeek(zone: string, now = new Date()): { from: string; to: string } {
  const to = dayIn(zone, now);
  const [y, m, d] = to.split("-").map(Number) as [number, number, number];
  const today = new Date(Date.UTC(y, m - 1, d));
  const monday = new Date(today.getTime() - ((today.getUTCDay() + 6) % 7) * 86_400_000);
  return { from: monday.toISOString().slice(0, 10), to };
}

function Figure({ name, value, note }: { name: string; value: number; note?: string }) {
  return (
    <Card variant="outlined" sx={{ minWidth: 130, flex: "1 1 130px" }}>
      <CardContent>
        <Typography variant="body2">{name}</Typography>
        <Typography component="p" variant="h4" data-testid={`figure-${name.toLowerCase()}`}>
          {num(value)}
        </Typography>
        {note && (
          <Typography variant="body2" data-testid={`figure-${name.toLowerCase()}-note`}>
            {note}
          </Typography>
        )}
      </CardContent>
    </Card>
  );
}

export function Home() {
  const rules = useQuery({
    queryKey: ["home-intake"],
    queryFn: () => data(api.GET("/api/v1/portal/intake_rules/")),
  });
  // The week is the broker's (BUSINESS_TIMEZONE, named by the intake rules): asked once it is known.
  const zone = rules.data?.business_timezone;
  const week = zone ? thisWeek(zone) : undefined;
  const stats = useQuery({
    queryKey: ["home-stats", week?.from, week?.to],
    enabled: week !== undefined,
    queryFn: () =>
      data(
        api.GET("/api/v1/portal/stats/", {
          params: { query: { from: week?.from ?? "", to: week?.to ?? "", granularity: "day" } },
        }),
      ) as Promise<Schemas["Stats"]>,
  });
  const t = stats.data?.totals;
  const rejected = Object.entries(t?.rejected ?? {}).filter(([, n]) => (n as number) > 0);
  return (
    <Box sx={{ p: { xs: 1, sm: 2 } }}>
      <Title title="Home" />
      <Typography component="h1" variant="h5" gutterBottom>
        This week
      </Typography>
      <TimeZoneNote business={zone} />
      <Typography variant="body2" gutterBottom>
        Live leads from Monday {week?.from ?? "…"} to today (business days in {zone ?? "the broker's time zone"}). A
        resend of a lead you already sent is not counted.
      </Typography>
      {rules.isError && <Alert severity="error">{explain(rules.error)}</Alert>}
      {stats.isError && <Alert severity="error">{explain(stats.error)}</Alert>}
      {t && (
        <Stack direction="row" flexWrap="wrap" useFlexGap spacing={2} sx={{ my: 2 }}>
          <Figure name="Submitted" value={t.submitted} />
          <Figure
            name="Accepted"
            value={t.accepted}
            note={`${num(t.billable ?? t.accepted - t.duplicates)} billable, ${num(t.duplicates)} ${t.duplicates === 1 ? "duplicate" : "duplicates"} (not billed)`}
          />
          <Figure name="Rejected" value={rejected.reduce((s, [, n]) => s + (n as number), 0)} />
          <Figure name="Quoted" value={t.quoted} />
          <Figure name="Ordered" value={t.ordered} />
        </Stack>
      )}
      {rejected.length > 0 && (
        <Box sx={{ mb: 2 }}>
          <Typography component="h2" variant="h6">
            Rejected by reason
          </Typography>
          <Stack direction="row" flexWrap="wrap" useFlexGap spacing={1}>
            {rejected.map(([code, n]) => (
              <Chip key={code} label={`${codeLabel(code)}: ${num(n as number)}`} />
            ))}
          </Stack>
          <Typography variant="body2" sx={{ mt: 1 }}>
            Each refused request is in <Link to="/requests">Requests</Link> with the reason.
          </Typography>
        </Box>
      )}
      <Typography component="h2" variant="h6" gutterBottom>
        Intake now
      </Typography>
      {rules.data && (
        <Stack spacing={1}>
          <Alert severity={rules.data.open ? "success" : "warning"} data-testid="intake-status">
            {rules.data.open
              ? `Intake is open${rules.data.closes_at ? ` until ${when(rules.data.closes_at)}` : ""}.`
              : rules.data.paused
                ? `Intake is paused by the broker${rules.data.paused_reason ? `: ${rules.data.paused_reason}` : ""}.`
                : `Intake is closed${rules.data.opens_at ? `; it opens ${when(rules.data.opens_at)}` : ""}.`}
          </Alert>
          {(["day", "week", "month"] as const).map((w) => {
            const cap = rules.data.cap_usage[w];
            return cap ? (
              <Typography key={w} variant="body2">
                {fieldLabel(`caps.${w}`)}: {num(cap.used)} of {num(cap.limit)} used, {num(cap.remaining)} left (resets{" "}
                {when(cap.resets_at)})
              </Typography>
            ) : null;
          })}
          <Typography variant="body2">
            Rate limits: {num(rules.data.rate_limits.per_minute)} requests a minute,{" "}
            {num(rules.data.rate_limits.per_day)} a day.
          </Typography>
        </Stack>
      )}
    </Box>
  );
}
