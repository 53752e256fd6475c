/**
 * Pagination links: relative to this server (path and query only), or absolute under the
 * configured PUBLIC_BASE_URL; never built from the request's Host header.
 */
/** The request's own URL with `changes` applied to its query (the caller's filters are kept). */
export function pageLink(
  req: { readonly originalUrl: string },
  changes: Record<string, string>,
  publicBaseUrl?: string,
): string {
  const url = new URL(req.originalUrl, "http://relative.invalid");
  for (const [k, v] of Object.entries(changes)) url.searchParams.set(k, v);
  const relative = `${url.pathname}${url.search}`;
  return publicBaseUrl === undefined ? relative : new URL(relative, publicBaseUrl).toString();
}

/** A cursor page as every REST list answers it: `results`, `next_page_token` and the `next` link. */
export function cursorPageJson<T, J>(
  req: { readonly originalUrl: string },
  page: { readonly items: readonly T[]; readonly nextPageToken: string },
  toJson: (item: T) => J,
  publicBaseUrl?: string,
): { results: J[]; next_page_token: string | null; next: string | null } {
  const next = page.nextPageToken === "" ? null : page.nextPageToken;
  return {
    results: page.items.map(toJson),
    next_page_token: next,
    next: next === null ? null : pageLink(req, { page_token: next }, publicBaseUrl),
  };
}
