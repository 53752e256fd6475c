/** The business time zone's default and the check of a zone name (config.ts reads BUSINESS_TIMEZONE with them). */
import { DateTime } from "luxon";

export const DEFAULT_BUSINESS_TIMEZONE = "America/New_York";

/** True when `zone` is an IANA time zone Luxon (and so Intl) knows. */
export function isKnownTimeZone(zone: string): boolean {
  return DateTime.now().setZone(zone).isValid;
}
