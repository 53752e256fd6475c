/**
 * The one line that says which clock a screen's times are in, under the page heading (or in a
 * list's place for it): timestamps in the viewer's own time zone, business days in the broker's
 * BUSINESS_TIMEZONE (named by the service in its answers: Stats.timezone, business_timezone).
 * Every screen of both apps that shows a time shows it (docs/decisions/0040).
 */
import { Typography } from "@mui/material";
import { viewerZone } from "../format.ts";

export function TimeZoneNote(props: {
  /** BUSINESS_TIMEZONE, where the screen shows business days; omitted where it shows none. */
  business?: string | null | undefined;
  /** False where the screen shows business days only (no timestamp). */
  times?: boolean;
}) {
  const times = props.times ?? true;
  const parts = [
    times ? `Times are in your time zone, ${viewerZone()}.` : null,
    props.business ? `Days are business days in ${props.business}.` : null,
  ].filter((p) => p !== null);
  if (parts.length === 0) return null;
  return (
    <Typography variant="body2" color="text.secondary" data-testid="time-zone-note" sx={{ my: 0.5 }}>
      {parts.join(" ")}
    </Typography>
  );
}
