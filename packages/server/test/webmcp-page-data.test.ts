import { describe, expect, it } from "vitest";
import { PAGE_DATA_LIMITS, toInvocationOutcome, toToolDefinition } from "../src/webmcp/page-data.js";
import { ToolRefTable } from "../src/webmcp/tool-refs.js";

describe("page data from WebMCP events", () => {
  it("maps the domain's annotations to the API's names and leaves debugging out", () => {
    const checked = toToolDefinition({
      name: "t",
      description: "d",
      frameId: "F",
      annotations: { readOnly: true, untrustedContent: false, consequential: true, debugging: true },
    });
    expect(checked).toEqual({
      ok: true,
      tool: {
        name: "t",
        description: "d",
        inputSchema: {},
        annotations: { read_only: true, untrusted_content: false, consequential: true },
        backendNodeId: undefined,
        json: '"name":"t","description":"d","input_schema":{},"annotations":{"read_only":true,"untrusted_content":false,"consequential":true}',
        jsonBytes: 126,
      },
    });
  });

  it("marks a declarative tool without toolautosubmit as autosubmit false, and keeps autosubmit true", () => {
    expect(toToolDefinition({ name: "f", description: "", frameId: "F", backendNodeId: 7 })).toMatchObject({
      ok: true,
      tool: { annotations: { autosubmit: false }, backendNodeId: 7 },
    });
    expect(toToolDefinition({ name: "f", description: "", frameId: "F", backendNodeId: 7, annotations: { autosubmit: true } })).toMatchObject({
      ok: true,
      tool: { annotations: { autosubmit: true } },
    });
    expect(toToolDefinition({ name: "i", description: "", frameId: "F" })).toMatchObject({ ok: true, tool: { annotations: undefined } });
  });

  it("passes schemas through as data, replacing a non-object with {} and ignoring non-boolean hints", () => {
    // A schema is data: even a property named __proto__ stays an ordinary key.
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"x-anything":[1,2]}') as Record<string, unknown>;
    expect(toToolDefinition({ name: "s", description: "", inputSchema: schema, frameId: "F" })).toMatchObject({ ok: true, tool: { inputSchema: schema } });
    expect(toToolDefinition({ name: "s", description: 5, inputSchema: [1], annotations: { readOnly: "yes" }, frameId: "F" })).toMatchObject({
      ok: true,
      tool: { description: "", inputSchema: {}, annotations: undefined },
    });
  });

  it("does not list a tool without a name, with a name over the cap, or with a schema over the cap", () => {
    expect(toToolDefinition({ description: "", frameId: "F" })).toMatchObject({ ok: false });
    expect(toToolDefinition({ name: "n".repeat(PAGE_DATA_LIMITS.toolNameChars + 1), description: "", frameId: "F" })).toMatchObject({ ok: false });
    expect(toToolDefinition({ name: "n".repeat(PAGE_DATA_LIMITS.toolNameChars), description: "", frameId: "F" })).toMatchObject({ ok: true });
    const big = { type: "object", description: "d".repeat(PAGE_DATA_LIMITS.inputSchemaBytes) };
    expect(toToolDefinition({ name: "s", description: "", inputSchema: big, frameId: "F" })).toMatchObject({ ok: false });
  });

  it("maps toolResponded statuses, with the exception's description when errorText is empty", () => {
    expect(toInvocationOutcome({ invocationId: "i", status: "Completed", output: { sum: 42 } })).toEqual({ status: "completed", output: { sum: 42 } });
    expect(toInvocationOutcome({ invocationId: "i", status: "Completed", output: null })).toEqual({ status: "completed", output: null });
    expect(toInvocationOutcome({ invocationId: "i", status: "Completed" })).toEqual({ status: "completed" });
    expect(toInvocationOutcome({ invocationId: "i", status: "Canceled" })).toEqual({ status: "canceled" });
    expect(toInvocationOutcome({ invocationId: "i", status: "Error", errorText: "No submit button" })).toEqual({
      status: "error",
      error_text: "No submit button",
    });
    expect(toInvocationOutcome({ invocationId: "i", status: "Error", errorText: "", exception: { description: "TypeError: kaboom" } })).toEqual({
      status: "error",
      error_text: "TypeError: kaboom",
    });
    expect(toInvocationOutcome({ invocationId: "i", status: "Error", errorText: "" })).toEqual({
      status: "error",
      error_text: "The tool failed without an error message.",
    });
  });

  it("drops an output over 4 MiB (saying so) and cuts long error texts", () => {
    const huge = toInvocationOutcome({ invocationId: "i", status: "Completed", output: "x".repeat(PAGE_DATA_LIMITS.outputBytes) });
    expect(huge.status).toBe("completed");
    expect(huge).not.toHaveProperty("output");
    expect(huge.error_text).toMatch(/over the service's limit/);
    const long = toInvocationOutcome({ invocationId: "i", status: "Error", errorText: "e".repeat(PAGE_DATA_LIMITS.errorTextChars * 2) });
    expect(long.error_text).toHaveLength(PAGE_DATA_LIMITS.errorTextChars);
  });
});

describe("tool refs", () => {
  it("issues unguessable refs that name one target while live, then answer stale; anything else is unknown", () => {
    const table = new ToolRefTable<string>();
    const a = table.issue("a");
    const b = table.issue("a");
    expect(a).toMatch(/^wmt_[A-Za-z0-9_-]{22}$/);
    expect(a).not.toBe(b);
    expect(table.lookup(a)).toEqual({ state: "live", target: "a" });
    table.retire(a);
    expect(table.lookup(a)).toEqual({ state: "stale" });
    expect(table.lookup(b)).toEqual({ state: "live", target: "a" });
    expect(table.lookup("wmt_AAAAAAAAAAAAAAAAAAAAAA")).toEqual({ state: "unknown" });
    expect(table.lookup("not a ref")).toEqual({ state: "unknown" });
    expect(new ToolRefTable<string>().lookup(b)).toEqual({ state: "unknown" });
    table.retireAll();
    expect(table.lookup(b)).toEqual({ state: "stale" });
  });

  it("remembers a bounded number of stale refs, forgetting the oldest first", () => {
    const table = new ToolRefTable<number>(2);
    const refs = [1, 2, 3].map((n) => table.issue(n));
    for (const ref of refs) table.retire(ref);
    expect(refs.map((ref) => table.lookup(ref).state)).toEqual(["unknown", "stale", "stale"]);
  });
});
