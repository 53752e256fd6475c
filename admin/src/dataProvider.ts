/**
 * react-admin's data provider over the typed clients. Resources: `providers` (page-numbered, as the
 * Management API pages them), `leads` and `audit` (cursor-paged: react-admin moves page by page
 * and the cursor of each page is remembered), and single leads through the workflow service
 * (FindLead over Connect), which shows test leads too.
 */

import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { type DataProvider, HttpError, type RaRecord } from "react-admin";
import type { paths } from "../../generated/openapi/schema.ts";
import type { Lead as LeadMessage } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import { LeadState, OverseasType, ShipVia, VehicleType } from "../../generated/proto/leadprovider/v1/lead_pb.ts";
import { clean, cursorPage } from "../../ui/src/fetching.ts";
import { api, data, type Schemas, workflow } from "./api.ts";
import { getToken } from "./session.ts";

type Json = Record<string, unknown>;
const EDITABLE = [
  "name",
  "contact_email",
  "is_active",
  "rate_limit_per_minute",
  "rate_limit_per_day",
  "webhook_url",
  "notes",
];

/** The name of a protobuf-es enum value (the generated enums are plain objects, name → number). */
function enumName(values: Record<string, number>, n: number): string | null {
  if (n === 0) return null;
  return Object.entries(values).find(([, v]) => v === n)?.[0] ?? null;
}

/** A lead from FindLead in the REST shape, so lists and the detail page read the same fields. */
export function leadRecord(lead: LeadMessage, providerId: bigint): RaRecord {
  const iso = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t).toISOString() : null);
  const place = (p: LeadMessage["origin"]) => p && { zip: p.zip, city: p.city, state: p.state, state_id: p.stateId };
  return {
    id: Number(lead.id),
    provider_id: Number(providerId),
    livemode: lead.livemode,
    order_number: lead.orderNumber,
    state: enumName(LeadState, lead.state),
    lead_status: lead.leadStatus,
    external_id: lead.externalId,
    created_at: iso(lead.createdAt),
    updated_at: iso(lead.updatedAt),
    state_changed_at: iso(lead.stateChangedAt),
    first_name: lead.firstName,
    last_name: lead.lastName,
    email: lead.email,
    phone_number: lead.phoneNumber,
    company_name: lead.companyName ?? null,
    note_from_shipper: lead.noteFromShipper ?? null,
    estimated_ship_date: lead.estimatedShipDate,
    overseas_type: enumName(OverseasType, lead.overseasType),
    ship_via: enumName(ShipVia, lead.shipVia),
    origin: place(lead.origin),
    destination: place(lead.destination) ?? null,
    vehicles: lead.vehicles.map((v, i) => ({
      id: i,
      year: v.year,
      make: v.make,
      model: v.model,
      type: enumName(VehicleType, v.type),
      tariff: Number(v.tariff),
      deposit: Number(v.deposit),
      vehicle_run: v.vehicleRun ?? null,
      vin: v.vin ?? null,
    })),
    phone_e164: lead.phoneE164,
    sub_id: lead.subId ?? null,
    source_url: lead.sourceUrl ?? null,
    source: lead.source ?? null,
    consent: lead.consent
      ? {
          id: lead.consent.id ?? null,
          text_sha256: lead.consent.textSha256 ?? null,
          trusted_form_cert_url: lead.consent.trustedFormCertUrl ?? null,
          jornaya_lead_id: lead.consent.jornayaLeadId ?? null,
          consent_text: lead.consent.consentText ?? null,
          consented_at: lead.consent.consentedAt ?? null,
          ip_address: lead.consent.ipAddress ?? null,
          user_agent: lead.consent.userAgent ?? null,
          page_url: lead.consent.pageUrl ?? null,
        }
      : null,
    billable: lead.billable,
    return: lead.leadReturn
      ? {
          id: lead.leadReturn.id,
          state: lead.leadReturn.state,
          reason: lead.leadReturn.reason,
          note: lead.leadReturn.note ?? null,
          requested_at: iso(lead.leadReturn.requestedAt),
          contest_deadline: iso(lead.leadReturn.contestDeadline),
          decided_at: iso(lead.leadReturn.decidedAt),
          decision_note: lead.leadReturn.decisionNote ?? null,
        }
      : null,
    duplicate: lead.duplicate
      ? {
          matched_on: lead.duplicate.matchedOn,
          first_seen_at: iso(lead.duplicate.firstSeenAt),
          same_provider: lead.duplicate.sameProvider,
          original: lead.duplicate.original
            ? {
                id: Number(lead.duplicate.original.id),
                order_number: lead.duplicate.original.orderNumber,
                external_id: lead.duplicate.original.externalId,
              }
            : null,
        }
      : null,
    history: lead.history.map((h, i) => ({
      id: i,
      from_state: enumName(LeadState, h.fromState),
      to_state: enumName(LeadState, h.toState),
      lead_status: h.leadStatus,
      changed_at: iso(h.changedAt),
      actor: h.actor,
    })),
  };
}

/** A Connect error as react-admin's HttpError (unauthenticated → 401, so the console signs out). */
export function rpcError(err: unknown): never {
  if (err instanceof ConnectError) {
    const status =
      err.code === Code.Unauthenticated
        ? 401
        : err.code === Code.PermissionDenied
          ? 403
          : err.code === Code.NotFound
            ? 404
            : 400;
    throw new HttpError(err.rawMessage, status, { code: Code[err.code] });
  }
  throw err;
}

/** The export's page size: the largest every list allows. */
const EXPORT_PAGE = 100;

const unsupported = (what: string) => () => Promise.reject(new HttpError(`${what} is not available`, 405));

export type StatsQuery = NonNullable<paths["/api/v1/admin/stats/"]["get"]["parameters"]["query"]>;

const calls: DataProvider & { getAll(resource: string, filter: Json, limit: number): Promise<RaRecord[]> } = {
  async getList(resource, params) {
    const { page = 1, perPage = 25 } = params.pagination ?? {};
    const filter = clean(params.filter ?? {});
    if (resource === "providers") {
      const body = await data(
        api.GET("/api/v1/lead_providers/", {
          params: {
            query: {
              page,
              page_size: perPage,
              ...(filter.q !== undefined && { search: String(filter.q) }),
              ...(filter.is_active !== undefined && { is_active: Boolean(filter.is_active) }),
            },
          },
        }),
      );
      return { data: body.results as never[], total: body.count };
    }
    if (resource === "leads") {
      return cursorPage(resource, filter, page, perPage, async (token) =>
        data(
          api.GET("/api/v1/admin/leads/", {
            params: {
              query: {
                page_size: perPage,
                ...(token && { page_token: token }),
                ...(filter.provider_id !== undefined && { provider_id: Number(filter.provider_id) }),
                ...(filter.state !== undefined && { state: filter.state as Schemas["LeadState"] }),
                ...(filter.created_after !== undefined && {
                  created_after: new Date(String(filter.created_after)).toISOString(),
                }),
                ...(filter.created_before !== undefined && {
                  created_before: new Date(String(filter.created_before)).toISOString(),
                }),
                ...(filter.q !== undefined && { q: String(filter.q).trim() }),
                ...(filter.include_test === true && { include_test: true }),
                ...(filter.duplicate === true && { duplicate: true }),
              },
            },
          }),
        ),
      );
    }
    if (resource === "audit") {
      return cursorPage(resource, filter, page, perPage, async (token) =>
        data(
          api.GET("/api/v1/admin/audit_log/", {
            params: {
              query: {
                page_size: perPage,
                ...(token && { page_token: token }),
                ...(filter.provider_id !== undefined && { provider_id: Number(filter.provider_id) }),
                ...(filter.actor !== undefined && { actor: String(filter.actor) }),
              },
            },
          }),
        ),
      );
    }
    if (resource === "requests") {
      const answer = await cursorPage(resource, filter, page, perPage, async (token) =>
        data(
          api.GET("/api/v1/admin/requests/", {
            params: {
              query: {
                page_size: perPage,
                ...(token && { page_token: token }),
                ...(filter.request_id !== undefined && { request_id: String(filter.request_id).trim() }),
                ...(filter.provider_id !== undefined && { provider_id: Number(filter.provider_id) }),
                ...(filter.outcome !== undefined && {
                  outcome: filter.outcome as Schemas["RequestLogEntry"]["outcome"],
                }),
                ...(filter.code !== undefined && { code: String(filter.code).trim() }),
                ...(filter.livemode !== undefined && { livemode: String(filter.livemode) === "true" }),
                ...(filter.external_id !== undefined && { external_id: String(filter.external_id).trim() }),
                ...(filter.client_ip !== undefined && { client_ip: String(filter.client_ip).trim() }),
                ...(filter.created_after !== undefined && {
                  created_after: new Date(String(filter.created_after)).toISOString(),
                }),
                ...(filter.created_before !== undefined && {
                  created_before: new Date(String(filter.created_before)).toISOString(),
                }),
              },
            },
          }),
        ),
      );
      return { ...answer, data: answer.data.map((e: Json) => ({ ...e, id: e.request_id })) as never[] };
    }
    throw new HttpError(`unknown resource ${resource}`, 404);
  },

  async getOne(resource, params) {
    if (resource === "providers") {
      // The list, filtered by id: the provider without its key values (reading them is an audited reveal).
      const body = await data(api.GET("/api/v1/lead_providers/", { params: { query: { id: [Number(params.id)] } } }));
      const found = body.results[0];
      if (!found) throw new HttpError(`no provider with id ${params.id}`, 404);
      return { data: found as never };
    }
    if (resource === "leads") {
      const found = await workflow
        .findLead({ key: { case: "id", value: BigInt(params.id) }, includeTest: true })
        .catch(rpcError);
      if (!found.record?.lead) throw new HttpError(`no lead with id ${params.id}`, 404);
      return { data: leadRecord(found.record.lead, found.record.providerId) as never };
    }
    if (resource === "requests") {
      const entry = await data(
        api.GET("/api/v1/admin/requests/{request_id}/", { params: { path: { request_id: String(params.id) } } }),
      );
      return { data: { ...entry, id: entry.request_id } as never };
    }
    throw new HttpError(`unknown resource ${resource}`, 404);
  },

  async getMany(resource, params) {
    if (resource !== "providers") throw new HttpError(`unknown resource ${resource}`, 404);
    const ids = [...new Set(params.ids.map(Number))].slice(0, 100);
    const body = await data(api.GET("/api/v1/lead_providers/", { params: { query: { id: ids, page_size: 100 } } }));
    return { data: body.results as never[] };
  },

  async create(resource, params) {
    if (resource !== "providers") throw new HttpError(`cannot create ${resource}`, 405);
    const body = Object.fromEntries(
      Object.entries(params.data as Json).filter(
        ([k, v]) => EDITABLE.includes(k) && v !== undefined && v !== null && v !== "",
      ),
    );
    const created = await data(api.POST("/api/v1/lead_providers/create/", { body: body as Schemas["ProviderCreate"] }));
    return { data: created as never };
  },

  async update(resource, params) {
    if (resource !== "providers") throw new HttpError(`cannot update ${resource}`, 405);
    const previous = (params.previousData ?? {}) as Json;
    const next = params.data as Json;
    const changes = Object.fromEntries(
      EDITABLE.filter((k) => k in next && next[k] !== previous[k]).map((k) => [k, next[k] === "" ? null : next[k]]),
    );
    const updated = await data(
      api.PATCH("/api/v1/lead_providers/{id}/", {
        params: { path: { id: Number(params.id) } },
        body: changes as Schemas["ProviderUpdate"],
      }),
    );
    return { data: updated as never };
  },

  /**
   * Every row matching `filter`, all pages (the CSV export), 100 a page; more than `limit` rows is
   * refused with a request to narrow the filters rather than cut silently.
   */
  async getAll(resource: string, filter: Json, limit: number): Promise<RaRecord[]> {
    const all: RaRecord[] = [];
    for (let page = 1; ; page++) {
      const answer = await calls.getList(resource, {
        pagination: { page, perPage: EXPORT_PAGE },
        sort: { field: "id", order: "DESC" },
        filter,
      });
      all.push(...(answer.data as RaRecord[]));
      if (all.length > limit)
        throw new Error(`more than ${limit.toLocaleString("en-US")} rows match; narrow the filters and export again`);
      const more = answer.total !== undefined ? all.length < answer.total : answer.pageInfo?.hasNextPage === true;
      if (!more || answer.data.length === 0) return all;
    }
  },

  /** The dashboard's numbers: GET /api/v1/admin/stats/ (JSON). */
  async getStats(query: StatsQuery): Promise<Schemas["Stats"]> {
    return (await data(api.GET("/api/v1/admin/stats/", { params: { query } }))) as Schemas["Stats"];
  },

  /** Every provider's purchases per business day (the dashboard's spend chart). */
  async getSpend(query: { mode: "live" | "test"; days: number }): Promise<Schemas["PurchasesPerDay"]> {
    return data(api.GET("/api/v1/admin/ledger/spend/", { params: { query } }));
  },

  getManyReference: unsupported("getManyReference"),
  updateMany: unsupported("updateMany"),
  delete: unsupported("Deleting"),
  deleteMany: unsupported("Deleting"),
};

/**
 * Without a token nothing is sent: the console goes to sign-in at once, instead of sending a
 * request only to be refused (which the browser would log as an error).
 */
export const dataProvider = Object.fromEntries(
  Object.entries(calls).map(([name, call]) => [
    name,
    (...args: unknown[]) =>
      getToken()
        ? (call as (...a: unknown[]) => unknown)(...args)
        : Promise.reject(new HttpError("Sign in first.", 401)),
  ]),
) as DataProvider;
