import { PageServer } from "@browser-service/test-pages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";
import { waitForTools } from "./support/webmcp-driver.js";

// A page's Web Workers run in a browser no DevTools client is attached to: the service's
// own session, which holds new targets until it has followed them, lets each worker go.
// Each worker answers the page, which then registers a tool named after it.

const PAGE = `<!doctype html><title>Workers</title><script>
  const ran = (name) => document.modelContext.registerTool({ name, description: "A worker ran.", execute: async () => ({ name }) });
  const dedicated = new Worker(URL.createObjectURL(new Blob(["postMessage('dedicated')"], { type: "text/javascript" })));
  dedicated.onmessage = (event) => ran(event.data);
  const nested = new Worker(URL.createObjectURL(new Blob([
    "const inner = new Worker(URL.createObjectURL(new Blob([\\"postMessage('nested')\\"], { type: 'text/javascript' }))); inner.onmessage = (e) => postMessage(e.data);",
  ], { type: "text/javascript" })));
  nested.onmessage = (event) => ran(event.data);
  const shared = new SharedWorker("/shared.js");
  shared.port.onmessage = (event) => ran(event.data);
  shared.port.start();
</script>`;

let pages: PageServer;
beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/workers", PAGE);
  pages.serve("/shared.js", `onconnect = (event) => event.ports[0].postMessage("shared");`);
});
afterAll(async () => {
  await pages.close();
});

describe("a page's Web Workers", () => {
  const t = useTestServer();

  it("run without a DevTools client: dedicated, nested and shared workers answer their page", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/workers") });
    const tools = await waitForTools(t.client(), browser.id, (list) => list.length === 3);
    expect(tools.map((tool) => tool.name).sort()).toEqual(["dedicated", "nested", "shared"]);
    await t.client().browsers.delete(browser.id);
  });
});
