/**
 * What saving the intake form changes, in words, for its confirmation: one line a setting, e.g.
 * "Accepted origin states: adds TX, removes CA", "Day cap: 100 → 50", "Paused: no → yes".
 */
type Value = unknown;
type Rules = Record<string, Value>;

const LABELS: Record<string, string> = {
  paused: "Paused",
  paused_reason: "Pause reason",
  origin_states: "Accepted origin states",
  destination_states: "Accepted destination states",
  overseas_types: "Accepted overseas types",
  ship_via: "Accepted ways to ship",
  vehicle_types: "Accepted vehicle types",
  max_vehicles: "Most vehicles a lead",
  require_destination_zip: "Destination ZIP required",
  ship_date_min_days: "Ship date at least (days ahead)",
  ship_date_max_days: "Ship date at most (days ahead)",
  reject_disposable_email: "Refuse disposable email",
  consent_required: "Consent required",
  duplicate_policy: "Duplicates",
  schedule: "Opening hours",
};
const CAPS: Record<string, string> = { day: "Day cap", week: "Week cap", month: "Month cap" };
/** Members that describe the rules rather than set them. */
const SKIP = new Set(["version", "updated_at", "cap_usage"]);

function shown(v: Value): string {
  if (v === null || v === undefined || v === "") return "none";
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (Array.isArray(v)) return v.length === 0 ? "none" : v.join(", ");
  return String(v);
}

function listChange(before: Value, after: Value): string | undefined {
  const was = Array.isArray(before) ? (before as string[]) : null;
  const now = Array.isArray(after) ? (after as string[]) : null;
  if (was === null && now === null) return undefined;
  // null is "any": a change to or from it is said whole.
  if (was === null) return `any → only ${shown(now)}`;
  if (now === null) return "any (no limit)";
  const adds = now.filter((x) => !was.includes(x));
  const removes = was.filter((x) => !now.includes(x));
  const parts = [adds.length ? `adds ${adds.join(", ")}` : "", removes.length ? `removes ${removes.join(", ")}` : ""];
  return parts.filter(Boolean).join("; ") || undefined;
}

const same = (a: Value, b: Value) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** The changes from `before` to `after`, one sentence per setting that differs; [] when none does. */
export function intakeChanges(before: Rules, after: Rules): string[] {
  const lines: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !SKIP.has(k));
  for (const key of keys) {
    const was = before[key];
    const now = after[key];
    if (same(was, now)) continue;
    if (key === "caps") {
      const a = (was ?? {}) as Record<string, Value>;
      const b = (now ?? {}) as Record<string, Value>;
      for (const w of Object.keys(CAPS)) {
        if (!same(a[w], b[w])) lines.push(`${CAPS[w]}: ${shown(a[w])} → ${shown(b[w])}`);
      }
      continue;
    }
    const label = LABELS[key] ?? key.replaceAll("_", " ");
    if (key === "schedule") {
      const a = (was ?? {}) as Record<string, Value>;
      const b = (now ?? {}) as Record<string, Value>;
      const days = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((d) => !same(a[d], b[d]));
      lines.push(
        was === null
          ? `${label}: always open → set`
          : now === null
            ? `${label}: always open`
            : `${label}: ${days.join(", ")} changed`,
      );
      continue;
    }
    if (Array.isArray(was) || Array.isArray(now)) {
      const change = listChange(was, now);
      if (change) lines.push(`${label}: ${change}`);
      continue;
    }
    lines.push(`${label}: ${shown(was)} → ${shown(now)}`);
  }
  return lines;
}
