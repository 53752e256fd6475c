/**
 * react-admin's data provider over the portal's routes. Every list is cursor-paged (page n is
 * fetched with the token page n-1 gave); `mode` (live or test) is a filter. Leads are known by
 * their external id, requests by their request id, deliveries by their number.
 */
import type { DataProvider } from "react-admin";
import { clean, cursorPage } from "../../ui/src/fetching.ts";
import { api, data } from "./api.ts";

type Json = Record<string, unknown>;

const mode = (filter: Json) => (filter.mode === "test" ? "test" : "live") as "live" | "test";
const asLead = (l: Json) => ({ ...l, lead_id: l.id, id: l.external_id });
const asRequest = (r: Json) => ({ ...r, id: r.request_id });

export const dataProvider = {
  async getList(resource: string, params: { pagination?: { page: number; perPage: number }; filter?: Json }) {
    const { page, perPage } = params.pagination ?? { page: 1, perPage: 25 };
    const filter = clean(params.filter ?? {});
    if (resource === "leads") {
      const r = await cursorPage(resource, filter, page, perPage, (page_token) =>
        data(
          api.GET("/api/v1/portal/leads/", {
            params: {
              query: {
                mode: mode(filter),
                page_size: perPage,
                page_token,
                state: filter.state as never,
                sub_id: filter.sub_id as string | undefined,
                q: filter.q as string | undefined,
              },
            },
          }),
        ),
      );
      return { ...r, data: r.data.map(asLead) as never[] };
    }
    if (resource === "requests") {
      const r = await cursorPage(resource, filter, page, perPage, (page_token) =>
        data(
          api.GET("/api/v1/portal/requests/", {
            params: {
              query: {
                mode: mode(filter),
                page_size: perPage,
                page_token,
                outcome: filter.outcome as never,
                external_id: filter.external_id as string | undefined,
              },
            },
          }),
        ),
      );
      return { ...r, data: r.data.map(asRequest) as never[] };
    }
    if (resource === "deliveries") {
      return cursorPage(resource, filter, page, perPage, (page_token) =>
        data(api.GET("/api/v1/portal/webhook/deliveries/", { params: { query: { page_size: perPage, page_token } } })),
      );
    }
    throw new Error(`no list of ${resource}`);
  },
  async getOne(resource: string, params: { id: string | number; meta?: { mode?: string } }) {
    const id = String(params.id);
    const m = params.meta?.mode === "test" ? "test" : "live";
    if (resource === "leads") {
      const lead = await data(
        api.GET("/api/v1/portal/leads/{external_id}/", {
          params: { path: { external_id: id }, query: { mode: m } },
        }),
      );
      return { data: asLead(lead as Json) };
    }
    if (resource === "requests") {
      const entry = await data(
        api.GET("/api/v1/portal/requests/{request_id}/", { params: { path: { request_id: id }, query: { mode: m } } }),
      );
      return { data: asRequest(entry as Json) };
    }
    if (resource === "deliveries") {
      const d = await data(
        api.GET("/api/v1/portal/webhook/deliveries/{delivery_id}/", { params: { path: { delivery_id: Number(id) } } }),
      );
      return { data: d };
    }
    throw new Error(`no ${resource}`);
  },
  getMany: () => Promise.reject(new Error("not supported")),
  getManyReference: () => Promise.reject(new Error("not supported")),
  create: () => Promise.reject(new Error("not supported")),
  update: () => Promise.reject(new Error("not supported")),
  updateMany: () => Promise.reject(new Error("not supported")),
  delete: () => Promise.reject(new Error("not supported")),
  deleteMany: () => Promise.reject(new Error("not supported")),
} as unknown as DataProvider;
