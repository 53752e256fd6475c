/**
 * What of a request body the request log keeps: an allow-list. Members of the Public API's
 * contract that hold no personal data are kept as sent (text cut to MAX_TEXT characters); the
 * contract's personal members are masked to a hint (a name to its first letter, an email to its
 * first character and domain, a phone or VIN to its last four, an address to its network); a URL
 * keeps its origin and path, never its query or fragment. Anything else — a member the contract
 * does not know (`email_address`, `mobile`, `customer name`), free text (`note_from_shipper`,
 * `consent_text`) or a value of an unexpected type — keeps its key and only the value's type and
 * size (`…string(17)`). Keys are matched without case, `_` or `-`, so a lead sent over REST
 * (`phone_number`), Connect JSON or gRPC (`phoneNumber` in proto JSON) is kept the same way.
 *
 * The kept body is bounded: at most MAX_KEY characters a key and BODY_LIMIT_BYTES in all (as
 * JSON); past that, members are left out and the entry says `request_body_truncated`.
 */
import ipaddr from "ipaddr.js";

/** The size of a kept body, as JSON text, before members are left out. */
export const BODY_LIMIT_BYTES = 4096;
/** Kept text is cut to this many characters (the longest contract member kept, `external_id`, is 128). */
export const MAX_TEXT = 256;
/** Keys longer than this are cut. */
export const MAX_KEY = 64;

const MASKED = "…";

/** A value that is not kept: its type and size only. */
export function described(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `${MASKED}array(${v.length})`;
  switch (typeof v) {
    case "string":
      return `${MASKED}string(${[...v].length})`;
    case "object":
      return `${MASKED}object(${Object.keys(v as object).length})`;
    default:
      return `${MASKED}${typeof v}`;
  }
}

function cut(s: string): string {
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}${MASKED}` : s;
}

/** A contract member kept as sent: text (cut), a number or a boolean; any other shape is described. */
function keep(v: unknown): unknown {
  if (typeof v === "string") return cut(v);
  if (typeof v === "number" || typeof v === "boolean" || v === null) return v;
  return described(v);
}

/** `Maria` → `M…`. */
function maskName(v: unknown): unknown {
  return typeof v === "string" && v.length > 0 ? `${[...v][0]}${MASKED}` : described(v);
}

/** `maria@example.com` → `m***@example.com`. */
function maskEmail(v: unknown): unknown {
  if (typeof v !== "string" || v.length === 0) return described(v);
  const at = v.lastIndexOf("@");
  if (at < 1) return `${[...v][0]}***`;
  return `${[...v][0]}***@${cut(v.slice(at + 1))}`;
}

/** `+1 (310) 555-0142` → `…0142`: the last four digits. */
function maskPhone(v: unknown): unknown {
  if (typeof v !== "string") return described(v);
  return `${MASKED}${v.replace(/\D/g, "").slice(-4)}`;
}

/** A VIN to its last four characters (enough to tell two vehicles apart). */
function maskVin(v: unknown): unknown {
  if (typeof v !== "string") return described(v);
  return `${MASKED}${v.slice(-4)}`;
}

/** `203.0.113.7` → `203.0.113.0/24`; IPv6 to its /48. Anything that is not an address is described. */
function maskAddress(v: unknown): unknown {
  if (typeof v !== "string" || !ipaddr.isValid(v)) return described(v);
  const address = ipaddr.process(v);
  if (address.kind() === "ipv4") {
    const [a, b, c] = (address as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.0/24`;
  }
  const parts = (address as ipaddr.IPv6).parts;
  const prefix = new ipaddr.IPv6([parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, 0, 0, 0, 0, 0]);
  return `${prefix.toString()}/48`;
}

/** A URL to its origin and path (`https://x.example/form?email=…` → `https://x.example/form?…`). */
function maskUrl(v: unknown): unknown {
  if (typeof v !== "string") return described(v);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    return described(v);
  }
  if (url.username !== "" || url.password !== "") return described(v);
  const rest = url.search !== "" || url.hash !== "" ? `?${MASKED}` : "";
  return cut(`${url.origin}${url.pathname}${rest}`);
}

type Rule = (v: unknown, depth: number) => unknown;

/** An object of the contract (a vehicle, the consent): its members by this same table. */
const object: Rule = (v, depth) =>
  v !== null && typeof v === "object" && !Array.isArray(v)
    ? members(v as Record<string, unknown>, depth + 1)
    : described(v);
/** A list of contract objects (vehicles). */
const objects: Rule = (v, depth) => (Array.isArray(v) ? v.map((item) => object(item, depth + 1)) : described(v));

/**
 * Every member of the Public API's request bodies and RPC messages, by its folded name (lower
 * case, no `_` or `-`), and how it is kept. A member not listed is described (type and size).
 */
const RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  // A lead (POST /leads/, CreateLead).
  ["externalid", keep],
  ["originzip", keep],
  ["destinationzip", keep],
  ["origincity", keep],
  ["destinationcity", keep],
  ["originstate", keep],
  ["destinationstate", keep],
  ["estimatedshipdate", keep],
  ["overseastype", keep],
  ["shipvia", keep],
  ["subid", keep],
  ["sourceurl", maskUrl],
  ["firstname", maskName],
  ["lastname", maskName],
  ["companyname", maskName],
  ["email", maskEmail],
  ["phonenumber", maskPhone],
  ["vehicles", objects],
  // A vehicle.
  ["year", keep],
  ["make", keep],
  ["model", keep],
  ["type", keep],
  ["tariff", keep],
  ["deposit", keep],
  ["vehiclerun", keep],
  ["vin", maskVin],
  // The consent evidence.
  ["consent", object],
  ["consentedat", keep],
  ["trustedformcerturl", keep],
  ["jornayaleadid", keep],
  ["pageurl", maskUrl],
  ["ipaddress", maskAddress],
  // Lists (RPC messages carry their filters in the body).
  ["pagesize", keep],
  ["pagetoken", keep],
  ["state", keep],
  ["updatedafter", keep],
  ["createdafter", keep],
  ["createdbefore", keep],
]);

const ruleCache = new Map<string, Rule | null>();
/** The rule of a key (RULES), remembered for keys of up to MAX_KEY characters (bounded: 1,000 keys). */
function ruleOf(key: string): Rule | null {
  const remembered = key.length <= MAX_KEY ? ruleCache.get(key) : undefined;
  if (remembered !== undefined) return remembered;
  const rule = RULES.get(key.toLowerCase().replaceAll("_", "").replaceAll("-", "")) ?? null;
  if (key.length <= MAX_KEY) {
    if (ruleCache.size >= 1000) ruleCache.clear();
    ruleCache.set(key, rule);
  }
  return rule;
}

/** Contract objects nest two deep (a lead's vehicles, its consent); deeper is described. */
const MAX_DEPTH = 3;

function members(o: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const key = k.length > MAX_KEY ? `${k.slice(0, MAX_KEY)}${MASKED}` : k;
    const rule = depth < MAX_DEPTH ? ruleOf(k) : null;
    const value = rule ? rule(o[k], depth) : described(o[k]);
    // A key `__proto__` is defined, not assigned (which would set the prototype), so it stays a key.
    if (key === "__proto__")
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

export interface KeptBody {
  /** What is stored: the masked body, or null. */
  readonly body: unknown;
  /** Members were left out to keep the body within BODY_LIMIT_BYTES. */
  readonly truncated: boolean;
}

/** The JSON size of a value, or Infinity past `limit` (counting stops there). */
function sizeOf(v: unknown): number {
  return Buffer.byteLength(JSON.stringify(v) ?? "null");
}

/**
 * `value` with members left out until it fits `limit` bytes as JSON: an object's plain members,
 * then its nested ones (cut in turn) while they fit; a list's whole items in order while they fit.
 */
function fitted(value: unknown, limit: number): unknown {
  if (value === null || typeof value !== "object") return sizeOf(value) <= limit ? value : described(value);
  const list = Array.isArray(value);
  const out: Record<string, unknown> | unknown[] = list ? [] : {};
  let used = 2; // the brackets
  const all = list ? (value as unknown[]).map((v, i) => [String(i), v] as const) : Object.entries(value);
  // An object's plain members first (ids, ZIPs, dates: what tells the request apart), then its
  // lists and objects in the room left; a list's items in order.
  const nested = (v: unknown) => v !== null && typeof v === "object";
  const entries = list ? all : [...all.filter(([, v]) => !nested(v)), ...all.filter(([, v]) => nested(v))];
  for (const [k, v] of entries) {
    const prefix = (list ? 0 : sizeOf(k) + 1) + (used > 2 ? 1 : 0); // "key": and the comma
    const room = limit - used - prefix;
    if (room <= 0) break;
    const size = sizeOf(v);
    // A list's items go in whole or not at all (half a vehicle would read as a vehicle).
    if (list && size > room) break;
    const item = size <= room ? v : fitted(v, room);
    const itemSize = size <= room ? size : sizeOf(item);
    if (itemSize > room) break;
    if (list) (out as unknown[]).push(item);
    else if (k === "__proto__")
      Object.defineProperty(out, k, { value: item, enumerable: true, writable: true, configurable: true });
    else (out as Record<string, unknown>)[k] = item;
    used += prefix + itemSize;
  }
  return out;
}

/**
 * The body as the request log keeps it (see the module comment): the contract's members by the
 * allow-list, everything else as its type and size, within `limit` bytes of JSON. A body that is
 * not an object (a list, text) is described whole. Never mutates `body`.
 */
export function keptBody(body: unknown, limit = BODY_LIMIT_BYTES): KeptBody {
  if (body === undefined || body === null) return { body: null, truncated: false };
  const masked =
    typeof body === "object" && !Array.isArray(body) ? members(body as Record<string, unknown>, 0) : described(body);
  if (sizeOf(masked) <= limit) return { body: masked, truncated: false };
  return { body: fitted(masked, limit), truncated: true };
}
