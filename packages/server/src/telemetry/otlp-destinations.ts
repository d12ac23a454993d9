import { readFileSync } from "node:fs";
import type { OtlpDestination } from "./otlp-export.js";

/** An OTLP destinations file that cannot be read or breaks its format; the message lists every problem. */
export class OtlpDestinationsError extends Error {
  /** Stable code of the failure. */
  readonly code = "invalid_otlp_destinations";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "OtlpDestinationsError";
  }
}

const NAME = /^[A-Za-z0-9._-]{1,255}$/;
/** A header name as RFC 9110 allows it (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** A header value Node sends as it is: tab, visible ASCII and space, no more than 8 KiB. */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,8192}$/;
/**
 * Headers the exporter sets itself or that frame the request: a destination naming one
 * would make every export malformed (an empty body, a wrong host), so it is refused.
 */
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-connection",
]);

/**
 * The OTLP destinations an operator configured (`--otlp-destinations`): a JSON array of
 * `{ "id"?, "name", "endpoint", "headers"? }`. `endpoint` is the http(s) URL logs are
 * POSTed to (`http://collector:4318/v1/logs`); `headers` go with every export (an API
 * key, say: the file is a secret); `id` defaults to `otlpdst_<name>`. Ids and names are
 * each unique. Every problem is listed at once.
 */
export function parseOtlpDestinations(text: string, source: string): OtlpDestination[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new OtlpDestinationsError(`OTLP destinations file ${source} is not JSON: ${(error as Error).message}`, error);
  }
  if (!Array.isArray(document)) throw new OtlpDestinationsError(`OTLP destinations file ${source} must hold a JSON array of destinations.`);
  const problems: string[] = [];
  const destinations: OtlpDestination[] = [];
  const seen = new Set<string>();
  document.forEach((entry: unknown, index) => {
    const at = `[${index}]`;
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      problems.push(`${at}: must be an object`);
      return;
    }
    const { id, name, endpoint, headers, ...rest } = entry as Record<string, unknown>;
    for (const key of Object.keys(rest)) problems.push(`${at}.${key}: unknown property`);
    if (typeof name !== "string" || !NAME.test(name)) problems.push(`${at}.name: 1 to 255 of A-Z a-z 0-9 . _ -`);
    if (id !== undefined && (typeof id !== "string" || !NAME.test(id))) problems.push(`${at}.id: 1 to 255 of A-Z a-z 0-9 . _ -`);
    let url: URL | undefined;
    try {
      url = typeof endpoint === "string" ? new URL(endpoint) : undefined;
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) problems.push(`${at}.endpoint: an http or https URL`);
    // A password in the URL would be logged with it; credentials belong in `headers`.
    else if (url.username !== "" || url.password !== "") problems.push(`${at}.endpoint: no user or password in the URL; put credentials in headers`);
    const headerMap: Record<string, string> = {};
    if (headers !== undefined) {
      if (headers === null || typeof headers !== "object" || Array.isArray(headers)) problems.push(`${at}.headers: an object of header names to text`);
      else
        for (const [header, value] of Object.entries(headers)) {
          const lower = header.toLowerCase();
          if (!HEADER_NAME.test(header) || typeof value !== "string" || !HEADER_VALUE.test(value))
            problems.push(`${at}.headers.${header}: a header name and a value of tab, visible ASCII and space, at most 8192 characters`);
          else if (RESERVED_HEADERS.has(lower)) problems.push(`${at}.headers.${header}: set by the exporter itself; it cannot be configured`);
          else if (Object.keys(headerMap).some((known) => known.toLowerCase() === lower))
            problems.push(`${at}.headers.${header}: given twice (header names are case-insensitive)`);
          // Defined, not assigned: a header named __proto__ stays a header.
          else Object.defineProperty(headerMap, header, { value, enumerable: true, writable: true, configurable: true });
        }
    }
    if (typeof name !== "string" || url === undefined) return;
    const destinationId = typeof id === "string" ? id : `otlpdst_${name}`;
    for (const key of [`id ${destinationId}`, `name ${name}`]) {
      if (seen.has(key)) problems.push(`${at}: a second destination with the ${key}`);
      seen.add(key);
    }
    destinations.push({ id: destinationId, name, endpoint: url.href, headers: headerMap });
  });
  if (problems.length > 0)
    throw new OtlpDestinationsError(
      `OTLP destinations file ${source} is invalid (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n  ${problems.join("\n  ")}`,
    );
  return destinations;
}

/** {@link parseOtlpDestinations} of a file. */
export function readOtlpDestinations(path: string): OtlpDestination[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new OtlpDestinationsError(`Cannot read the OTLP destinations file ${path}: ${(error as Error).message}`, error);
  }
  return parseOtlpDestinations(text, path);
}
