/** Lead events for providers: their own events, newest first, to catch up after downtime. */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { throwIfViolations } from "../errors.ts";
import { Fields } from "../fields.ts";
import { type LeadOwner, providerView } from "../leads/lead.ts";
import { type Page, pageOf, readPageRequest } from "../paging.ts";
import { listProviderEvents } from "./event.repository.ts";
import { EVENT_TYPES, type EventType, type LeadEvent } from "./event.ts";

export interface EventListQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly type?: string | undefined;
  readonly createdAfter?: Date | undefined;
}

export const EVENT_PAGE = { defaultSize: 20, maxSize: 100 } as const;

export type EventService = ReturnType<typeof createEventService>;

export function createEventService(db: Kysely<Database>) {
  return {
    /** The provider's own events of the caller's mode, newest first, one cursor page at a time. */
    async list(owner: LeadOwner, q: EventListQuery): Promise<Page<LeadEvent>> {
      const f = new Fields();
      const page = readPageRequest(f, q, EVENT_PAGE);
      const type = f.oneOf({ type: q.type }, "type", EVENT_TYPES, false) as EventType | undefined;
      const createdAfter = f.instant(q.createdAfter, "created_after");
      throwIfViolations(f.violations);
      const filter = { type, createdAfter, beforeSequence: page.afterId };
      const rows = await listProviderEvents(db, owner, filter, page.size + 1);
      // Providers see who changed a lead by role only (lead.ts providerView).
      return pageOf(
        rows.map((e) => ({ ...e, lead: providerView(e.lead) })),
        page.size,
        (e) => e.sequence,
      );
    },
  };
}
