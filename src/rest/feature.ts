/** What a feature contributes to the REST edge: its routes and, per operation, its own wording of schema rejections. */
import type { RequestHandler, Router } from "express";
import type { DomainError, FieldViolation } from "../errors.ts";
import type { OperationId } from "./typed.ts";

export interface RestFeature {
  readonly router: Router;
  /**
   * Checks of the authenticated caller that come before the request's validation (a role, say):
   * mounted after the surface's gate and before the OpenAPI validator, so a caller without the
   * right is told so whatever its request looks like.
   */
  readonly guard?: RequestHandler;
  /**
   * For operations whose request body the service layer checks itself: the service's violations
   * for a body the OpenAPI schema rejected, so REST and gRPC word the same mistake the same way.
   */
  readonly explainers?: Partial<Record<OperationId, (body: unknown) => readonly FieldViolation[]>>;
  /**
   * Members this feature adds to the problem+json body of its own errors (rest/problem.ts), so
   * the REST plumbing renders them without knowing the feature.
   */
  readonly problemExtension?: (err: DomainError) => Readonly<Record<string, unknown>> | undefined;
}
