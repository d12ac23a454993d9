import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { operationId?: string; responses?: Record<string, { $ref?: string; "x-error-codes"?: string[]; content?: Record<string, unknown> }> }>
  >;
  components: { responses: Record<string, { "x-error-codes"?: string[] }> };
}

/** The bundled spec (`@browser-service/openapi`). */
export function loadSpec(): OpenApiDocument {
  const path = createRequire(import.meta.url).resolve("@browser-service/openapi/openapi.json");
  return JSON.parse(readFileSync(path, "utf8")) as OpenApiDocument;
}

/** Every operation of the spec: id, method and path. */
export function specOperations(): { operationId: string; method: string; path: string }[] {
  const spec = loadSpec();
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => typeof operation === "object" && operation !== null && "operationId" in operation)
      .map(([method, operation]) => ({ operationId: operation.operationId as string, method: method.toUpperCase(), path })),
  );
}

/** The `x-error-codes` of every operation's error responses, by operationId and status. */
export function specErrorCodes(): Record<string, Record<string, string[]>> {
  const spec = loadSpec();
  const codes: Record<string, Record<string, string[]>> = {};
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== "object" || operation === null || !operation.operationId) continue;
      const byStatus: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const target = response.$ref ? spec.components.responses[response.$ref.split("/").pop() as string] : response;
        if (target?.["x-error-codes"]) byStatus[status] = target["x-error-codes"];
      }
      codes[operation.operationId] = byStatus;
    }
  }
  return codes;
}

/** The responses of every operation whose body is not JSON, by operationId and status, with their media type. */
export function specByteResponses(): Record<string, Record<string, string>> {
  const spec = loadSpec();
  const found: Record<string, Record<string, string>> = {};
  for (const item of Object.values(spec.paths)) {
    for (const operation of Object.values(item)) {
      if (typeof operation !== "object" || operation === null || !operation.operationId) continue;
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const mediaType = Object.keys(response.content ?? {})[0];
        if (mediaType !== undefined && mediaType !== "application/json") (found[operation.operationId] ??= {})[status] = mediaType;
      }
    }
  }
  return found;
}
