import { PaginationError } from "./errors.js";

/**
 * The offset of the next page from a page's `X-Has-More` and `X-Next-Offset`, or
 * `undefined` after the last page. Headers that are missing, not a boolean and an
 * offset, or an offset that does not advance throw {@link PaginationError}: guessing
 * would either loop or silently drop items.
 */
function nextOffset(headers: Headers, offset: number): number | undefined {
  const hasMore = headers.get("x-has-more");
  const next = headers.get("x-next-offset");
  if (hasMore === "false") return undefined;
  if (hasMore !== "true" || !/^\d+$/.test(next ?? "") || +next! <= offset) {
    throw new PaginationError("paging_headers_invalid", `X-Has-More: ${hasMore} and X-Next-Offset: ${next} give no next page after offset ${offset}`);
  }
  return +next!;
}

/** One page: its items and the response that carries the paging headers. */
export interface Page<T> {
  data: T[];
  response: Response;
}

/** Every item of every page from `offset` on, fetching the next page only when needed. */
export async function* paginate<T>(fetchPage: (offset: number) => Promise<Page<T>>, offset: number): AsyncGenerator<T, void, undefined> {
  for (let at: number | undefined = offset; at !== undefined; ) {
    const { data, response } = await fetchPage(at);
    const next = nextOffset(response.headers, at);
    yield* data;
    at = next;
  }
}
