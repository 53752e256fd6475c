/**
 * Returns over REST: administrators file, list, read, withdraw and decide returns; a provider (its
 * key, or its people in the portal) contests the return of its lead and lists its returns. JSON ↔
 * the returns service; one mapping per shape.
 */
import { Router } from "express";
import type { components } from "../../generated/openapi/schema.ts";
import type { RestFeature } from "../rest/feature.ts";
import { cursorPageJson } from "../rest/links.ts";
import { actorOf as actor, operation, portalOf, providerOf } from "../rest/typed.ts";
import { type ReturnQuery, ReturnRefusal, type ReturnsService } from "./returns.service.ts";
import { type LeadReturn, returnJson } from "./returns.ts";

type Json = components["schemas"];

export const adminReturnJson = (r: LeadReturn) => returnJson(r, "admin") as Json["Return"];
export const providerReturnJson = (r: LeadReturn) => returnJson(r, "provider") as Json["ProviderReturn"];

const date = (s: string | undefined) => (s === undefined ? undefined : new Date(s));

function queryOf(q: {
  page_size?: number;
  page_token?: string;
  state?: string;
  reason?: string;
  provider_id?: number;
  created_after?: string;
  created_before?: string;
}): ReturnQuery {
  return {
    pageSize: q.page_size,
    pageToken: q.page_token,
    state: q.state,
    reason: q.reason,
    providerId: q.provider_id,
    createdAfter: date(q.created_after),
    createdBefore: date(q.created_before),
  };
}

export function returnRoutes(returns: ReturnsService, publicBaseUrl?: string): RestFeature {
  const router = Router();
  const A = "/api/v1/admin";

  router.post(
    `${A}/leads/:lead_id/returns/`,
    operation("createLeadReturn", async (req, res) => {
      res.status(201).json(adminReturnJson(await returns.request(actor(res), req.params.lead_id, req.body)));
    }),
  );
  router.get(
    `${A}/returns/`,
    operation("listReturns", async (req, res) => {
      const page = await returns.list(queryOf(req.query));
      res.json(cursorPageJson(req, page, adminReturnJson, publicBaseUrl));
    }),
  );
  router.get(
    `${A}/returns/:return_id/`,
    operation("getReturn", async (req, res) => {
      res.json(adminReturnJson(await returns.get(req.params.return_id)));
    }),
  );
  router.post(
    `${A}/returns/:return_id/withdraw/`,
    operation("withdrawReturn", async (req, res) => {
      res.json(adminReturnJson(await returns.withdraw(actor(res), req.params.return_id, req.body)));
    }),
  );
  router.post(
    `${A}/returns/:return_id/decide/`,
    operation("decideReturn", async (req, res) => {
      res.json(adminReturnJson(await returns.decide(actor(res), req.params.return_id, req.body)));
    }),
  );

  router.post(
    "/api/v1/public/leads/:external_id/return/contest/",
    operation("contestReturn", async (req, res) => {
      const owner = providerOf(res);
      const r = await returns.contest(`provider:${owner.providerId}`, owner, req.params.external_id, req.body);
      res.json(providerReturnJson(r));
    }),
  );
  router.get(
    "/api/v1/public/returns/",
    operation("listOwnReturns", async (req, res) => {
      const page = await returns.listOwn(providerOf(res), queryOf(req.query));
      res.json(cursorPageJson(req, page, providerReturnJson, publicBaseUrl));
    }),
  );

  router.post(
    "/api/v1/portal/leads/:external_id/return/contest/",
    operation("contestPortalReturn", async (req, res) => {
      const person = portalOf(res);
      const book = { providerId: person.providerId, livemode: req.query.mode !== "test" };
      const r = await returns.contest(`portal:${person.userId}`, book, req.params.external_id, req.body);
      res.json(providerReturnJson(r));
    }),
  );
  router.get(
    "/api/v1/portal/returns/",
    operation("listPortalReturns", async (req, res) => {
      const person = portalOf(res);
      const book = { providerId: person.providerId, livemode: req.query.mode !== "test" };
      const page = await returns.listOwn(book, queryOf(req.query));
      res.json(cursorPageJson(req, page, providerReturnJson, publicBaseUrl));
    }),
  );

  return {
    router,
    explainers: {
      createLeadReturn: (body) => returns.requestViolations(body),
      decideReturn: (body) => returns.decisionViolations(body),
      contestReturn: (body) => returns.contestViolations(body),
      contestPortalReturn: (body) => returns.contestViolations(body),
    },
    problemExtension: (err) => (err instanceof ReturnRefusal ? err.extras : undefined),
  };
}
