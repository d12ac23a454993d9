// Pages the helpers' and the MCP bridge's tests both serve: the same tool name in several
// tabs and in a cross-origin frame, a declarative form, a page without tools.

/** Page script that reports a tool's run to the page server before it does anything else. */
export const reportRun = (key) => `await fetch("/runs/${key}", { method: "POST" });`;

/** Page script that registers `count` tools, `tool_0`…, each answering `{ n, where }`: the benches' pages. */
export const numberedTools = (where, count) => `<script>
  for (let i = 0; i < ${count}; i++) {
    document.modelContext.registerTool({
      name: "tool_" + i, description: "Tool " + i + " of the ${where} document.",
      inputSchema: { type: "object", properties: { n: { type: "number" } } },
      execute: async ({ n }) => ({ n, where: "${where}" }),
    });
  }
</script>`;

const searchTool = (where) => `<script>
  document.modelContext.registerTool({
    name: "search", description: "Search the ${where}.",
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    execute: async ({ q }) => { ${reportRun(`${where}.search`)} return { where: "${where}", origin: location.origin, results: [q] }; },
  });
</script>`;

/** Serves the shared pages: `/blog`, `/widget-host` (framing `/widget` from localhost), `/forms`, `/forms/done`, `/blank`. */
export function serveSharedPages(pages) {
  pages.serve("/blog", `<!doctype html><title>Blog</title>${searchTool("blog")}`);
  // A page on 127.0.0.1 whose cross-origin (localhost) frame registers a tool of the same name.
  pages.serve(
    "/widget-host",
    (port) => `<!doctype html><title>Widget host</title>${searchTool("host")}
<iframe src="http://localhost:${port}/widget" allow="tools"></iframe>`,
  );
  pages.serve("/widget", `<!doctype html><title>Widget</title>${searchTool("widget")}`);
  // A declarative form without toolautosubmit: an invocation fills it and leaves it for the user.
  pages.serve(
    "/forms",
    `<!doctype html><title>Order form</title>
<form toolname="order" tooldescription="Order an item." action="/forms/done">
  <input name="item"><button>Order</button>
</form>`,
  );
  pages.serve("/forms/done", "<!doctype html><title>Done</title>");
  pages.serve("/blank", "<!doctype html><title>Nothing here</title><p>no tools</p>");
}
