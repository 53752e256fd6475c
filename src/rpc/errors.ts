/**
 * The Connect/gRPC edge's error table: a DomainError becomes a ConnectError with the code of its
 * kind and, in grpc-status-details-bin, our own `ErrorDetail` followed by the standard
 * google.rpc details (AIP-193): `ErrorInfo` (reason = the problem code in UPPER_SNAKE_CASE, the
 * code itself in metadata), `BadRequest` field violations and `RetryInfo`.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
} from "../../generated/proto/google/rpc/error_details_pb.ts";
import { ErrorDetailSchema } from "../../generated/proto/leadprovider/v1/errors_pb.ts";
import { asDomainError, type DomainError, type ErrorKind } from "../errors.ts";

/** The `domain` of every ErrorInfo this service sends. */
export const ERROR_DOMAIN = "lead-provider-api";

const CONNECT_CODE: Readonly<Record<ErrorKind, Code>> = {
  invalid_argument: Code.InvalidArgument,
  duplicate: Code.InvalidArgument, // as REST: a repeated external_id is a 400, not a conflict
  unauthenticated: Code.Unauthenticated,
  permission_denied: Code.PermissionDenied,
  not_found: Code.NotFound,
  failed_precondition: Code.FailedPrecondition,
  rate_limited: Code.ResourceExhausted,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
};

type Details = ConstructorParameters<typeof ConnectError>[3];

/**
 * What a feature adds to the error answers of its own DomainErrors (the leads feature: the
 * duplicate of a duplicate_lead refusal): fields of ErrorDetail and ErrorInfo metadata entries.
 * Given to createRpcRoutes (and the fast path) at composition, so this edge knows no feature.
 */
export interface ErrorDetailExtension {
  readonly detail?: (err: DomainError) => MessageInitShape<typeof ErrorDetailSchema> | undefined;
  readonly metadata?: (err: DomainError) => Readonly<Record<string, string>> | undefined;
}

export function toConnectError(thrown: unknown, extensions: readonly ErrorDetailExtension[] = []): ConnectError {
  if (thrown instanceof ConnectError) return thrown;
  const err = asDomainError(thrown);
  const retry = err.retryAfterSeconds;
  const extraDetail = Object.assign({}, ...extensions.map((e) => e.detail?.(err)));
  const extraMetadata = Object.assign({}, ...extensions.map((e) => e.metadata?.(err)));
  const details: Details = [
    {
      desc: ErrorDetailSchema,
      value: create(ErrorDetailSchema, {
        code: err.code,
        violations: err.violations.map((v) => ({ ...v })),
        ...(err.existingLead && {
          existingLead: { id: BigInt(err.existingLead.id), orderNumber: err.existingLead.orderNumber },
        }),
        ...(err.kind === "rate_limited" && retry !== undefined && { retryAfterSeconds: retry }),
        ...(err.window !== undefined && { window: err.window }),
        ...(err.resetsAt !== undefined && { resetsAt: err.resetsAt.toISOString() }),
        ...(err.opensAt && { opensAt: err.opensAt.toISOString() }),
        ...(err.pausedReason && { pausedReason: err.pausedReason }),
        ...extraDetail,
      }),
    },
    {
      desc: ErrorInfoSchema,
      value: create(ErrorInfoSchema, {
        reason: err.code.toUpperCase(),
        domain: ERROR_DOMAIN,
        metadata: {
          code: err.code,
          ...(err.existingLead && { existing_lead_id: String(err.existingLead.id) }),
          ...(err.window !== undefined && { window: err.window }),
          ...(err.currentState !== undefined && { current_state: err.currentState }),
          ...(err.resetsAt !== undefined && { resets_at: err.resetsAt.toISOString() }),
          ...(err.opensAt && { opens_at: err.opensAt.toISOString() }),
          ...(err.pausedReason && { paused_reason: err.pausedReason }),
          ...extraMetadata,
        },
      }),
    },
  ];
  if (err.violations.length > 0) {
    details.push({
      desc: BadRequestSchema,
      value: create(BadRequestSchema, {
        fieldViolations: err.violations.map((v) => ({ field: v.field, description: v.message, reason: v.code })),
      }),
    });
  }
  if (retry !== undefined) {
    details.push({
      desc: RetryInfoSchema,
      value: create(RetryInfoSchema, { retryDelay: durationFromMs(retry * 1000) }),
    });
  }
  return new ConnectError(err.message, CONNECT_CODE[err.kind], undefined, details, thrown);
}
