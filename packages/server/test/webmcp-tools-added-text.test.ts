import { describe, expect, it } from "vitest";
import { readToolsAdded } from "../src/webmcp/tools-added-text.js";

/** The event's text as Chromium writes it for a tab's session. */
const eventText = (tools: unknown[], tail = ',"sessionId":"S1"}') => `{"method":"WebMCP.toolsAdded","params":{"tools":${JSON.stringify(tools)}}${tail}`;

async function read(text: string): Promise<{ read: boolean; tools: unknown[]; slices: number }> {
  const tools: unknown[] = [];
  let slices = 0;
  const read = await readToolsAdded(
    text,
    (slice) => {
      slices++;
      tools.push(...slice);
    },
    () => true,
  );
  return { read, tools, slices };
}

describe("reading a toolsAdded event tool by tool", () => {
  it("gives back every tool as JSON.parse would, whatever its strings hold", async () => {
    const tools = [
      { name: "quotes", description: 'a "quoted" \\"escaped\\" text \\\\', frameId: "F" },
      { name: "brackets", description: "}]{[ ,] in a string", inputSchema: { type: "object", properties: { 'a"}': { enum: [[], {}, "]"] } } }, frameId: "F" },
      { name: "backslashes", description: "\\".repeat(7), frameId: "F" },
      { name: "unicode", description: "café 名前 😀 \u0000\n", frameId: "F" },
    ];
    expect(await read(eventText(tools))).toEqual({ read: true, tools, slices: 1 });
    expect(await read(eventText([], "}"))).toEqual({ read: true, tools: [], slices: 0 });
  });

  it("hands a large event over in slices, in order", async () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, description: "D".repeat(8192), frameId: "F" }));
    const { read: whole, tools: got, slices } = await read(eventText(tools));
    expect(whole).toBe(true);
    expect(got).toEqual(tools);
    expect(slices).toBeGreaterThan(1);
  });

  it("stops at text that is not what Chromium writes, having handed over the tools before it", async () => {
    const good = { name: "good", description: "", frameId: "F" };
    const text = eventText([good, { name: "next", description: "", frameId: "F" }]);
    expect(await read(text.replace('{"name":"next"', '{"name":next"'))).toEqual({ read: false, tools: [good], slices: 1 });
    expect(await read(text.replace('{"name":"next"', '"x",{"name":"next"'))).toEqual({ read: false, tools: [good], slices: 1 });
    expect(await read(text.slice(0, 80))).toMatchObject({ read: false, tools: [] });
    expect(await read(text.replace("WebMCP.toolsAdded", "WebMCP.toolsRemoved"))).toEqual({ read: false, tools: [], slices: 0 });
  });

  it("never parses one tool longer than a slice (1 Mi characters): reading ends there, as for a malformed text", async () => {
    const good = { name: "good", description: "", frameId: "F" };
    // A page can register one tool with a description of tens of megabytes; parsing it would hold the event loop.
    const stuffed = { name: "stuffed", description: "x".repeat(1024 * 1024), frameId: "F" };
    expect(await read(eventText([good, stuffed, good]))).toEqual({ read: false, tools: [good], slices: 1 });
    const justUnder = { name: "u", description: "x".repeat(1024 * 1024 - 64), frameId: "F" };
    expect(await read(eventText([justUnder]))).toEqual({ read: true, tools: [justUnder], slices: 1 });
  });
});
