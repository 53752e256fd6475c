/**
 * Which due deliveries a worker's claim takes: the fairness rules, apart from the SQL that reads
 * the queue and leases what is chosen (webhook.repository.ts claimDue, under one advisory lock so
 * every instance sees the same in-flight counts).
 *
 * - An endpoint (a provider's) never has more than `perEndpoint` deliveries in flight, counted
 *   across every instance: a receiver that hangs or answers slowly holds that many slots and no
 *   more, whatever its backlog.
 * - The queue is scanned in due order (next attempt, then id) for at most `scanSize(limit)` rows,
 *   and only among endpoints that still have room (`endpointsWithoutRoom` are left out of the
 *   scan), so a backlog of thousands at one full endpoint cannot fill the scan and hide other
 *   providers' deliveries behind it.
 * - Test-mode (sandbox) deliveries take at most `testLimit` of the claim; with none left, they
 *   are not scanned at all.
 */

/** A due delivery as the scan reads it, in due order. */
export interface DueDelivery {
  readonly id: number;
  readonly providerId: number;
  readonly livemode: boolean;
}

export interface ClaimRoom {
  /** Deliveries this claim may take (the worker's free slots). */
  readonly limit: number;
  /** Of which test-mode deliveries at most this many (the worker's free test slots). */
  readonly testLimit: number;
  /** Deliveries one endpoint may have in flight, across every instance. */
  readonly perEndpoint: number;
}

/** How many due rows one claim looks at: a bounded scan, four per free slot. */
export function scanSize(limit: number): number {
  return Math.max(0, limit) * 4;
}

/** Whether the scan reads test-mode deliveries at all (none when no test slot is free). */
export function scansTestDeliveries(room: ClaimRoom): boolean {
  return room.testLimit > 0;
}

/** The endpoints (provider ids) whose in-flight deliveries already fill their share: not scanned. */
export function endpointsWithoutRoom(inFlight: ReadonlyMap<number, number>, perEndpoint: number): number[] {
  const full: number[] = [];
  for (const [providerId, n] of inFlight) if (n >= perEndpoint) full.push(providerId);
  return full;
}

/**
 * The ids to lease, in due order: each due delivery in turn while the claim has room, skipping
 * one whose endpoint is at its share (its in-flight deliveries plus those this claim took) and a
 * test-mode one once the test share is taken.
 */
export function chooseDeliveries(
  due: readonly DueDelivery[],
  inFlight: ReadonlyMap<number, number>,
  room: ClaimRoom,
): number[] {
  const chosen: number[] = [];
  const taken = new Map<number, number>();
  let tests = 0;
  for (const d of due) {
    if (chosen.length >= room.limit) break;
    const busy = (inFlight.get(d.providerId) ?? 0) + (taken.get(d.providerId) ?? 0);
    if (busy >= room.perEndpoint) continue;
    if (!d.livemode) {
      if (tests >= room.testLimit) continue;
      tests += 1;
    }
    taken.set(d.providerId, (taken.get(d.providerId) ?? 0) + 1);
    chosen.push(d.id);
  }
  return chosen;
}
