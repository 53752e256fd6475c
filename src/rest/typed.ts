/**
 * REST handlers typed from openapi.yaml (generated/openapi/schema.ts): the request a handler
 * reads and the body it answers are the operation's own types, so a field renamed in the
 * contract fails `tsc` here. The OpenAPI validator has checked the request before a handler runs.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { operations } from "../../generated/openapi/schema.ts";
import type { PortalPrincipal, ProviderPrincipal } from "../edge/identity.ts";
import type { Caller } from "../edge/surfaces.ts";

export type OperationId = keyof operations;
type Operation<O extends OperationId> = operations[O];

type JsonOf<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Params<O extends OperationId> = Operation<O>["parameters"];

/** Path parameters arrive as text; the handler parses them (ids strictly, see fields.ts). */
export type PathOf<O extends OperationId> =
  Params<O> extends { path: infer P } ? { [K in keyof P]: string } : Record<string, never>;
export type QueryOf<O extends OperationId> = NonNullable<Params<O>["query"]>;
export type BodyOf<O extends OperationId> = JsonOf<Operation<O>["requestBody"]>;
type Responses<O extends OperationId> = Operation<O>["responses"];
/** The body of the operation's 200, 201 or 202 answer. */
export type ResultOf<O extends OperationId> =
  | JsonOf<Responses<O>[200 & keyof Responses<O>]>
  | JsonOf<Responses<O>[201 & keyof Responses<O>]>
  | JsonOf<Responses<O>[202 & keyof Responses<O>]>;

export type TypedRequest<O extends OperationId> = Request<PathOf<O>, ResultOf<O>, BodyOf<O>, QueryOf<O>>;
export type TypedResponse<O extends OperationId> = Response<ResultOf<O>>;

/** A route handler for operation `O` of openapi.yaml. */
export function operation<O extends OperationId>(
  _id: O,
  handle: (req: TypedRequest<O>, res: TypedResponse<O>) => Promise<void>,
): RequestHandler<PathOf<O>, ResultOf<O>, BodyOf<O>, QueryOf<O>> {
  return (req, res, next: NextFunction) => handle(req, res).catch(next);
}

declare global {
  namespace Express {
    interface Locals {
      /** The verified caller, set by the surface's gate (rest/app.ts). */
      caller?: Caller;
    }
  }
}

/** The provider behind the API key of a Public API request. */
export function providerOf(res: Response): ProviderPrincipal {
  const caller = res.locals.caller;
  if (caller?.kind !== "provider") throw new Error("Public API route reached without an authenticated provider");
  return caller.provider;
}

/** The signed-in portal user of a provider portal request. */
export function portalOf(res: Response): PortalPrincipal {
  const caller = res.locals.caller;
  if (caller?.kind !== "portal") throw new Error("portal route reached without a session");
  return caller.portal;
}

/** The JWT subject of an administrator's request (recorded in the audit log). */
export function actorOf(res: Response): string {
  const caller = res.locals.caller;
  if (caller?.kind !== "jwt") throw new Error("route reached without a verified JWT");
  return caller.jwt.subject;
}

/** The operationId of openapi.yaml that the validator matched, if any. */
export function operationIdOf(req: Request): string | undefined {
  return "openapi" in req
    ? (req.openapi as { schema?: { operationId?: string } } | undefined)?.schema?.operationId
    : undefined;
}
