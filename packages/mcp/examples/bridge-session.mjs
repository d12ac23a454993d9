// BROWSER_SERVICE_API_KEY=bsk_… node examples/bridge-session.mjs
import { once } from "node:events";
import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// A shop on 127.0.0.1: a search, and a payment provider that never answers.
const shop = `<!doctype html><title>Shop</title><script>
  document.modelContext.registerTool({
    name: "search", description: "Search the shop.", annotations: { readOnlyHint: true },
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    execute: async ({ q }) => ({ results: [q + " lamp"] }),
  });
  document.modelContext.registerTool({
    name: "checkout", description: "Pay for the cart.", annotations: { consequentialHint: true },
    execute: () => new Promise(() => {}),
  });
</script>`;
const pages = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/html" });
  response.end(shop);
}).listen(0, "127.0.0.1");
await once(pages, "listening");
const shopUrl = `http://127.0.0.1:${pages.address().port}/`;

// The bridge as an MCP client starts it: a command, with the BROWSER_SERVICE_* variables.
// It creates a browser on the shop, and deletes it when this client closes.
const transport = new StdioClientTransport({
  command: "browser-service-mcp",
  args: ["--start-url", shopUrl, "--timeout-sec", "2"],
  env: { ...process.env },
});
const client = new Client({ name: "example", version: "1.0.0" });
await client.connect(transport);

// The page registers its tools after it loads: list a bounded number of times.
let tools = [];
for (let attempt = 0; attempt < 100 && tools.length < 2; attempt++) {
  if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
  ({ tools } = await client.listTools());
}
for (const tool of tools.sort((a, b) => a.name.localeCompare(b.name))) console.log(`${tool.name}: ${JSON.stringify(tool.annotations)}`);
console.log(`\n${tools.find((tool) => tool.name === "search").description}`);

const found = await client.callTool({ name: "search", arguments: { q: "brass" } });
console.log(`\nsearch: ${JSON.stringify(found.structuredContent)}`);

// The payment never answers: an error result that says it may have gone through.
const paid = await client.callTool({ name: "checkout", arguments: {} });
console.log(`\ncheckout: isError ${paid.isError}\n${paid.content[0].text}`);

await client.close();
pages.close();
