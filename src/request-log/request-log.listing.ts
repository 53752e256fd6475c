/**
 * Which requests the log lists one by one and which it only counts. Every change the gate
 * admitted (a lead created or refused, a provider's key verified, within its limits) is listed,
 * and every refusal of a read. Successful reads carry nothing to debug and are most of the
 * traffic of an integration that polls: the first READS_PER_CALLER_PER_MINUTE of a provider's mode
 * a minute are listed (examples with their request ids), the rest counted. Requests the gate did
 * not admit cost their sender nothing to send, so they too are listed only up to a budget and
 * counted beyond it (tallies per minute, provider, mode, outcome, code and, for reads, operation),
 * and the log's growth stays bounded whatever arrives:
 *
 * - a request no key named a provider for (401, or refused before the gate): at most
 *   PER_CALLER_PER_MINUTE an address a minute, and ANONYMOUS_PER_MINUTE in all, per instance;
 * - a request refused by a rate limit (429 `rate_limited`), or one the gate never saw whose key
 *   was identified afterwards (a malformed body): at most PER_CALLER_PER_MINUTE a provider and
 *   mode a minute.
 *
 * With bodies of anonymous requests never stored (their size and a hash instead), an anonymous
 * client adds at most ANONYMOUS_PER_MINUTE rows of about a kilobyte a minute per instance
 * (docs/request-log.md gives the measured bound).
 */

/** Listed one by one per caller (an address, or a provider's mode) and minute, beyond the admitted. */
export const PER_CALLER_PER_MINUTE = 10;
/** A provider's successful reads listed one by one per mode and minute. */
export const READS_PER_CALLER_PER_MINUTE = 10;
/** Listed one by one per instance and minute among requests with no provider. */
export const ANONYMOUS_PER_MINUTE = 120;
/** Callers remembered in one minute; past this every unadmitted request is counted. */
const MAX_CALLERS = 10_000;

export interface Listed {
  readonly providerId: number | null;
  readonly livemode: boolean | null;
  /** The gate verified the key and admitted the request (it may still have been refused later). */
  readonly gated: boolean;
  readonly outcome: string;
  /** The operation reads (GET, an RPC Get or List): nothing is changed by it. */
  readonly read: boolean;
  readonly clientIp: string | null;
  readonly createdAt: Date;
}

export type Listing = (entry: Listed) => boolean;

/** A listing decision per entry: true to list it, false to count it only. */
export function createListing(): Listing {
  let minute = -1;
  let anonymous = 0;
  const perCaller = new Map<string, number>();

  return (entry) => {
    const anonymousEntry = entry.providerId === null;
    const admitted = !anonymousEntry && entry.gated && entry.outcome !== "rate_limited";
    const sampledRead = admitted && entry.read && entry.outcome === "accepted";
    if (admitted && !sampledRead) return true;
    const m = Math.floor(entry.createdAt.getTime() / 60_000);
    if (m !== minute) {
      minute = m;
      anonymous = 0;
      perCaller.clear();
    }
    if (sampledRead) {
      const reader = `reads ${entry.providerId} ${entry.livemode}`;
      const read = perCaller.get(reader) ?? 0;
      if (read >= READS_PER_CALLER_PER_MINUTE || (read === 0 && perCaller.size >= MAX_CALLERS)) return false;
      perCaller.set(reader, read + 1);
      return true;
    }
    if (anonymousEntry && anonymous >= ANONYMOUS_PER_MINUTE) return false;
    const caller = anonymousEntry ? `ip ${entry.clientIp ?? ""}` : `provider ${entry.providerId} ${entry.livemode}`;
    const seen = perCaller.get(caller) ?? 0;
    if (seen >= PER_CALLER_PER_MINUTE) return false;
    if (seen === 0 && perCaller.size >= MAX_CALLERS) return false;
    perCaller.set(caller, seen + 1);
    if (anonymousEntry) anonymous += 1;
    return true;
  };
}
