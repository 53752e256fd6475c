/**
 * Cursor paging, the same for every list that pages by cursor: an opaque token naming the last
 * row of the previous page (its id, base64url), a page size within bounds, and a next token only
 * when another page exists. The provider list keeps its documented page numbers (see
 * docs/decisions/0007-ids-paging-and-counting-nothing.md).
 */
import type { Fields } from "./fields.ts";

export interface PageBounds {
  readonly defaultSize: number;
  readonly maxSize: number;
}

export interface PageRequest {
  readonly size: number;
  /** Rows after this id (in the list's own order); undefined for the first page. */
  readonly afterId: number | undefined;
}

export interface Page<T> {
  readonly items: T[];
  /** The token of the next page; "" when this is the last one. */
  readonly nextPageToken: string;
}

const TOKEN_ID = /^[1-9][0-9]{0,18}$/;

export function encodeCursor(id: number): string {
  return Buffer.from(String(id)).toString("base64url");
}

/**
 * Reads `page_size` and `page_token` (violations go to `f`, named as the caller sees them).
 * A token this service did not issue is an error, never silently the first page.
 */
export function readPageRequest(
  f: Fields,
  input: { readonly pageSize?: number | undefined; readonly pageToken?: string | undefined },
  bounds: PageBounds,
): PageRequest {
  const size = f.integer({ page_size: input.pageSize ?? bounds.defaultSize }, "page_size", 1, bounds.maxSize) ?? 1;
  if (input.pageToken === undefined || input.pageToken === "") return { size, afterId: undefined };
  const text = /^[A-Za-z0-9_-]+$/.test(input.pageToken)
    ? Buffer.from(input.pageToken, "base64url").toString("utf8")
    : "";
  const afterId = TOKEN_ID.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(afterId)) {
    f.add("page_token", "invalid_format", "page_token is not a token this service issued");
  }
  return { size, afterId: Number.isSafeInteger(afterId) ? afterId : undefined };
}

/**
 * Cuts the `size + 1` rows a query fetched into a page and the next page's token, which names
 * the last row by `cursorOf` (its position in the list's order).
 */
export function pageOf<T>(rows: readonly T[], size: number, cursorOf: (row: T) => number): Page<T> {
  const items = rows.slice(0, size);
  const last = items.at(-1);
  return { items, nextPageToken: rows.length > size && last !== undefined ? encodeCursor(cursorOf(last)) : "" };
}
