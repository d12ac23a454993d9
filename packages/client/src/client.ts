import { transport as platformTransport } from "#platform";
import { createResources } from "./facade.js";
import type { RawMethods, Resources } from "./generated/facade.js";
import { documentBaseUrl, operations } from "./generated/operations.js";
import { type ClientOptions, resolveOptions } from "./options.js";
import { type CallInit, createCall } from "./request.js";
import { bufferedFetch } from "./transport.js";

/**
 * A client of the browser service: the operation facade (`client.projects.list()`,
 * `client.webmcp.invoke(...)`) and raw calls by path (`client.GET("/org/projects")`).
 */
export type BrowserServiceClient = Resources & RawMethods;

/**
 * Creates a client. Options left out come from `BROWSER_SERVICE_API_KEY`,
 * `BROWSER_SERVICE_BASE_URL` and `BROWSER_SERVICE_PROJECT_ID`, read now (not at import)
 * and only where a `process` exists. Throws `ClientOptionsError` (`missing_api_key`) when
 * there is no API key.
 */
export function createClient(options: ClientOptions = {}): BrowserServiceClient {
  const settings = resolveOptions(options, documentBaseUrl);
  const call = createCall(settings, settings.fetch ? bufferedFetch(settings.fetch) : platformTransport, operations);
  const client = createResources(operations, call) as BrowserServiceClient & Record<string, unknown>;
  for (const [, , method] of operations) client[method] ??= (path: string, init?: CallInit) => call(method, path, init);
  return client;
}
