import type { paths } from "@browser-service/types";
import type {
  BodySerializer,
  Client,
  ClientPathsWithMethod,
  FetchResponse,
  HeadersOptions,
  ParamsOption,
  ParseAs,
  PathSerializer,
  QuerySerializer,
  QuerySerializerOptions,
  RequestBodyOption,
} from "openapi-fetch";
import type { CallOptions } from "./options.js";

/** An HTTP method as the spec's `paths` name it (lowercase). */
export type HttpMethod = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";
/** The operation of the spec at path `P` and method `M`. */
export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

/**
 * The options of a raw call for operation `T`: openapi-fetch's request options (typed
 * `params` and `body`, `headers`, `parseAs`, serializers, `baseUrl`, `RequestInit`
 * fields) without `middleware`, `fetch` and `Request`, plus {@link CallOptions}.
 */
export type RawInit<T> = ParamsOption<T> &
  RequestBodyOption<T> &
  CallOptions &
  Omit<RequestInit, "body" | "headers" | "method"> & {
    baseUrl?: string;
    headers?: HeadersOptions;
    parseAs?: ParseAs;
    querySerializer?: QuerySerializer<T> | QuerySerializerOptions;
    bodySerializer?: BodySerializer<T>;
    pathSerializer?: PathSerializer;
  };

/** openapi-fetch's result without its `error` branch: a non-2xx status throws an `APIError` instead. */
export type RawResult<R> = Extract<R, { data: unknown }>;

/**
 * One raw method (`client.GET`, `client.POST`, ...): openapi-fetch's signature and typing
 * from `paths`, resolving to `{ data, response }`.
 */
export type RawMethod<M extends HttpMethod> = <P extends ClientPathsWithMethod<Client<paths>, M>, I extends RawInit<Operation<P, M>>>(
  url: P,
  // biome-ignore lint/complexity/noBannedTypes: `{} extends T` holds exactly when every property of T is optional, i.e. when `init` may be left out.
  ...init: {} extends RawInit<Operation<P, M>> ? [init?: I] : [init: I]
) => Promise<RawResult<FetchResponse<Operation<P, M>, I, `${string}/${string}`>>>;
