/**
 * Reading the request log: a provider reads its own entries of its key's mode; administrators
 * read everyone's, including requests refused before a key named a provider.
 */
import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { DomainError, throwIfViolations } from "../errors.ts";
import { Fields, type RawId } from "../fields.ts";
import type { LeadOwner } from "../leads/lead.ts";
import type { Page } from "../paging.ts";
import { readPageRequest } from "../paging.ts";
import {
  type AdminEntryFilter,
  type EntryFilter,
  findEntry,
  findProviderEntry,
  listEntries,
  listProviderEntries,
  listTallies,
  type Tally,
} from "./request-log.repository.ts";
import { OUTCOMES, type Outcome, type StoredRequestLogEntry } from "./request-log.ts";

export interface RequestLogQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly outcome?: string | undefined;
  readonly code?: string | undefined;
  readonly status?: number | undefined;
  readonly externalId?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

export interface AdminRequestLogQuery extends RequestLogQuery {
  readonly providerId?: RawId | undefined;
  readonly livemode?: boolean | undefined;
  readonly requestId?: string | undefined;
  readonly clientIp?: string | undefined;
}

export const REQUEST_LOG_PAGE = { defaultSize: 25, maxSize: 100 } as const;

/**
 * The page token: the last entry's time (ms, 6 bytes) and random entry id (16 bytes), base64url
 * (30 characters, within the contract's 64 for page_token). It names a position in the caller's
 * own list and says nothing about anyone else's entries.
 */
export function encodeEntryCursor(e: { readonly createdAt: Date; readonly entryId: string }): string {
  const bytes = Buffer.alloc(CURSOR_BYTES);
  bytes.writeUIntBE(e.createdAt.getTime(), 0, 6);
  Buffer.from(e.entryId.replaceAll("-", ""), "hex").copy(bytes, 6);
  return bytes.toString("base64url");
}

const CURSOR_BYTES = 22;

function readCursor(f: Fields, token: string | undefined): EntryFilter["after"] {
  if (token === undefined || token === "") return undefined;
  const bytes = /^[A-Za-z0-9_-]{30}$/.test(token) ? Buffer.from(token, "base64url") : Buffer.alloc(0);
  if (bytes.length !== CURSOR_BYTES) {
    f.add("page_token", "invalid_format", "page_token is not a token this service issued");
    return undefined;
  }
  const hex = bytes.subarray(6).toString("hex");
  const entryId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { createdAt: new Date(bytes.readUIntBE(0, 6)), entryId };
}

function readFilter(f: Fields, q: RequestLogQuery): EntryFilter & { size: number } {
  const { size } = readPageRequest(f, { pageSize: q.pageSize }, REQUEST_LOG_PAGE);
  const after = readCursor(f, q.pageToken);
  const outcome = f.oneOf({ outcome: q.outcome }, "outcome", OUTCOMES, false) as Outcome | undefined;
  const code = f.text({ code: q.code }, "code", { max: 64 });
  const status = q.status === undefined ? undefined : f.integer({ status: q.status }, "status", 100, 599);
  const externalId = f.text({ external_id: q.externalId }, "external_id", { max: 128 });
  const createdAfter = f.instant(q.createdAfter, "created_after");
  const createdBefore = f.instant(q.createdBefore, "created_before");
  return { size, after, outcome, code, status, externalId, createdAfter, createdBefore };
}

function page(rows: StoredRequestLogEntry[], size: number): Page<StoredRequestLogEntry> {
  const items = rows.slice(0, size);
  const last = items.at(-1);
  return { items, nextPageToken: rows.length > size && last ? encodeEntryCursor(last) : "" };
}

function requestIdOf(f: Fields, raw: string): string {
  return f.text({ request_id: raw }, "request_id", { max: 128, required: true }) ?? "";
}

function noEntry(requestId: string): DomainError {
  return new DomainError("not_found", `no request ${requestId} in the request log`, { code: "request_not_found" });
}

export interface TallyQuery {
  readonly pageSize?: number | undefined;
  readonly pageToken?: string | undefined;
  readonly providerId?: RawId | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

const MODES = ["live", "test", "none"] as const;

/** A tally's page token: its key as JSON, base64url. */
function encodeTallyCursor(t: Tally): string {
  return Buffer.from(JSON.stringify([t.minute.getTime(), t.providerId, t.mode, t.outcome, t.code])).toString(
    "base64url",
  );
}

function readTallyCursor(f: Fields, token: string | undefined): Omit<Tally, "requests"> | undefined {
  if (token === undefined || token === "") return undefined;
  let key: unknown;
  try {
    key = /^[A-Za-z0-9_-]{1,400}$/.test(token) ? JSON.parse(Buffer.from(token, "base64url").toString()) : undefined;
  } catch {
    key = undefined;
  }
  const [minute, providerId, mode, outcome, code, operation] = Array.isArray(key) ? key : [];
  if (
    !Array.isArray(key) ||
    key.length !== 6 ||
    !Number.isSafeInteger(minute) ||
    !Number.isSafeInteger(providerId) ||
    !(MODES as readonly unknown[]).includes(mode) ||
    typeof outcome !== "string" ||
    typeof code !== "string" ||
    typeof operation !== "string"
  ) {
    f.add("page_token", "invalid_format", "page_token is not a token this service issued");
    return undefined;
  }
  return { minute: new Date(minute), providerId, mode, outcome, code, operation };
}

export type RequestLogService = ReturnType<typeof createRequestLogService>;

export function createRequestLogService(db: Kysely<Database>) {
  return {
    /** The provider's own entries of the key's mode, newest first. */
    async list(owner: LeadOwner, q: RequestLogQuery): Promise<Page<StoredRequestLogEntry>> {
      const f = new Fields();
      const { size, ...filter } = readFilter(f, q);
      throwIfViolations(f.violations);
      return page(await listProviderEntries(db, owner, filter, size + 1), size);
    },
    /** One of the provider's own entries (of the key's mode) by request id; not_found otherwise. */
    async get(owner: LeadOwner, rawRequestId: string): Promise<StoredRequestLogEntry> {
      const f = new Fields();
      const requestId = requestIdOf(f, rawRequestId);
      throwIfViolations(f.violations);
      const entry = await findProviderEntry(db, owner, requestId);
      if (!entry) throw noEntry(requestId);
      return entry;
    },
    /** Every provider's entries (and those of no provider), newest first. */
    async listAll(q: AdminRequestLogQuery): Promise<Page<StoredRequestLogEntry>> {
      const f = new Fields();
      const { size, ...base } = readFilter(f, q);
      const filter: AdminEntryFilter = {
        ...base,
        providerId: q.providerId === undefined ? undefined : f.id({ provider_id: q.providerId }, "provider_id"),
        livemode: f.boolean({ livemode: q.livemode }, "livemode"),
        requestId: f.text({ request_id: q.requestId }, "request_id", { max: 128 }),
        clientIp: f.text({ client_ip: q.clientIp }, "client_ip", { max: 64 }),
      };
      throwIfViolations(f.violations);
      return page(await listEntries(db, filter, size + 1), size);
    },
    /** The requests counted instead of listed (request-log.listing.ts), newest minute first. */
    async tallies(q: TallyQuery): Promise<Page<Tally>> {
      const f = new Fields();
      const { size } = readPageRequest(f, { pageSize: q.pageSize }, REQUEST_LOG_PAGE);
      const after = readTallyCursor(f, q.pageToken);
      const providerId = q.providerId === undefined ? undefined : f.id({ provider_id: q.providerId }, "provider_id");
      const createdAfter = f.instant(q.createdAfter, "created_after");
      const createdBefore = f.instant(q.createdBefore, "created_before");
      throwIfViolations(f.violations);
      const rows = await listTallies(db, { providerId, createdAfter, createdBefore, after }, size + 1);
      const items = rows.slice(0, size);
      const last = items.at(-1);
      return { items, nextPageToken: rows.length > size && last ? encodeTallyCursor(last) : "" };
    },
    /** Any entry by request id (the newest, if a caller sent the same X-Request-Id twice). */
    async getAny(rawRequestId: string): Promise<StoredRequestLogEntry> {
      const f = new Fields();
      const requestId = requestIdOf(f, rawRequestId);
      throwIfViolations(f.violations);
      const entry = await findEntry(db, requestId);
      if (!entry) throw noEntry(requestId);
      return entry;
    },
  };
}
