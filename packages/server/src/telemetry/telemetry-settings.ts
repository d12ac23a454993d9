import { type BrowserTelemetryConfig, type BrowserTelemetryRequestConfig, limits, type TelemetryCdpMethod } from "@browser-service/types";
import { ApiError, BadRequestError } from "../http/api-errors.js";

/** The telemetry categories, in the spec's order (`BrowserTelemetryResolvedCategories`). */
export type TelemetryCategoryName = keyof BrowserTelemetryConfig["browser"];

/** The categories captured unless a create turns them off; every other is off unless turned on. */
const DEFAULT_ON: ReadonlySet<TelemetryCategoryName> = new Set(["control", "connection", "system", "captcha"]);

/** Every category, in the order the record shows them. */
export const TELEMETRY_CATEGORIES: readonly TelemetryCategoryName[] = [
  "control",
  "connection",
  "system",
  "captcha",
  "console",
  "network",
  "page",
  "interaction",
  "screenshot",
  "platform",
];

/** The defaults of the byte caps on kept events (`--telemetry-max-mib-per-browser`, `--telemetry-max-mib-per-project`), in characters of their JSON. */
export const DEFAULT_CHARS_PER_BROWSER = 64 * 1024 * 1024;
export const DEFAULT_CHARS_PER_PROJECT = 1024 * 1024 * 1024;

/** The DevTools methods `cdp_command` events report: the spec's `TelemetryCdpMethod`. */
export const REPORTED_CDP_METHODS: ReadonlySet<string> = new Set<string>(limits.schemas.TelemetryCdpMethod.enum);

/** An OTLP destination as browsers name it: its `id` and `name` (what the operator configured, minus where and how it is sent). */
export interface DestinationName {
  id: string;
  name: string;
}

/** 404 `otlp_destination_not_found`: `export.otlp.destination` names no configured destination. */
export class OtlpDestinationNotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "otlp_destination_not_found", message);
  }
}

/**
 * What a create's `telemetry` captures, as the browser's record shows it, or `null` when
 * it captures nothing: omitted or `null`, `enabled: false`, or every category off. The
 * spec's `not` and `if`/`then` rules were checked with the body; they are checked again
 * here, so an embedder that skips the validators gets the same 400.
 */
export function resolveTelemetry(
  request: BrowserTelemetryRequestConfig | null | undefined,
  destinations: readonly DestinationName[],
): BrowserTelemetryConfig | null {
  if (request === undefined || request === null) return null;
  const otlp = request.export?.otlp;
  if (request.enabled === false && request.browser !== undefined)
    throw new BadRequestError("telemetry: `enabled: false` cannot be combined with `browser` (rule 1 of BrowserTelemetryRequestConfig).");
  if (request.enabled === false && request.export !== undefined)
    throw new BadRequestError(
      "telemetry: `enabled: false` cannot be combined with `export`: export requires capture (rule 2 of BrowserTelemetryRequestConfig).",
    );
  if (request.storage?.enabled === false && otlp?.destination === undefined)
    throw new BadRequestError(
      "telemetry: `storage.enabled: false` requires an OTLP destination in `export.otlp.destination` (rule 3 of BrowserTelemetryRequestConfig).",
    );
  if (otlp?.enabled === false && otlp.destination !== undefined)
    throw new BadRequestError(
      "telemetry.export.otlp: `enabled: false` cannot be combined with a `destination` (rule 1 of BrowserTelemetryOTLPExportRequestConfig).",
    );
  if (otlp?.enabled === true && otlp.destination === undefined)
    throw new BadRequestError("telemetry.export.otlp: `enabled: true` requires a `destination` (rule 2 of BrowserTelemetryOTLPExportRequestConfig).");
  if (request.enabled === false) return null;
  const given = request.browser ?? {};
  const excluded = [...new Set<TelemetryCdpMethod>(given.control?.cdp?.excluded_methods ?? [])];
  const browser = Object.fromEntries(
    TELEMETRY_CATEGORIES.map((category) => {
      const enabled = given[category]?.enabled ?? DEFAULT_ON.has(category);
      return [category, category === "control" ? { enabled, cdp: { excluded_methods: excluded } } : { enabled }];
    }),
  ) as BrowserTelemetryConfig["browser"];
  if (!TELEMETRY_CATEGORIES.some((category) => browser[category].enabled)) return null;
  let destination: DestinationName | undefined;
  const ref = otlp?.destination;
  if (ref !== undefined) {
    const [by, value] = "id" in ref ? (["id", ref.id] as const) : (["name", ref.name] as const);
    destination = destinations.find((candidate) => candidate[by] === value);
    if (destination === undefined) throw new OtlpDestinationNotFoundError(`No OTLP destination has the ${by} ${JSON.stringify(value)}.`);
  }
  return {
    browser,
    storage: { enabled: request.storage?.enabled ?? true },
    export: destination === undefined ? null : { otlp: { destination: { id: destination.id, name: destination.name } } },
  };
}
