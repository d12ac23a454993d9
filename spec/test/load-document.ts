import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/** The bundled document that `pnpm build` writes; tests read what users get. */
export const bundledPath = new URL("../dist/openapi.json", import.meta.url);

export function loadBundled(): Record<string, any> {
  return JSON.parse(readFileSync(bundledPath, "utf8"));
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * An Ajv 2020-12 instance holding the whole bundled document, so that any schema in
 * it can be compiled by JSON pointer with its internal `$ref`s intact.
 */
export function createDocumentAjv(document: Record<string, unknown>): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
  addFormats(ajv);
  // Strict mode catches misspelt schema keywords; OpenAPI's own annotation keywords and
  // the document's top-level fields (the root is added as one schema) are declared here,
  // and so are the spec's own annotations (CONVENTIONS.md), which only the server enforces.
  const extensions = [
    "x-max-bytes",
    "x-max-depth",
    "x-property-name-pattern",
    "x-max-items-per-document",
    "x-max-items-per-tab",
    "x-max-definition-bytes",
    "x-max-entries",
    "x-max-entry-name-bytes",
    "x-max-unpacked-bytes",
    "x-max-compression-ratio",
    "x-max-age-ms",
  ];
  const openApiKeywords = ["example", "discriminator", "xml", "externalDocs", ...extensions];
  const documentFields = ["openapi", "info", "jsonSchemaDialect", "servers", "paths", "webhooks", "components", "security", "tags"];
  for (const keyword of [...openApiKeywords, ...documentFields]) ajv.addKeyword(keyword);
  ajv.addSchema(document, "openapi.json");
  return ajv;
}
