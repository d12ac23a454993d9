// What a user of @browser-service/webmcp-helpers writes: start a browser on a page that
// registers a WebMCP tool, find the tool by where it is registered, and invoke it once.
// Prints one JSON line of what it saw; anything unexpected throws (exit code 1).
//
//   node dist/webmcp.js <label>   with BROWSER_SERVICE_API_KEY, BROWSER_SERVICE_BASE_URL
//                                 and CONSUMER_TOOL_PAGE_URL (a page registering add_numbers)

import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import { invokeTool, listTools, selectTool } from "@browser-service/webmcp-helpers";

const label = process.argv[2];
const pageUrl = process.env["CONSUMER_TOOL_PAGE_URL"];
if (!label || !pageUrl) throw new Error("usage: CONSUMER_TOOL_PAGE_URL=<url> node dist/webmcp.js <label>");

const client = createClient();
const browser = await client.browsers.create({ name: `consumer-${label}`, start_url: pageUrl });
try {
  // The page registers its tool once its script has run: look until the snapshot has it.
  let tools: WebMcpTool[] = [];
  for (let attempt = 0; attempt < 100 && !tools.some((tool) => tool.name === "add_numbers"); attempt++) {
    if (attempt > 0) await sleep(100);
    tools = await listTools(client, browser.id);
  }
  const tool = selectTool(tools, { name: "add_numbers", pageUrl, frame: "top" });
  const result = await invokeTool(client, browser.id, { select: { name: "add_numbers", pageUrl }, input: { a: 2, b: 3 }, timeoutSec: 30 });
  console.log(
    JSON.stringify({
      node: process.version,
      tools: tools.map((found) => found.name),
      pageUrl: tool.source.page_url,
      result: { status: result.status, output: result.status === "completed" ? result.output : result.forModel },
    }),
  );
} finally {
  await client.browsers.delete(browser.id);
}
