/**
 * gRPC's two hot unary calls, PublicLeadService/GetLead and /CreateLead over HTTP/2, served
 * without connect-node's per-call machinery (docs/decisions/0025-performance-floor-and-fast-paths.md: async iterable pipelines, a per-call
 * AbortController aborted at the end of every call, which builds a DOMException with a stack
 * trace each time, and the allocations around them cost more than the rest of the call).
 *
 * Only plain calls are taken: binary protobuf (`application/grpc` or `application/grpc+proto`),
 * no compression, no deadline header. Everything else (Connect, gRPC-Web, JSON, compressed
 * bodies, deadlines, other methods) goes to connect-node untouched. A taken call is answered as
 * connect-node answers it: the same gate (surface table), the same lead service, the same
 * message (rpc/lead-wire.ts writes leadMessage's bytes without reflection; test/lead-wire.test.ts
 * compares them), the same error table (rpc/errors.ts) written into the trailers by connect's own
 * `setTrailerStatus`, rate-limit headers on the response (or in the trailers of an error), and
 * `application/grpc+proto` as the content type. test/fast-path.test.ts compares the two paths'
 * answers.
 */

import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import {
  CreateLeadRequestSchema,
  GetLeadRequestSchema,
} from "../../../generated/proto/leadprovider/v1/public_lead_service_pb.ts";
import type { ClientAddress } from "../../edge/client-address.ts";
import { rateLimitHeaders } from "../../edge/rate-limit-headers.ts";
import { noteCaller, noteLead, noteOf } from "../../edge/request-note.ts";
import { type Caller, type Gate, SURFACES } from "../../edge/surfaces.ts";
import { DomainError } from "../../errors.ts";
import type { Quota } from "../../limits.ts";
import { errorForLog, type Logger } from "../../logger.ts";
import { markFastPath } from "../../observe.ts";
import { type ErrorDetailExtension, toConnectError } from "../../rpc/errors.ts";
import { noteRpcFailure } from "../../rpc/interceptors.ts";
import type { GrpcShortcut } from "../../rpc/shortcut.ts";
import { createLeadInput } from "../lead.rpc.ts";
import type { LeadService } from "../lead.service.ts";
import { createLeadResponseBytes, getLeadResponseBytes } from "./lead-wire.ts";

export interface GrpcFastPathDeps {
  readonly gate: Gate;
  readonly clientAddress: ClientAddress;
  readonly leads: LeadService;
  readonly logger: Logger;
  /** The same cap as connect-node's readMaxBytes. */
  readonly readMaxBytes: number;
  /** The same error details as the RPC edge's (RpcDeps.errorDetails). */
  readonly errorDetails?: readonly ErrorDetailExtension[];
}

const SERVICE = "/leadprovider.v1.PublicLeadService/";
const GET = `${SERVICE}GetLead`;
const CREATE = `${SERVICE}CreateLead`;
const PLAIN_TYPES = new Set(["application/grpc", "application/grpc+proto"]);
const PUBLIC = SURFACES.find((s) => s.name === "public");

/** A call's outcome: the response message in its gRPC frame, or what went wrong. */
type Outcome = { readonly frame: Uint8Array } | { readonly error: unknown };

export function createGrpcFastPath(deps: GrpcFastPathDeps): GrpcShortcut {
  if (!PUBLIC) throw new Error("the public surface is missing from the surface table");
  const surface = PUBLIC;
  const { gate, leads } = deps;

  /** The one message of a unary request, as connect-node's envelope reader words its refusals. */
  function unaryMessage(body: Buffer, method: string): Uint8Array {
    if (body.length === 0) {
      throw new ConnectError(`protocol error: missing input message for unary method`, Code.Unimplemented);
    }
    if (body.length < 5) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    const flags = body[0] as number;
    const length = body.readUInt32BE(1);
    if (body.length < 5 + length) throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    if (body.length > 5 + length) {
      throw new ConnectError(`protocol error: received extra input message for unary method`, Code.Unimplemented);
    }
    if ((flags & 0x01) !== 0) {
      throw new ConnectError(
        `protocol error: received compressed message for ${method} without an encoding`,
        Code.Internal,
      );
    }
    return body.subarray(5);
  }

  /** Bytes that are not the request message are the caller's mistake: INVALID_ARGUMENT, never INTERNAL. */
  function parse<T>(decode: () => T): T {
    try {
      return decode();
    } catch (e) {
      throw new ConnectError(`parse binary: ${e instanceof Error ? e.message : String(e)}`, Code.InvalidArgument);
    }
  }

  async function call(req: Http2ServerRequest, body: Buffer): Promise<{ outcome: Outcome; quota?: Quota }> {
    let quota: Quota | undefined;
    const note = noteOf(req);
    try {
      const bytes = unaryMessage(body, req.url);
      const isGet = req.url === GET;
      const getRequest = isGet ? parse(() => fromBinary(GetLeadRequestSchema, bytes)) : undefined;
      const createRequest = isGet ? undefined : parse(() => fromBinary(CreateLeadRequestSchema, bytes));
      if (note) {
        // The request as received, in its JSON form (request-log/request-log.ts masks it).
        // GetLeadRequest has one field: its JSON form is written out rather than reflected.
        note.body = getRequest
          ? getRequest.externalId === ""
            ? {}
            : { external_id: getRequest.externalId }
          : toJson(CreateLeadRequestSchema, createRequest as never, { useProtoFieldName: true });
        if (getRequest) note.externalId = getRequest.externalId;
      }
      const caller: Caller = await gate.authenticate(surface, req.headers.authorization, deps.clientAddress(req));
      noteCaller(req, caller);
      quota = await gate.limit(surface, caller);
      if (caller.kind !== "provider") throw new Error("the public surface admitted a caller without a key");
      if (getRequest) {
        const lead = await leads.get(caller.provider, getRequest.externalId);
        noteLead(req, lead);
        if (note) note.rpcCode = "ok";
        return { outcome: { frame: getLeadResponseBytes(lead, true) }, quota };
      }
      const { lead, warnings } = await leads.create(caller.provider, createLeadInput(createRequest as never), {
        source: "grpc",
      });
      noteLead(req, lead);
      if (note) {
        note.rpcCode = "ok";
        note.successStatus = 201;
      }
      return { outcome: { frame: createLeadResponseBytes(lead, warnings, true) }, quota };
    } catch (error) {
      if (note) noteRpcFailure(note, error);
      return quota ? { outcome: { error }, quota } : { outcome: { error } };
    }
  }

  function answer(res: Http2ServerResponse, outcome: Outcome, quota: Quota | undefined): void {
    if (res.stream.destroyed) return;
    markFastPath(res);
    if ("frame" in outcome) {
      // The headers in one writeHead (each setHeader validates and copies on its own).
      const headers: Record<string, string> = { "content-type": "application/grpc+proto" };
      if (quota) {
        const limits = rateLimitHeaders(quota);
        for (const k in limits) headers[k.toLowerCase()] = limits[k] as string;
      }
      res.writeHead(200, headers);
      res.addTrailers({ "grpc-status": "0" });
      res.end(outcome.frame);
      return;
    }
    // As rpc/interceptors.ts' errorsInterceptor: the error table, quota headers in the metadata.
    const thrown = outcome.error;
    const err = toConnectError(thrown, deps.errorDetails);
    const errQuota = (thrown instanceof DomainError ? thrown.quota : undefined) ?? quota;
    if (errQuota) for (const [k, v] of Object.entries(rateLimitHeaders(errQuota))) err.metadata.set(k, v);
    if (err.code === Code.Internal && !(thrown instanceof ConnectError)) {
      deps.logger.error({ err: errorForLog(thrown), rpc: res.req.url.slice(SERVICE.length) }, "rpc failed");
    }
    const trailers = new Headers(); // setTrailerStatus copies the metadata in
    setTrailerStatus(trailers, err);
    res.writeHead(200, { "content-type": "application/grpc+proto" });
    const out: Record<string, string> = {};
    trailers.forEach((v, k) => {
      out[k] = v;
    });
    res.addTrailers(out);
    res.end();
  }

  return (req, res) => {
    if (req.method !== "POST" || (req.url !== GET && req.url !== CREATE)) return false;
    const h = req.headers;
    const type = h["content-type"];
    if (type === undefined || !PLAIN_TYPES.has(type)) return false;
    if (h["grpc-timeout"] !== undefined) return false;
    const encoding = h["grpc-encoding"];
    if (encoding !== undefined && encoding !== "identity") return false;

    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > deps.readMaxBytes + 5) tooBig = true;
      else chunks.push(chunk);
    });
    req.on("end", () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      if (tooBig) {
        const error = new ConnectError(
          `message size is larger than configured readMaxBytes ${deps.readMaxBytes}`,
          Code.ResourceExhausted,
        );
        return answer(res, { error }, undefined);
      }
      void call(req, body).then(({ outcome, quota }) => answer(res, outcome, quota));
    });
    return true;
  };
}
