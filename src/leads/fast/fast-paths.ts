/**
 * The speed-only code of the Public API's two hot operations, fenced here: GET and POST of a lead
 * over REST without Express (rest.ts, with the contract's schemas compiled for them:
 * schema-validators.ts) and GetLead / CreateLead over plain gRPC without connect-node's per-call
 * machinery (grpc.ts, writing the messages by hand: lead-wire.ts). app.ts registers them in front
 * of the REST and RPC edges (rest/handoff.ts, rpc/shortcut.ts) when FAST_PATHS is on (the
 * default); with FAST_PATHS=off every request is served by Express and connect-node, with the
 * same answers (test/fast-path.test.ts compares them).
 */
import type { ClientAddress } from "../../edge/client-address.ts";
import type { Gate } from "../../edge/surfaces.ts";
import type { Logger } from "../../logger.ts";
import type { RestShortcut } from "../../rest/handoff.ts";
import type { ErrorDetailExtension } from "../../rpc/errors.ts";
import type { GrpcShortcut } from "../../rpc/shortcut.ts";
import type { LeadService } from "../lead.service.ts";
import { createGrpcFastPath } from "./grpc.ts";
import { createRestFastPath } from "./rest.ts";
import { createSchemaValidators } from "./schema-validators.ts";

export interface LeadFastPathDeps {
  readonly gate: Gate;
  readonly clientAddress: ClientAddress;
  readonly leads: LeadService;
  readonly logger: Logger;
  /** The parsed openapi.yaml (the fast path checks bodies against its schemas). */
  readonly spec: object;
  /** Headers every REST answer carries (rest/app.ts). */
  readonly restHeaders: Readonly<Record<string, string>>;
  /** VALIDATE_RESPONSES: success bodies are checked against the contract, as the validator would. */
  readonly validateResponses: boolean;
  /** connect-node's readMaxBytes. */
  readonly readMaxBytes: number;
  /** The RPC edge's error details (RpcDeps.errorDetails). */
  readonly errorDetails: readonly ErrorDetailExtension[];
}

export interface LeadFastPaths {
  readonly rest: RestShortcut;
  readonly grpc: GrpcShortcut;
}

export function createLeadFastPaths(deps: LeadFastPathDeps): LeadFastPaths {
  const { gate, clientAddress, leads, logger } = deps;
  return {
    rest: createRestFastPath({
      gate,
      clientAddress,
      leads,
      schemas: createSchemaValidators(deps.spec),
      headers: deps.restHeaders,
      validateResponses: deps.validateResponses,
    }),
    grpc: createGrpcFastPath({
      gate,
      clientAddress,
      leads,
      logger,
      readMaxBytes: deps.readMaxBytes,
      errorDetails: deps.errorDetails,
    }),
  };
}
