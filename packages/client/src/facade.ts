import type { Resources } from "./generated/facade.js";
import type { OperationRow } from "./operation-row.js";
import type { RequestOptions } from "./options.js";
import { type Page, paginate } from "./paginate.js";
import type { Call } from "./request.js";
import { toFormData } from "./upload.js";

/** The request of one facade call, in openapi-fetch's terms, with the per-call options. */
interface OperationInit extends RequestOptions {
  parseAs?: "arrayBuffer" | "stream";
  params: { path: Record<string, unknown> | undefined; query: (Record<string, unknown> & { offset?: number }) | undefined };
  body: unknown;
}

/**
 * Builds the facade (`client.projects.list()`, ...) from the generated operation table.
 * Each method takes the path parameter if the operation has one, then its query or body
 * if it has one, then {@link RequestOptions}, and resolves to the parsed body (an
 * event stream's `ReadableStream`, as soon as its headers arrive). A paged
 * list also gets `<method>All`, an async iterator over every item, and an operation that
 * answers `If-None-Match` gets `<method>IfChanged(id, etag, options)`.
 */
export function createResources(operations: readonly OperationRow[], call: Call): Resources {
  const resources: Record<string, Record<string, unknown>> = {};
  for (const [resource, name, method, path, input, rules] of operations) {
    const pathParam = /\{(\w+)\}/.exec(path)?.[1];
    // Synchronous but for a multipart body (files are read): a list or a get costs no
    // extra promise.
    const build = (args: unknown[], form?: FormData): OperationInit => {
      const id = pathParam ? args[0] : undefined;
      const value = input ? args[pathParam ? 1 : 0] : undefined;
      const options = args[(pathParam ? 1 : 0) + (input ? 1 : 0)] as RequestOptions | undefined;
      return {
        ...options,
        // An operation without a path parameter has no path to fill.
        params: { path: pathParam ? { [pathParam]: id } : undefined, query: input === "query" ? (value as OperationInit["params"]["query"]) : undefined },
        body: form ?? (input === "json" ? value : undefined),
        ...(rules?.binary ? { parseAs: "arrayBuffer" as const } : rules?.stream ? { parseAs: "stream" as const } : {}),
      };
    };
    // The generator gives every multipart operation its `files`.
    const prepare = (args: unknown[]): OperationInit | Promise<OperationInit> =>
      input === "form" ? toFormData(args[pathParam ? 1 : 0] as Record<string, unknown>, rules!.files!).then((form) => build(args, form)) : build(args);
    const group = (resources[resource] ??= {});
    group[name] =
      input === "form"
        ? async (...args: unknown[]) => (await call(method, path, await prepare(args))).data
        : rules?.binary
          ? async (...args: unknown[]) => new Uint8Array(((await call(method, path, build(args))).data as ArrayBuffer | undefined) ?? new ArrayBuffer(0))
          : rules?.stream
            ? // A body the server sent empty is an empty stream, not undefined.
              async (...args: unknown[]) => ((await call(method, path, build(args))).data as ReadableStream | undefined) ?? new Blob().stream()
            : async (...args: unknown[]) => (await call(method, path, build(args))).data;
    if (rules?.conditional) {
      // The same request with `If-None-Match` (when there is a version to name); a 304 is no error here.
      group[`${name}IfChanged`] = async (id: unknown, etag: string | null | undefined, options: RequestOptions = {}) => {
        const init = await prepare(pathParam ? [id, options] : [options]);
        const conditional = etag ? { ...init, params: { ...init.params, header: { "If-None-Match": etag } } } : init;
        const { data, response } = await call(method, path, conditional);
        const current = response.headers.get("etag") ?? undefined;
        return response.status === 304 ? { changed: false, etag: current ?? etag } : { changed: true, data, etag: current };
      };
    }
    if (rules?.paged) {
      group[`${name}All`] = async function* (...args: unknown[]) {
        const init = await prepare(args);
        const query = init.params.query;
        const pageAt = (offset: number) => call(method, path, { ...init, params: { ...init.params, query: { ...query, offset } } });
        yield* paginate(pageAt as (offset: number) => Promise<Page<unknown>>, query?.offset ?? 0);
      };
    }
  }
  return resources as unknown as Resources;
}
