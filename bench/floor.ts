/**
 * The floor: a bare `node:http` + `pg` server doing exactly the service's database work for the
 * two Public API operations the bench loads, and nothing else. Per request: one API-key SELECT
 * (the service's own statement; the service itself caches it for a few seconds), then the
 * service's own lead statement (src/leads/lead.repository.ts, the same text, sent as named
 * statements), JSON in and out. No validation, no rate limits, no logs, no metrics, no routing
 * beyond two string tests: what any Node server must spend to do this database work, so a
 * service figure divided by the floor's says what the service's own layers cost.
 *
 * Started by bench/run.ts as `node bench/floor.ts` with DATABASE_URL, API_KEY_SECRET, PORT and
 * DATABASE_POOL_SIZE; prints "listening" when ready.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import pg from "pg";
import { FIND_KEY_BY_DIGEST } from "../src/api-keys/api-key.repository.ts";
import { createKeyCrypto } from "../src/api-keys/api-key.ts";
import { newEventId } from "../src/events/event.ts";
import { FIND_LEAD } from "../src/leads/lead.repository.ts";
import type { NewLead } from "../src/leads/lead.ts";
import { INSERT_LEAD, insertLeadParams } from "../src/leads/lead-insert.repository.ts";
import { ZIPS } from "./lib/leads.ts";

const env = process.env;
const crypto = createKeyCrypto(env.API_KEY_SECRET ?? "");
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE ?? 20) });
// The service's parsers: int8 as a number, dates as text.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1082, (v) => v);

const LEADS = "/api/v1/public/leads/";

/**
 * The duplicate check the bench provider's typical rules give the service (bench/run.ts sets
 * them): both match keys over 30 days, flag, no caps.
 */
const FLOOR_GUARD = { matchPhone: true, matchEmail: true, windowDays: 30, rejectDuplicates: false, caps: [] };
const places = new Map(ZIPS.map((z) => [z.zip, z]));

interface Row {
  [column: string]: unknown;
}

async function owner(req: IncomingMessage): Promise<{ providerId: number; livemode: boolean } | undefined> {
  const key = req.headers.authorization?.slice("Bearer ".length) ?? "";
  const { rows } = await pool.query({
    name: "key",
    text: FIND_KEY_BY_DIGEST.sql,
    values: FIND_KEY_BY_DIGEST.parameters({ digest: crypto.digest(key) }),
  });
  const k = rows[0] as { providerId: number; mode: string } | undefined;
  return k && { providerId: k.providerId, livemode: k.mode === "live" };
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(v as string).toISOString());
const place = (zip: unknown, city: unknown, state: unknown, stateId: unknown) =>
  zip === null ? null : { zip, city, state, state_id: stateId };

function leadJson(r: Row): string {
  return JSON.stringify({
    id: r.id,
    livemode: r.livemode,
    order_number: r.order_number,
    state: r.state,
    lead_status: r.lead_status,
    external_id: r.external_id,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    state_changed_at: iso(r.state_changed_at),
    first_name: r.first_name,
    last_name: r.last_name,
    email: r.email,
    phone_number: r.phone_number,
    company_name: r.company_name,
    note_from_shipper: r.note_from_shipper,
    estimated_ship_date: r.estimated_ship_date,
    overseas_type: r.overseas_type,
    ship_via: r.ship_via,
    origin: place(r.origin_zip, r.origin_city, r.origin_state_code, r.origin_state_id),
    destination: place(r.destination_zip, r.destination_city, r.destination_state_code, r.destination_state_id),
    vehicles: r.vehicles,
    history: (r.history as Row[]).map((h) => ({ ...h, changed_at: iso(h.changed_at) })),
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

async function get(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const who = await owner(req);
  if (!who) return send(res, 401, '{"code":"invalid_api_key"}');
  const externalId = decodeURIComponent((req.url as string).slice(LEADS.length, -1));
  const { rows } = await pool.query({
    name: "get",
    text: FIND_LEAD.byExternalId.sql,
    values: FIND_LEAD.byExternalId.parameters({ ...who, externalId }),
  });
  const row = rows[0] as Row | undefined;
  if (!row) return send(res, 404, '{"code":"lead_not_found"}');
  send(res, 200, leadJson(row));
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const b = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const who = await owner(req);
  if (!who) return send(res, 401, '{"code":"invalid_api_key"}');
  const o = places.get(b.origin_zip) ?? ZIPS[0];
  const d = places.get(b.destination_zip) ?? null;
  const lead: NewLead = {
    externalId: b.external_id,
    firstName: b.first_name,
    lastName: b.last_name,
    email: b.email,
    phoneNumber: b.phone_number,
    // A bare server's normalisation (US numbers); the service parses with libphonenumber.
    phoneE164: `+1${String(b.phone_number)
      .replace(/[^0-9]/g, "")
      .slice(-10)}`,
    companyName: b.company_name ?? null,
    noteFromShipper: b.note_from_shipper ?? null,
    estimatedShipDate: b.estimated_ship_date,
    overseasType: b.overseas_type,
    shipVia: b.ship_via,
    origin: { zip: o.zip, city: o.city, stateCode: o.stateCode, stateId: o.stateId },
    destination: d && { zip: d.zip, city: d.city, stateCode: d.stateCode, stateId: d.stateId },
    vehicles: b.vehicles.map((v: Row) => ({ ...v, vehicleRun: v.vehicle_run ?? null, vin: v.vin ?? null })),
    subId: b.sub_id ?? null,
    sourceUrl: b.source_url ?? null,
    consent: null,
  };
  const actor = `provider:${who.providerId}`;
  const values = INSERT_LEAD.parameters(insertLeadParams(who, lead, actor, newEventId(), FLOOR_GUARD));
  // As the service does (lead.repository.ts): a random id or order number already taken is drawn again.
  let rows: Row[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      ({ rows } = await pool.query({ name: "create", text: INSERT_LEAD.sql, values }));
      break;
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      const taken = e.code === "23505" && (e.constraint === "leads_pkey" || e.constraint === "leads_order_number_key");
      if (attempt >= 5 || !taken) throw err;
    }
  }
  const row = rows[0] as { id: number | null; order_number: string; created_at: Date; duplicate: unknown } | undefined;
  if (!row || row.id === null) return send(res, 409, '{"code":"duplicate_external_id"}');
  const at = row.created_at.toISOString();
  send(
    res,
    201,
    JSON.stringify({
      ...b,
      id: row.id,
      livemode: who.livemode,
      order_number: row.order_number,
      state: "LEAD",
      lead_status: "LEAD",
      created_at: at,
      updated_at: at,
      state_changed_at: at,
      origin: place(o.zip, o.city, o.stateCode, o.stateId),
      destination: d && place(d.zip, d.city, d.stateCode, d.stateId),
      history: [{ from_state: null, to_state: "LEAD", lead_status: "LEAD", changed_at: at, actor }],
      phone_e164: lead.phoneE164,
      duplicate: row.duplicate,
      billable: row.duplicate === null,
      warnings: [],
    }),
  );
}

const server = createServer((req, res) => {
  if (req.url === "/healthz") return send(res, 200, '{"status":"ok"}');
  const work =
    req.method === "POST" && req.url === LEADS
      ? create(req, res)
      : req.method === "GET" && req.url?.startsWith(LEADS)
        ? get(req, res)
        : Promise.resolve(send(res, 404, '{"code":"not_found"}'));
  work.catch((err: unknown) => send(res, 500, JSON.stringify({ error: String(err) })));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(env.PORT ?? 0), "127.0.0.1", () => process.stdout.write("listening\n"));
process.on("SIGTERM", () => {
  server.close();
  void pool.end();
  server.closeAllConnections();
});
