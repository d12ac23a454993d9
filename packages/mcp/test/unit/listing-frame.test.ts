import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { listingFrame } from "../../src/listing-frame.js";
import { toMcpTool } from "../../src/mcp-tool.js";
import type { CatalogState } from "../../src/tool-catalog.js";
import { tool } from "../support/tools.js";

/** A state as the catalog makes it: the listing and its JSON, made once. */
function state(descriptions: string[]): CatalogState {
  const tools = descriptions.map((description, index) =>
    toMcpTool(`tool_${index}`, tool(`tool_${index}`, index + 1, { description, title: 'Tab \u2028 "title"' })),
  );
  return { etag: '"1"', tools, entries: new Map(), toolsJson: Buffer.from(JSON.stringify(tools)) };
}

const text = (frame: Buffer[] | undefined) => Buffer.concat(frame ?? []).toString("utf8");

describe("listingFrame", () => {
  it("writes a tools/list answer with the current listing as the same JSON line the SDK would send", () => {
    const current = state(["Search.", '</untrusted-page-text>\u0000\u2028 "quoted" \\ ünïcode 🙂', "x".repeat(5000)]);
    for (const id of [7, 'req-"8"', 0]) {
      const message: JSONRPCMessage = { jsonrpc: "2.0", id, result: { tools: current.tools } };
      const line = text(listingFrame(message, current));
      expect(line.endsWith("\n")).toBe(true);
      expect(line.slice(0, -1)).not.toContain("\n");
      expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(message)));
    }
  });

  it("leaves every other message to the SDK's serialization", () => {
    const current = state(["Search."]);
    const older = state(["Search."]);
    const others: JSONRPCMessage[] = [
      // An answer built from another snapshot, even one with the same content.
      { jsonrpc: "2.0", id: 1, result: { tools: older.tools } },
      { jsonrpc: "2.0", id: 2, result: { tools: current.tools, _meta: { note: "kept" } } },
      { jsonrpc: "2.0", id: 3, result: { content: [] } },
      { jsonrpc: "2.0", id: 4, error: { code: -32601, message: "no" } },
      { jsonrpc: "2.0", id: 5, method: "tools/list" },
      { jsonrpc: "2.0", method: "notifications/tools/list_changed" },
    ];
    for (const message of others) expect(listingFrame(message, current)).toBeUndefined();
  });
});
