/**
 * What the edges learn about a Public API request while serving it, for its request-log entry
 * (request-log/request-log.ts): the provider behind the key, the request as received, the lead it
 * created or read, and the problem it was answered with. observe.ts starts a note for every
 * request to the Public API and turns it into an entry when the answer has been sent; the REST
 * gate, the error renderers of both edges, the fast paths and the lead handlers fill it in.
 */
import type { FieldViolation } from "../errors.ts";
import type { ProviderPrincipal } from "./identity.ts";

export interface NotedProblem {
  /** The HTTP status the REST edge answers this problem with (for RPC too). */
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors?: readonly FieldViolation[] | undefined;
}

export interface RequestNote {
  provider?: ProviderPrincipal;
  /** The request as received: the parsed JSON body, or the RPC message in its JSON form. */
  body?: unknown;
  externalId?: string;
  leadId?: number;
  problem?: NotedProblem;
  /** RPC only: the status code name the call ended with (`ok`, `invalid_argument`, …). */
  rpcCode?: string;
  /** RPC only: the HTTP status the REST edge gives the same success (201 for CreateLead). */
  successStatus?: number;
  /** Reads of the request log and stats are not themselves recorded (docs/decisions/0019-request-log.md). */
  unrecorded?: boolean;
}

const NOTE = Symbol("request-log note");
type Noted = { [NOTE]?: RequestNote };

/** Starts the note of a request (observe.ts). */
export function startNote(req: object): RequestNote {
  const note: RequestNote = {};
  (req as Noted)[NOTE] = note;
  return note;
}

/** The request's note; undefined for a request the request log does not record. */
export function noteOf(req: object): RequestNote | undefined {
  return (req as Noted)[NOTE];
}

/** Records the provider behind the request's key, once the gate has verified it. */
export function noteCaller(
  req: object,
  caller: { readonly kind: string; readonly provider?: ProviderPrincipal },
): void {
  const note = noteOf(req);
  if (note && caller.kind === "provider" && caller.provider) note.provider = caller.provider;
}

/** Records the lead a request created or read. */
export function noteLead(req: object, lead: { readonly id: number; readonly externalId: string }): void {
  const note = noteOf(req);
  if (!note) return;
  note.leadId = lead.id;
  note.externalId = lead.externalId;
}
