import { describe, expect, it } from "vitest";
import { loadBundled } from "../../../spec/test/load-document.js";
import { operationValidators } from "../src/index.js";

const document = loadBundled();
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** What the document says each operation's validators should cover. */
function expectedEntries(): Record<string, string[]> {
  const entries: Record<string, string[]> = {};
  for (const item of Object.values<any>(document.paths)) {
    for (const method of methods.filter((m) => item[m])) {
      const operation = item[method];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: any) =>
        p.$ref ? document.components.parameters[p.$ref.split("/").at(-1)] : p,
      );
      const locations = ["path", "query", "header"].filter((l) => parameters.some((p: any) => p.in === l));
      const statuses = Object.entries<any>(operation.responses)
        // Only JSON bodies have a validator; an archive's bytes have no schema to check.
        .filter(([, r]) => (r.$ref ? document.components.responses[r.$ref.split("/").at(-1)] : r).content?.["application/json"])
        .map(([status]) => `responses.${status}`);
      entries[operation.operationId] = [
        ...locations.map((l) => (l === "header" ? "headers" : l)),
        ...(operation.requestBody ? ["body"] : []),
        ...statuses,
      ].sort();
    }
  }
  return entries;
}

describe("operationValidators", () => {
  it("covers every operation: its parameters by location, its body and each response with a JSON body", () => {
    const actual = Object.fromEntries(
      Object.entries(operationValidators).map(([id, entry]) => [
        id,
        Object.entries(entry)
          .flatMap(([key, value]) => (key === "responses" ? Object.keys(value).map((status) => `responses.${status}`) : [key]))
          .sort(),
      ]),
    );
    expect(actual).toEqual(expectedEntries());
  });

  it("checks query bounds, coercing strings as they come from a URL", () => {
    const query = { limit: "101", offset: "-1", name: "" };
    const result = operationValidators.listProjects.query(query);
    expect(result).toEqual({
      ok: false,
      errors: [
        { pointer: "/offset", rule: "minimum", message: "/offset must be at least 0." },
        { pointer: "/limit", rule: "maximum", message: "/limit must be at most 100." },
        { pointer: "/name", rule: "minLength", message: "/name must not be empty." },
      ],
    });
    expect(operationValidators.listBrowsers.query({ limit: "1.5" })).toMatchObject({ ok: false, errors: [{ pointer: "/limit", rule: "type" }] });
  });

  it("reads integer parameters as plain decimal only, as the spec's Lists section says", () => {
    // The last: 401 digits, past any double, would read as Infinity and slip past `maximum`.
    for (const written of ["0x10", "+5", " 5", "5 ", "05", "-0", "1e3", "5.0", "0b11", "Infinity", "", `1${"0".repeat(400)}`]) {
      expect(operationValidators.listProjects.query({ limit: written })).toEqual({
        ok: false,
        errors: [{ pointer: "/limit", rule: "type", message: "/limit must be an integer." }],
      });
    }
    expect(operationValidators.listProjects.query({ limit: "16", offset: "0" })).toEqual({ ok: true, value: { limit: 16, offset: 0 } });
    expect(operationValidators.listProjects.query({ offset: "-7" })).toMatchObject({ ok: false, errors: [{ pointer: "/offset", rule: "minimum" }] });
    expect(operationValidators.listProjects.query({ offset: "9223372036854775807" })).toMatchObject({
      ok: false,
      errors: [{ pointer: "/offset", rule: "maximum" }],
    });
  });

  it("returns a coerced copy of valid parameters and leaves the input as given", () => {
    const query = { limit: "20", offset: "40" };
    expect(operationValidators.listBrowsers.query(query)).toEqual({ ok: true, value: { limit: 20, offset: 40 } });
    expect(query).toEqual({ limit: "20", offset: "40" });
  });

  it("reads a list parameter given once as a list of one, repeated as a list, and checks each value", () => {
    const read = operationValidators.listBrowserTelemetryEvents.query;
    expect(read({ category: "console" })).toEqual({ ok: true, value: { category: ["console"] } });
    expect(read({ category: ["console", "page"], type: "page_load" })).toEqual({ ok: true, value: { category: ["console", "page"], type: ["page_load"] } });
    expect(read({ category: ["console", "everything"] })).toMatchObject({ ok: false, errors: [{ pointer: "/category/1", rule: "enum" }] });
    expect(read({ type: "Not A Type" })).toMatchObject({ ok: false, errors: [{ pointer: "/type/0", rule: "pattern" }] });
    // A scalar parameter repeated is still refused: two values are not one.
    expect(read({ limit: ["5", "6"] })).toMatchObject({ ok: false, errors: [{ pointer: "/limit" }] });
  });

  it("rejects unknown query parameters and missing path parameters", () => {
    expect(operationValidators.listBrowsers.query({ limt: "5" })).toMatchObject({
      ok: false,
      errors: [{ pointer: "/limt", rule: "additionalProperties" }],
    });
    expect(operationValidators.getBrowser.path({})).toEqual({
      ok: false,
      errors: [{ pointer: "/id_or_name", rule: "required", message: "/id_or_name is required." }],
    });
  });

  it("checks headers by lowercase name and lets other headers through", () => {
    const headers = { "x-service-project-id": "proj_1", authorization: "Bearer t" };
    expect(operationValidators.getBrowser.headers(headers)).toEqual({ ok: true, value: headers });
    expect(operationValidators.getBrowser.headers({ "x-service-project-id": "" })).toMatchObject({
      ok: false,
      errors: [{ pointer: "/x-service-project-id", rule: "minLength" }],
    });
  });

  it("checks request bodies, an optional one being allowed to be absent", () => {
    expect(operationValidators.invokeWebMcpTool.body({ tool_ref: "wmt_1", input: {}, timeout_sec: 0 })).toEqual({
      ok: false,
      errors: [{ pointer: "/timeout_sec", rule: "minimum", message: "/timeout_sec must be at least 1." }],
    });
    expect(operationValidators.createBrowser.body(undefined)).toEqual({ ok: true, value: undefined });
    expect(operationValidators.createBrowser.body({ headless: true })).toMatchObject({ ok: false, errors: [{ pointer: "/headless" }] });
    expect(operationValidators.createProject.body(undefined)).toMatchObject({ ok: false, errors: [{ pointer: "", rule: "type" }] });
  });

  it("checks success and error response bodies", () => {
    const project = { id: "proj_1", name: "Default", status: "active", created_at: "2026-11-01T09:30:00Z", updated_at: "2026-11-01T09:30:00Z" };
    expect(operationValidators.listProjects.responses[200]([project])).toEqual({ ok: true, value: [project] });
    expect(operationValidators.listProjects.responses[200]([project, { ...project, status: "deleted" }])).toMatchObject({
      ok: false,
      errors: [{ pointer: "/1/status", rule: "enum" }],
    });
    expect(operationValidators.invokeWebMcpTool.responses[504]({ code: "outcome_unknown", message: "m", invocation_id: "inv_1" }).ok).toBe(true);
    expect(operationValidators.getProject.responses[404]({ code: "NotFound", message: "m" })).toMatchObject({
      ok: false,
      errors: [{ pointer: "/code", rule: "pattern", message: "/code must match the pattern ^[a-z][a-z0-9_]*$." }],
    });
  });
});
