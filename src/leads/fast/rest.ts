/**
 * The Public API's two hot operations, GET /api/v1/public/leads/{external_id}/ and POST
 * /api/v1/public/leads/, served without Express (docs/decisions/0025-performance-floor-and-fast-paths.md: Express routing, the OpenAPI
 * validator's per-request route lookup and the middleware chain cost more CPU than the database
 * work of a request).
 *
 * The fast path takes only the canonical shape of a request: the exact path, no query string, no
 * conditional or encoded request, a JSON body of declared length. Everything else goes to
 * Express untouched. Every answer other than success is rendered by Express too: the fast path
 * hands the request over with what it has already done (the parsed body, the verified caller
 * and its quota, or the error), so the gate never runs twice and every error is worded by the
 * one error handler (rest/problem.ts). A body the contract's schema rejects is handed over
 * unjudged, and the OpenAPI validator words the rejection as it always does.
 *
 * Success answers are written as Express writes them: `application/json; charset=utf-8`, a weak
 * ETag of the body, the Location of a created lead.
 */

import { hash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ClientAddress } from "../../edge/client-address.ts";
import { rateLimitHeaders } from "../../edge/rate-limit-headers.ts";
import { noteCaller, noteLead, noteOf } from "../../edge/request-note.ts";
import { type Caller, type Gate, SURFACES } from "../../edge/surfaces.ts";
import type { Quota } from "../../limits.ts";
import { markFastPath, type RouteLabels } from "../../observe.ts";
import { type Handoff, markHandoff, type NodeHandler, type RestShortcut } from "../../rest/handoff.ts";
import { createdLeadJson, LEADS_PATH, leadJson, leadLocation } from "../lead.rest.ts";
import type { LeadService } from "../lead.service.ts";
import type { SchemaValidators } from "./schema-validators.ts";

export interface FastPathDeps {
  readonly gate: Gate;
  readonly clientAddress: ClientAddress;
  readonly leads: LeadService;
  readonly schemas: SchemaValidators;
  /** Headers every REST answer carries (rest/app.ts). */
  readonly headers: Readonly<Record<string, string>>;
  /** Check success bodies against the contract (VALIDATE_RESPONSES), as the validator would. */
  readonly validateResponses: boolean;
}

const PUBLIC = SURFACES.find((s) => s.name === "public");
/** The two operations' labels in metrics and the log: their OpenAPI path templates (observe.ts). */
export const FAST_ROUTES = {
  get: { route: `${LEADS_PATH}{external_id}/`, protocol: "rest" },
  create: { route: LEADS_PATH, protocol: "rest" },
} as const;
const MAX_BODY = 64 * 1024;
const JSON_TYPES = new Set(["application/json", "application/json; charset=utf-8"]);
/** What the validator throws for an answer that breaks the contract (rendered as its 500). */
const OFF_CONTRACT = { status: 500, errors: [{ path: "/response", message: "does not match the contract" }] };
/** The body-parser error a malformed body gives, so the error handler words it the same. */
const MALFORMED = Object.assign(new SyntaxError("malformed JSON"), { type: "entity.parse.failed", status: 400 });

/**
 * The weak ETag Express gives a JSON body (the `etag` package: the body's length in hex and the
 * first 27 characters of its SHA-1 in base64) of the body's UTF-8 bytes, with the one-shot
 * crypto.hash rather than a Hash object per answer. `body` is never empty here.
 */
function weakEtag(body: Buffer): string {
  return `W/"${body.length.toString(16)}-${hash("sha1", body, "base64").slice(0, 27)}"`;
}

/** True when a single path segment needs no decoding and fits the contract (1–128 characters). */
function plainSegment(s: string): boolean {
  return s.length > 0 && s.length <= 128 && !s.includes("/") && !s.includes("%");
}

/** Requests whose answer may depend on what the fast path does not look at go to Express. */
function conditional(req: IncomingMessage): boolean {
  const h = req.headers;
  return (
    h["if-none-match"] !== undefined || h["if-modified-since"] !== undefined || h["content-encoding"] !== undefined
  );
}

/** The whole body (its length was checked from Content-Length): events, not an async iterator. */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.once("error", reject);
    req.once("aborted", () => reject(new Error("request aborted")));
  });
}

export function createRestFastPath(deps: FastPathDeps): RestShortcut {
  if (!PUBLIC) throw new Error("the public surface is missing from the surface table");
  const surface = PUBLIC;
  const { gate, leads } = deps;
  /** To Express (given by the REST edge with each request), for everything the fast path does not finish. */
  const handOver = (
    express: NodeHandler,
    req: IncomingMessage,
    res: ServerResponse,
    handoff: Handoff,
    body?: unknown,
  ) => {
    markHandoff(req, handoff, body);
    express(req, res);
  };

  /** Authenticates and admits; the caller and quota, with the quota's headers set. */
  const admit = async (req: IncomingMessage, res: ServerResponse): Promise<{ caller: Caller; quota?: Quota }> => {
    const caller = await gate.authenticate(surface, req.headers.authorization, deps.clientAddress(req));
    noteCaller(req, caller);
    const quota = await gate.limit(surface, caller);
    if (quota) {
      const headers = rateLimitHeaders(quota);
      for (const k in headers) res.setHeader(k, headers[k] as string);
    }
    return quota ? { caller, quota } : { caller };
  };

  const send = (
    res: ServerResponse,
    labels: RouteLabels,
    status: number,
    body: string,
    extra?: Record<string, string>,
  ) => {
    for (const k in deps.headers) res.setHeader(k, deps.headers[k] as string);
    if (extra) for (const k in extra) res.setHeader(k, extra[k] as string);
    // Encoded once: the length, the ETag and the socket take the same bytes (a string body was
    // encoded three times, and joined to the header first).
    const bytes = Buffer.from(body, "utf8");
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Content-Length", bytes.length);
    res.setHeader("ETag", weakEtag(bytes));
    res.statusCode = status;
    markFastPath(res, labels);
    res.end(bytes);
  };

  const providerOf = (caller: Caller) => {
    if (caller.kind !== "provider") throw new Error("the public surface admitted a caller without a key");
    return caller.provider;
  };

  async function getLead(express: NodeHandler, req: IncomingMessage, res: ServerResponse, externalId: string) {
    let admitted: { caller: Caller; quota?: Quota } | undefined;
    try {
      const note = noteOf(req);
      if (note) note.externalId = externalId;
      admitted = await admit(req, res);
      const lead = await leads.get(providerOf(admitted.caller), externalId);
      noteLead(req, lead);
      const body = leadJson(lead);
      if (deps.validateResponses && !deps.schemas.lead(body))
        return handOver(express, req, res, { ...admitted, error: OFF_CONTRACT });
      send(res, FAST_ROUTES.get, 200, JSON.stringify(body));
    } catch (error) {
      handOver(express, req, res, { ...admitted, error });
    }
  }

  async function createLead(express: NodeHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let parsed: unknown;
    try {
      parsed = JSON.parse((await readBody(req)).toString("utf8"));
      // body-parser's strict mode: only an object or an array is a JSON body.
      if (parsed === null || typeof parsed !== "object") throw MALFORMED;
    } catch {
      if (!req.complete) return; // the client went away mid-body: nothing to answer
      return handOver(express, req, res, { error: MALFORMED });
    }
    const note = noteOf(req);
    if (note) note.body = parsed;
    let admitted: { caller: Caller; quota?: Quota } | undefined;
    try {
      admitted = await admit(req, res);
      // A body the contract rejects: the validator words the rejection (after this same gate).
      if (!deps.schemas.leadCreate(parsed)) return handOver(express, req, res, admitted, parsed);
      const created = await leads.create(providerOf(admitted.caller), parsed);
      noteLead(req, created.lead);
      const body = createdLeadJson(created);
      if (deps.validateResponses && !deps.schemas.leadCreated(body)) {
        return handOver(express, req, res, { ...admitted, error: OFF_CONTRACT }, parsed);
      }
      send(res, FAST_ROUTES.create, 201, JSON.stringify(body), { Location: leadLocation(created.lead.externalId) });
    } catch (error) {
      handOver(express, req, res, { ...admitted, error }, parsed);
    }
  }

  return (req, res, express) => {
    const url = req.url ?? "";
    if (!url.startsWith(LEADS_PATH) || url.includes("?") || conditional(req)) return express(req, res);
    if (req.method === "GET" && url.endsWith("/") && url.length > LEADS_PATH.length) {
      const externalId = url.slice(LEADS_PATH.length, -1);
      if (plainSegment(externalId)) return void getLead(express, req, res, externalId);
    } else if (req.method === "POST" && url.length === LEADS_PATH.length) {
      const length = Number(req.headers["content-length"]);
      const type = req.headers["content-type"]?.toLowerCase();
      if (type !== undefined && JSON_TYPES.has(type) && length > 0 && length <= MAX_BODY) {
        return void createLead(express, req, res);
      }
    }
    express(req, res);
  };
}
