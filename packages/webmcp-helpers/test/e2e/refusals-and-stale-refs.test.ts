import { ConflictError } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  compileInputSchema,
  describeToolsForModel,
  InputInvalidError,
  invokeTool,
  listTools,
  selectTool,
  ToolNotFoundError,
  UnsafeSchemaError,
  UsageError,
} from "../../src/index.js";
import { useHarness, waitForPage, waitForTools } from "../support/harness.js";
import { hookListTools } from "../support/hooked-client.js";

const h = useHarness();

async function openShop(): Promise<{ tab: Page; url: string }> {
  const url = h.pages.url("/shop");
  const tab = await h.open(url);
  await waitForPage(h, url, 5);
  return { tab, url };
}

/** Reloads the tab (a new document) and waits until the snapshot has its new registration of `stale`'s name. */
async function replaceDocument(tab: Page, stale: WebMcpTool): Promise<void> {
  await tab.reload();
  await waitForTools(h.client, h.browser, (tools) => {
    const now = tools.filter((tool) => tool.name === stale.name && tool.source.tab_id === stale.source.tab_id);
    return now.length === 1 && now[0]?.tool_ref !== stale.tool_ref;
  });
}

describe("a malicious page's schemas are refused before anything is invoked", () => {
  it("huge, deeply nested, and a backreference: UnsafeSchemaError; a catastrophic pattern: checked in bounded steps", async () => {
    const url = h.pages.url("/malicious");
    await h.open(url);
    const tools = await waitForPage(h, url, 4);
    const invoke = (name: string, input: Record<string, unknown> = {}) => invokeTool(h.client, h.browser, { select: { name }, input });

    await expect(invoke("huge_schema")).rejects.toThrow(UnsafeSchemaError);
    await expect(invoke("huge_schema")).rejects.toMatchObject({
      code: "schema_too_many_nodes",
      schemaPointer: expect.stringMatching(/^\/properties\/size\/enum\/\d+$/),
    });
    await expect(invoke("deep_schema", { q: "x" })).rejects.toMatchObject({ name: "UnsafeSchemaError", code: "schema_too_deep" });
    await expect(invoke("backreference_regex", { q: "aa" })).rejects.toMatchObject({
      name: "UnsafeSchemaError",
      code: "pattern_unsupported",
      schemaPointer: "/properties/q/pattern",
    });

    // ^(a+)+$ against 40 a's and a "!": about 2^40 steps for a backtracking engine. The
    // validator's automaton takes a few per character, and the input is refused as invalid.
    const evil = `${"a".repeat(40)}!`;
    const refused = invoke("catastrophic_regex", { q: evil });
    await expect(refused).rejects.toThrow(InputInvalidError);
    await expect(refused).rejects.toMatchObject({ problems: [{ pointer: "/q", keyword: "pattern" }] });
    const regexTool = selectTool(tools, { name: "catastrophic_regex" });
    expect(compileInputSchema(regexTool.input_schema).validate({ q: evil }).steps).toBeLessThan(1_000);

    for (const name of ["huge_schema", "deep_schema", "backreference_regex", "catastrophic_regex"]) expect([name, h.pages.runs(name)]).toEqual([name, 0]);
    // The pattern itself is usable: a matching input is sent, once.
    await expect(invoke("catastrophic_regex", { q: "aaaa" })).resolves.toMatchObject({ status: "completed" });
    expect(h.pages.runs("catastrophic_regex")).toBe(1);

    const forModel = describeToolsForModel(tools);
    expect(forModel).toContain("(withheld: schema_too_many_nodes; this tool cannot be invoked through the helpers)");
    expect(forModel).toContain("(withheld: schema_too_deep; this tool cannot be invoked through the helpers)");
  });
});

describe("checks before sending", () => {
  it("refuses bad options before any request, and an input that does not match the schema before invoking", async () => {
    await openShop();
    const select = { name: "add_to_cart" };
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const attempts: [unknown, string][] = [
      [{ select, timeoutSec: 0 }, "invalid_timeout"],
      [{ select, timeoutSec: 121 }, "invalid_timeout"],
      [{ select, timeoutSec: 1.5 }, "invalid_timeout"],
      [{ select, input: [] }, "input_not_object"],
      [{ select, input: circular }, "input_not_serializable"],
      [{ select, input: { sku: "AB-123", note: "x".repeat(1024 * 1024) } }, "input_too_large"],
      [{ select, toolRef: "wmt_x" }, "invalid_target"],
      [{}, "invalid_target"],
      [{ toolRef: null }, "invalid_target"],
      [{ toolRef: { name: "add_to_cart" } }, "invalid_target"],
      [{ select: { name: "add_to_cart", tab_id: 1 } }, "invalid_criteria"],
    ];
    const watched = hookListTools(h.client, async () => undefined);
    for (const [options, code] of attempts) {
      const attempt = invokeTool(watched.client, h.browser, options as Parameters<typeof invokeTool>[2]);
      await expect(attempt).rejects.toThrow(UsageError);
      await expect(attempt).rejects.toMatchObject({ code });
    }
    // Refused before any request, discovery included.
    expect(watched.listCalls()).toBe(0);
    const invalid = invokeTool(h.client, h.browser, { select, input: { sku: "lamp", qty: 11, colour: "red" } });
    await expect(invalid).rejects.toThrow(InputInvalidError);
    await expect(invalid).rejects.toMatchObject({
      problems: [
        { pointer: "/sku", keyword: "pattern" },
        { pointer: "/qty", keyword: "maximum" },
        { pointer: "", keyword: "additionalProperties" },
      ],
    });
    expect(h.pages.runs("add_to_cart")).toBe(0);
  });
});

describe("a tool_ref gone stale after navigation", () => {
  it("selected by criteria: discovered and selected once more, and the new document runs it once", async () => {
    const { tab } = await openShop();
    // Between invokeTool's discovery and its request, the user reloads the tab.
    const hooked = hookListTools(h.client, async (tools, call) => {
      if (call === 1) await replaceDocument(tab, selectTool(tools, { name: "add_to_cart" }));
      return undefined;
    });
    const result = await invokeTool(hooked.client, h.browser, { select: { name: "add_to_cart" }, input: { sku: "AB-123" } });
    expect(result).toMatchObject({ status: "completed", rediscovered: true, output: { added: "AB-123" } });
    expect(hooked.listCalls()).toBe(2);
    expect(h.pages.runs("add_to_cart")).toBe(1);
  });

  it("selected by criteria but stale again: discovered once more only, then the 409 is thrown", async () => {
    const { tab } = await openShop();
    const hooked = hookListTools(h.client, async (tools) => {
      await replaceDocument(tab, selectTool(tools, { name: "add_to_cart" }));
      return undefined;
    });
    const attempt = invokeTool(hooked.client, h.browser, { select: { name: "add_to_cart" }, input: { sku: "AB-123" } });
    await expect(attempt).rejects.toThrow(ConflictError);
    await expect(attempt).rejects.toMatchObject({ status: 409, code: "tool_ref_stale" });
    expect(hooked.listCalls()).toBe(2);
    expect(h.pages.runs("add_to_cart")).toBe(0);
  });

  it("selected by criteria with a ref the server never issued (404 tool_not_found): discovered once more", async () => {
    await openShop();
    const hooked = hookListTools(h.client, async (tools, call) => (call === 1 ? tools.map((tool) => ({ ...tool, tool_ref: `${tool.tool_ref}x` })) : undefined));
    const result = await invokeTool(hooked.client, h.browser, { select: { name: "add_to_cart" }, input: { sku: "AB-123" } });
    expect(result).toMatchObject({ status: "completed", rediscovered: true });
    expect(h.pages.runs("add_to_cart")).toBe(1);
  });

  it("passed as a tool from an old snapshot: the service's 409 is surfaced, nothing is chosen in its place", async () => {
    const { tab } = await openShop();
    const old = selectTool(await listTools(h.client, h.browser), { name: "add_to_cart" });
    await replaceDocument(tab, old);
    const hooked = hookListTools(h.client, async () => undefined);
    const attempt = invokeTool(hooked.client, h.browser, { toolRef: old, input: { sku: "AB-123" } });
    await expect(attempt).rejects.toThrow(ConflictError);
    await expect(attempt).rejects.toMatchObject({ code: "tool_ref_stale" });
    expect(hooked.listCalls()).toBe(0);
    expect(h.pages.runs("add_to_cart")).toBe(0);
  });

  it("passed as a tool_ref string: a fresh snapshot lacks it, so nothing is sent", async () => {
    const { tab } = await openShop();
    const old = selectTool(await listTools(h.client, h.browser), { name: "add_to_cart" });
    await replaceDocument(tab, old);
    const attempt = invokeTool(h.client, h.browser, { toolRef: old.tool_ref, input: { sku: "AB-123" } });
    await expect(attempt).rejects.toThrow(ToolNotFoundError);
    await expect(attempt).rejects.toMatchObject({ code: "tool_ref_not_listed", snapshotSize: 5 });
    expect(h.pages.runs("add_to_cart")).toBe(0);
    // The fresh ref works, and is validated against its own schema.
    const fresh = selectTool(await listTools(h.client, h.browser), { name: "add_to_cart" });
    await expect(invokeTool(h.client, h.browser, { toolRef: fresh.tool_ref, input: { sku: "no" } })).rejects.toThrow(InputInvalidError);
    await expect(invokeTool(h.client, h.browser, { toolRef: fresh.tool_ref, input: { sku: "AB-123" } })).resolves.toMatchObject({
      status: "completed",
      rediscovered: false,
    });
    expect(h.pages.runs("add_to_cart")).toBe(1);
  });
});

describe("errors of the service pass through unchanged", () => {
  it("an unknown browser is the client's NotFoundError (not_found), never a re-discovery", async () => {
    await expect(invokeTool(h.client, "no-such-browser", { select: { name: "add_to_cart" } })).rejects.toMatchObject({
      name: "NotFoundError",
      code: "not_found",
      status: 404,
    });
    await expect(listTools(h.client, "no-such-browser")).rejects.toMatchObject({ code: "not_found" });
  });
});
