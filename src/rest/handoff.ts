/**
 * The REST edge's hook for a shortcut in front of Express (a fast path, registered at composition:
 * app.ts gives createRestApp's `shortcut`): the shortcut answers a request itself or passes it to
 * Express, with what it has already done (the parsed body, the verified caller and its quota, or
 * the error), so the gate never runs twice and every error is worded by the one error handler.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Caller } from "../edge/surfaces.ts";
import type { Quota } from "../limits.ts";

/** What a shortcut did before handing a request to Express (rest/app.ts's gate reads it). */
export interface Handoff {
  readonly caller?: Caller;
  readonly quota?: Quota;
  /** Thrown by Express's gate in place of authenticating again: rendered by the error handler. */
  readonly error?: unknown;
}

const HANDOFF = Symbol("rest shortcut handoff");
type HandedRequest = IncomingMessage & { [HANDOFF]?: Handoff; body?: unknown };

export function handoffOf(req: object): Handoff | undefined {
  return (req as HandedRequest)[HANDOFF];
}

/** Marks the request as handed over (and its body as parsed, when given); the caller then passes it to Express. */
export function markHandoff(req: IncomingMessage, handoff: Handoff, body?: unknown): void {
  const r = req as HandedRequest;
  r[HANDOFF] = handoff;
  if (body !== undefined) r.body = body;
}

/** Plain Node request handler (Express is one). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A handler in front of Express: answers the request, or calls `express` (after markHandoff when
 * it has been through the gate).
 */
export type RestShortcut = (req: IncomingMessage, res: ServerResponse, express: NodeHandler) => void;

/** Express behind the shortcut, or Express alone when there is none (FAST_PATHS=off). */
export function withShortcut(express: NodeHandler, shortcut: RestShortcut | undefined): NodeHandler {
  return shortcut ? (req, res) => shortcut(req, res, express) : express;
}
