// `limits` against the bundled document it is generated from, read here without the
// generator: every constant is the spec's value at its place, and every numeric rule of
// the spec has its constant.
import { loadDocument } from "@browser-service/codegen";
import { describe, expect, it } from "vitest";
import { limits } from "../src/index.js";

const document = loadDocument();

const NUMERIC = [
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "default",
];
const LISTS = ["allOf", "anyOf", "oneOf", "prefixItems"];
/** The spec's extension keywords (spec/CONVENTIONS.md) by the name `limits` gives them. */
const EXTENSIONS: Record<string, string> = {
  maxBytes: "x-max-bytes",
  maxDepth: "x-max-depth",
  propertyNamePattern: "x-property-name-pattern",
  maxItemsPerDocument: "x-max-items-per-document",
  maxItemsPerTab: "x-max-items-per-tab",
  maxDefinitionBytes: "x-max-definition-bytes",
  maxEntries: "x-max-entries",
  maxEntryNameBytes: "x-max-entry-name-bytes",
  maxUnpackedBytes: "x-max-unpacked-bytes",
  maxCompressionRatio: "x-max-compression-ratio",
  maxAgeMs: "x-max-age-ms",
};
type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);

type Rule = number | string;

/** Each constant of `limits` as [JSON pointer into the document, value]. */
function constants(): [string, Rule][] {
  const found: [string, Rule][] = [];
  const visit = (rules: unknown, schema: Node, pointer: string): void => {
    for (const [key, value] of Object.entries(rules as Node)) {
      if (typeof value === "number" || typeof value === "string") {
        found.push([`${pointer}/${EXTENSIONS[key] ?? key}`, value]);
      } else if (key === "enum" && Array.isArray(value)) {
        // A string enum component's values, compared as their JSON.
        found.push([`${pointer}/enum`, JSON.stringify(value)]);
      } else if (LISTS.includes(key) && Array.isArray(value) && Array.isArray(schema[key])) {
        value.forEach((alternative, i) => visit(alternative, (schema[key] as Node[])[i]!, `${pointer}/${key}/${i}`));
      } else if (key === "items" && isNode(schema.items)) {
        visit(value, schema.items, `${pointer}/items`);
      } else {
        const property = (schema.properties as Record<string, Node> | undefined)?.[key];
        if (!property) throw new Error(`limits has ${pointer}/properties/${key}, which the document does not`);
        visit(value, property, `${pointer}/properties/${key}`);
      }
    }
  };
  for (const [kind, byName] of Object.entries(limits)) {
    for (const [name, rules] of Object.entries(byName)) {
      const component = document.components[kind]![name]!;
      const withSchema = kind === "schemas" ? "" : "/schema";
      visit(rules, kind === "schemas" ? component : (component.schema as Node), `/components/${kind}/${name}${withSchema}`);
    }
  }
  return found;
}

/** Each numeric rule and extension of the document's components (without following `$ref`), as [pointer, value]. */
function rulesInDocument(): [string, Rule][] {
  const found: [string, Rule][] = [];
  const visit = (schema: unknown, pointer: string): void => {
    if (!isNode(schema)) return;
    for (const keyword of NUMERIC) if (typeof schema[keyword] === "number") found.push([`${pointer}/${keyword}`, schema[keyword]]);
    for (const keyword of Object.values(EXTENSIONS)) if (keyword in schema) found.push([`${pointer}/${keyword}`, schema[keyword] as Rule]);
    if (isNode(schema.properties)) for (const [name, property] of Object.entries(schema.properties)) visit(property, `${pointer}/properties/${name}`);
    visit(schema.items, `${pointer}/items`);
    for (const keyword of LISTS)
      if (Array.isArray(schema[keyword])) (schema[keyword] as unknown[]).forEach((sub, i) => visit(sub, `${pointer}/${keyword}/${i}`));
  };
  for (const [name, schema] of Object.entries(document.components.schemas ?? {})) {
    visit(schema, `/components/schemas/${name}`);
    const values = (schema as Node).enum;
    if (Array.isArray(values) && values.every((value) => typeof value === "string")) found.push([`/components/schemas/${name}/enum`, JSON.stringify(values)]);
  }
  for (const kind of ["parameters", "headers"]) {
    for (const [name, component] of Object.entries(document.components[kind] ?? {})) visit(component.schema, `/components/${kind}/${name}/schema`);
  }
  return found;
}

function at(pointer: string): unknown {
  return pointer
    .slice(1)
    .split("/")
    .reduce<unknown>((node, segment) => (node as Node | undefined)?.[segment], document);
}

describe("limits", () => {
  it("holds each rule at the spec's value", () => {
    const found = constants();
    expect(found.length).toBeGreaterThan(0);
    for (const [pointer, value] of found) expect(pointer.endsWith("/enum") ? JSON.stringify(at(pointer)) : at(pointer), pointer).toBe(value);
  });

  it("holds every numeric rule of the spec, its extensions included, and each string enum component's values", () => {
    expect(constants().sort()).toEqual(rulesInDocument().sort());
  });

  it("has the rules other packages import (server, client, webmcp-helpers)", () => {
    expect(limits.schemas.WebMcpInvokeRequest.maxBytes).toBe(at("/components/schemas/WebMcpInvokeRequest/x-max-bytes"));
    expect(limits.schemas.WebMcpInvokeRequest.input.maxBytes).toBe(at("/components/schemas/WebMcpInvokeRequest/properties/input/x-max-bytes"));
    const timeout = "/components/schemas/WebMcpInvokeRequest/properties/timeout_sec";
    expect(limits.schemas.WebMcpInvokeRequest.timeout_sec).toEqual({
      minimum: at(`${timeout}/minimum`),
      maximum: at(`${timeout}/maximum`),
      default: at(`${timeout}/default`),
    });
    expect(limits.schemas.WebMcpTool.input_schema.maxBytes).toBe(at("/components/schemas/WebMcpTool/properties/input_schema/x-max-bytes"));
    expect(limits.parameters.Offset.maximum).toBe(at("/components/parameters/Offset/schema/maximum"));
    expect(limits.schemas.WebMcpInvokeRequest.input.propertyNamePattern).toBe(
      at("/components/schemas/WebMcpInvokeRequest/properties/input/x-property-name-pattern"),
    );
    const tools = "/components/schemas/WebMcpToolList/properties/tools";
    expect(limits.schemas.WebMcpToolList.tools).toEqual({
      maxItems: at(`${tools}/maxItems`),
      maxItemsPerDocument: at(`${tools}/x-max-items-per-document`),
      maxItemsPerTab: at(`${tools}/x-max-items-per-tab`),
      maxDefinitionBytes: at(`${tools}/x-max-definition-bytes`),
    });
    expect(limits.schemas.WebMcpToolList.maxBytes).toBe(at("/components/schemas/WebMcpToolList/x-max-bytes"));
    const archive = "/components/schemas/UploadExtensionRequest/properties/file";
    expect(limits.schemas.UploadExtensionRequest.file).toEqual({
      maxBytes: at(`${archive}/x-max-bytes`),
      maxEntries: at(`${archive}/x-max-entries`),
      maxEntryNameBytes: at(`${archive}/x-max-entry-name-bytes`),
      maxUnpackedBytes: at(`${archive}/x-max-unpacked-bytes`),
      maxCompressionRatio: at(`${archive}/x-max-compression-ratio`),
    });
    const title = "/components/schemas/WebMcpToolSource/properties/page_title";
    expect(limits.schemas.WebMcpToolSource.page_title).toEqual({ maxLength: at(`${title}/maxLength`), maxAgeMs: at(`${title}/x-max-age-ms`) });
  });
});
