/** Lead events for providers: their own events, newest first, to catch up after downtime. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { throwIfViolations } from "../errors.ts";
import { Fields } from "../fields.ts";
import { type LeadOwner, providerView } from "../leads/lead.ts";
import { type Page, readPageRequest } from "../paging.ts";
import { listProviderEvents } from "./event.repository.ts";
import { EVENT_TYPES, type EventType, type LeadEvent } from "./event.ts";

export interface EventListQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly type?: string | undefined;
  readonly createdAfter?: Date | undefined;
}

export const EVENT_PAGE = { defaultSize: 20, maxSize: 100 } as const;

/** The events feed's page token: the last event's public id (random), base64url. */
export function encodeEventCursor(eventId: string): string {
  return Buffer.from(eventId).toString("base64url");
}

const EVENT_ID = /^evt_[0-9a-f]{32}$/;

function readEventCursor(f: Fields, token: string | undefined): string | undefined {
  if (token === undefined || token === "") return undefined;
  const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString("utf8") : "";
  if (EVENT_ID.test(text)) return text;
  f.add("page_token", "invalid_format", "page_token is not a token this service issued");
  return undefined;
}

export type EventService = ReturnType<typeof createEventService>;

/** `zone`: BUSINESS_TIMEZONE, the day another provider's original is dated to in a lead's `duplicate`. */
export function createEventService(db: Kysely<Database>, zone: string) {
  return {
    /** The provider's own events of the caller's mode, newest first, one cursor page at a time. */
    async list(owner: LeadOwner, q: EventListQuery): Promise<Page<LeadEvent>> {
      const f = new Fields();
      const { size } = readPageRequest(f, { pageSize: q.pageSize }, EVENT_PAGE);
      const beforeEventId = readEventCursor(f, q.pageToken);
      const type = f.oneOf({ type: q.type }, "type", EVENT_TYPES, false) as EventType | undefined;
      const createdAfter = f.instant(q.createdAfter, "created_after");
      throwIfViolations(f.violations);
      const rows = await listProviderEvents(db, owner, { type, createdAfter, beforeEventId }, size + 1);
      // Providers see who changed a lead by role only, and a duplicate as lead.ts providerView words it.
      const items = rows.slice(0, size).map((e) => (e.lead ? { ...e, lead: providerView(e.lead, zone) } : e));
      const last = items.at(-1);
      return { items, nextPageToken: rows.length > size && last ? encodeEventCursor(last.id) : "" };
    },
  };
}
