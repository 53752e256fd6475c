/**
 * What the back office and the provider portal share in talking to the service: the data of an
 * openapi-fetch call or an HttpError carrying the problem, and cursor paging as react-admin's
 * page numbers.
 */
import { HttpError } from "react-admin";
import type { components } from "../../generated/openapi/schema.ts";
import { namesInWords } from "./labels.ts";

type Problem = components["schemas"]["Problem"];
type Json = Record<string, unknown>;

/**
 * The data of an openapi-fetch call, or an HttpError carrying the status and the problem+json
 * body (react-admin shows `detail`, maps field errors onto the form, and signs out on 401); the
 * detail and the field messages with API names in words.
 */
export async function data<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data: body, error, response } = await call;
  if (response.ok && body !== undefined && body !== null) return body as NonNullable<T>;
  const problem = (error ?? {}) as Partial<Problem>;
  // Said in words (labels.ts): "must be one of origin_states" reads "… Accepted origin states".
  const fieldErrors = Object.fromEntries((problem.errors ?? []).map((e) => [e.field, namesInWords(e.message)]));
  const detail = problem.detail === undefined ? undefined : namesInWords(problem.detail);
  throw new HttpError(detail ?? `${response.status} ${response.statusText}`, response.status, {
    ...problem,
    errors: fieldErrors,
  });
}

/** The page tokens seen so far, per resource and filter: page n is fetched with the token of page n-1's answer. */
const cursors = new Map<string, string>();

export async function cursorPage<T>(
  resource: string,
  filter: Json,
  page: number,
  perPage: number,
  fetchPage: (pageToken: string | undefined) => Promise<{ results: T[]; next_page_token: string | null }>,
) {
  const base = `${resource}|${perPage}|${JSON.stringify(filter)}`;
  let p = page;
  while (p > 1 && !cursors.has(`${base}|${p}`)) p -= 1; // walk forward from the last page known
  let answer = await fetchPage(p === 1 ? undefined : cursors.get(`${base}|${p}`));
  while (p < page && answer.next_page_token) {
    cursors.set(`${base}|${p + 1}`, answer.next_page_token);
    p += 1;
    answer = await fetchPage(answer.next_page_token);
  }
  if (answer.next_page_token) cursors.set(`${base}|${page + 1}`, answer.next_page_token);
  return {
    data: answer.results as never[],
    pageInfo: { hasNextPage: answer.next_page_token !== null, hasPreviousPage: page > 1 },
  };
}

/** A filter without its empty fields. */
export const clean = (filter: Json) =>
  Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== "" && v !== undefined && v !== null));
