/** DomainError → ConnectError, in one table; anything else becomes INTERNAL without its message. */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "../../generated/proto/leadprovider/v1/errors_pb.ts";
import { DomainError, type ErrorKind, isDatabaseUnavailable } from "../errors.ts";

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

export function toConnectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (!(err instanceof DomainError)) {
    if (isDatabaseUnavailable(err)) {
      return new ConnectError("the database is unavailable; retry later", Code.Unavailable, undefined, undefined, err);
    }
    return new ConnectError("internal error", Code.Internal, undefined, undefined, err);
  }
  const existing = err.extra.existing_lead as { id: number; order_number: string } | undefined;
  const retryAfter = err.extra.retry_after as number | undefined;
  const window = err.extra.window as string | undefined;
  const detail = create(ErrorDetailSchema, {
    code: err.code,
    violations: err.violations.map((v) => ({ ...v })),
    ...(existing && { existingLead: { id: BigInt(existing.id), orderNumber: existing.order_number } }),
    ...(retryAfter !== undefined && { retryAfterSeconds: retryAfter }),
    ...(window !== undefined && { window }),
  });
  return new ConnectError(
    err.message,
    CONNECT_CODE[err.kind],
    err.headers,
    [{ desc: ErrorDetailSchema, value: detail }],
    err,
  );
}
