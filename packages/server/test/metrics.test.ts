import { once } from "node:events";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { PageServer } from "@browser-service/test-pages";
import { describe, expect, it } from "vitest";
import { METRICS_MAX_CONNECTIONS, ServerMetrics } from "../src/app/server-metrics.js";
import { parseCommand } from "../src/index.js";
import { CdpRawClient } from "./support/cdp-raw-client.js";
import { spawnServer } from "./support/child-server.js";
import { freePort } from "./support/free-port.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";
import { waitForTools } from "./support/webmcp-driver.js";

// The numbers an operator scrapes, on a listener of their own: they move over one
// browser's life, and say nothing of any tenant.

/** The samples of a Prometheus text exposition, by name and labels (`name{a="b"}`). */
async function scrape(url: string): Promise<Map<string, number>> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe("the metrics", () => {
  it("count a browser's create, life and end, creates refused, and requests by route, naming no tenant", async () => {
    const server = await startTestServer({ metrics: { port: 0 }, planLimit: 1 });
    try {
      const url = String(server.server.metricsUrl);
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const before = await scrape(url);
      expect(before.get('browser_service_browsers{state="running"}')).toBe(0);
      expect(before.get("process_cpu_user_seconds_total")).toBeGreaterThan(0);

      const client = server.client();
      const project = await client.projects.create({ name: "tenant-secret-project" });
      const browser = await client.browsers.create({ name: "tenant-secret-browser" }, { projectId: project.id });
      await expect(client.browsers.create({}, { projectId: project.id })).rejects.toMatchObject({ status: 429 });
      const during = await scrape(url);
      expect(during.get('browser_service_browsers{state="running"}')).toBe(1);
      expect(during.get('browser_service_browser_creates_total{outcome="created"}')).toBe(1);
      expect(during.get('browser_service_browser_creates_total{outcome="refused"}')).toBe(1);
      expect(during.get('browser_service_browser_create_seconds_count{start="cold"}')).toBe(1);
      expect(during.get('browser_service_browser_create_seconds_sum{start="cold"}')).toBeGreaterThan(0);
      expect(during.get('browser_service_http_requests_total{method="POST",route="/browsers",status="201"}')).toBe(1);
      expect(during.get('browser_service_http_requests_total{method="POST",route="/browsers",status="429"}')).toBe(1);

      await client.browsers.delete(browser.id, { projectId: project.id });
      const after = await scrape(url);
      expect(after.get('browser_service_browsers{state="running"}')).toBe(0);
      expect(after.get('browser_service_http_requests_total{method="DELETE",route="/browsers/:id_or_name",status="204"}')).toBe(1);
      // A method no API uses is `other`: a client cannot make a series per method Node parses.
      for (const method of ["PROPFIND", "MKCOL", "UNLOCK"]) await fetch(`${server.url}/x`, { method });
      const methods = await scrape(url);
      expect(methods.get('browser_service_http_requests_total{method="other",route="unrouted",status="404"}')).toBe(3);
      expect([...methods.keys()].filter((name) => /PROPFIND|MKCOL|UNLOCK/.test(name))).toEqual([]);
      // Routes are templates: no id, name or project of a tenant is ever a label.
      const text = await (await fetch(url)).text();
      for (const secret of ["tenant-secret", browser.id, project.id]) expect(text).not.toContain(secret);

      // Only the metrics are served there, and they are not on the API's address.
      expect((await fetch(url.replace("/metrics", "/browsers"))).status).toBe(404);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("count DevTools clients and their bytes each way, and the destinations a browser's egress was refused", async () => {
    const server = await startTestServer({ metrics: { port: 0 }, launcher: new TrackingLauncher({ allowPrivateNetwork: false }) });
    try {
      const url = String(server.server.metricsUrl);
      const client = server.client();
      const browser = await client.browsers.create();
      const before = await scrape(url);
      expect(before.get("browser_service_devtools_clients")).toBe(0);
      expect(before.get("browser_service_egress_refusals_total")).toBe(0);
      const bytesIn = before.get('browser_service_devtools_bytes_total{direction="in"}') ?? 0;
      const bytesOut = before.get('browser_service_devtools_bytes_total{direction="out"}') ?? 0;

      const devtools = await CdpRawClient.open(browser.cdp_ws_url);
      const second = await CdpRawClient.open(browser.cdp_ws_url);
      const command = JSON.stringify({ id: 1, method: "Browser.getVersion", params: {} });
      const answer = await devtools.send("Browser.getVersion");
      const during = await scrape(url);
      expect(during.get("browser_service_devtools_clients")).toBe(2);
      expect(during.get('browser_service_devtools_bytes_total{direction="in"}')).toBe(bytesIn + Buffer.byteLength(command));
      expect(during.get('browser_service_devtools_bytes_total{direction="out"}')).toBeGreaterThanOrEqual(bytesOut + Buffer.byteLength(JSON.stringify(answer)));

      // The page asks for a private address, which the egress policy refuses: counted, never named.
      const target = (await devtools.send("Target.getTargets")).result?.targetInfos as { targetId: string; type: string }[];
      const page = target.find((each) => each.type === "page") as { targetId: string };
      const session = (await devtools.send("Target.attachToTarget", { targetId: page.targetId, flatten: true })).result?.sessionId as string;
      const navigated = await devtools.send("Page.navigate", { url: "http://10.0.0.1/metrics-refused" }, session);
      expect(navigated.result).toMatchObject({ errorText: "net::ERR_SOCKS_CONNECTION_FAILED" });
      await expect.poll(async () => (await scrape(url)).get("browser_service_egress_refusals_total")).toBeGreaterThanOrEqual(1);
      expect(await (await fetch(url)).text()).not.toContain("10.0.0.1");

      devtools.ws.close();
      second.ws.close();
      await Promise.all([devtools.closed, second.closed]);
      await expect.poll(async () => (await scrape(url)).get("browser_service_devtools_clients")).toBe(0);
    } finally {
      await server.close();
    }
  });

  it("count WebMCP invocations by outcome, where they run", async () => {
    const pages = await PageServer.start();
    pages.serve(
      "/tools",
      `<!doctype html><title>Tools</title><script>
        document.modelContext.registerTool({ name: "add", description: "Adds.", execute: async ({ a, b }) => ({ sum: a + b }) });
        document.modelContext.registerTool({ name: "fail", description: "Fails.", execute: async () => { throw new Error("no"); } });
      </script>`,
    );
    const server = await startTestServer({ metrics: { port: 0 } });
    try {
      const url = String(server.server.metricsUrl);
      const client = server.client();
      const browser = await client.browsers.create({ start_url: pages.url("/tools") });
      const tools = await waitForTools(client, browser.id, (list) => list.length === 2);
      const ref = (name: string) => tools.find((tool) => tool.name === name)?.tool_ref as string;
      expect((await client.webmcp.invoke(browser.id, { tool_ref: ref("add"), input: { a: 1, b: 2 } })).status).toBe("completed");
      expect((await client.webmcp.invoke(browser.id, { tool_ref: ref("fail"), input: {} })).status).toBe("error");
      await expect(client.webmcp.invoke(browser.id, { tool_ref: "wmt_AAAAAAAAAAAAAAAAAAAAAA", input: {} })).rejects.toMatchObject({ status: 404 });
      const counted = await scrape(url);
      expect(counted.get('browser_service_webmcp_invocations_total{outcome="completed"}')).toBe(1);
      expect(counted.get('browser_service_webmcp_invocations_total{outcome="error"}')).toBe(1);
      expect(counted.get('browser_service_webmcp_invocations_total{outcome="refused"}')).toBe(1);
      await client.browsers.delete(browser.id);
    } finally {
      await server.close();
      await pages.close();
    }
  });

  it("hold only so many connections, and cut a client that never finishes its headers: the API goes on answering", async () => {
    const server = await startTestServer({ metrics: { port: 0 } });
    const url = new URL(String(server.server.metricsUrl));
    const sockets: Socket[] = [];
    try {
      const closedEarly: Promise<boolean>[] = [];
      for (let i = 0; i < METRICS_MAX_CONNECTIONS + 40; i++) {
        const socket = connect(Number(url.port), url.hostname);
        socket.on("error", () => undefined);
        // Read, so that the server's end of a connection is seen here as its close.
        socket.resume();
        sockets.push(socket);
        closedEarly.push(once(socket, "close").then(() => true));
        await once(socket, "connect");
        // Headers begun, never finished: a slow client's way to keep a connection.
        socket.write("GET /metrics HTTP/1.1\r\nHost: x\r\n");
      }
      // Past the cap, connections are closed as they arrive.
      const settled = await Promise.all(
        closedEarly.map((closed) => Promise.race([closed, new Promise<false>((resolve) => setTimeout(() => resolve(false), 500))])),
      );
      expect(settled.filter(Boolean).length).toBeGreaterThanOrEqual(40);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      // The rest are cut once their headers are late; then a scraper is served again.
      await Promise.all(closedEarly);
      expect((await scrape(url.href)).get('browser_service_browsers{state="running"}')).toBe(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });

  it("are each named in the README and in the Deploy guide, and nothing else is", async () => {
    const metrics = new ServerMetrics({
      browsers: () => ({ running: 0, starting: 0 }),
      warmPool: () => ({ ready: 0, launching: 0 }),
      liveViewers: () => 0,
      devtoolsClients: () => 0,
      egressRefusals: () => 0,
      draining: () => false,
    });
    const served = (await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name).filter((name) => name.startsWith("browser_service_"));
    for (const document of ["../README.md", "../../../tools/docs-site/guides/08-deploy.md"]) {
      const text = readFileSync(new URL(document, import.meta.url), "utf8");
      const named = [...text.matchAll(/^\| `(browser_service_\w+)/gm)].map((match) => match[1]);
      expect(named.sort(), document).toEqual([...served].sort());
    }
  });

  it("are off unless asked for, and --metrics-port serves them from the command line", async () => {
    const quiet = await startTestServer();
    try {
      expect(quiet.server.metricsUrl).toBeUndefined();
    } finally {
      await quiet.close();
    }
    expect(parseCommand([], {})).toMatchObject({ config: { metricsPort: 0, metricsHost: "127.0.0.1" } });
    const port = await freePort();
    const child = await spawnServer(tempDataDir(), ["--metrics-port", String(port)]);
    try {
      let line = /Metrics at (http:\/\/\S+)/.exec(child.stdout())?.[1];
      for (let tries = 0; line === undefined && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        line = /Metrics at (http:\/\/\S+)/.exec(child.stdout())?.[1];
      }
      expect(line).toBe(`http://127.0.0.1:${port}/metrics`);
      expect((await scrape(String(line))).get('browser_service_browsers{state="running"}')).toBe(0);
    } finally {
      await child.stop();
    }
  });
});
