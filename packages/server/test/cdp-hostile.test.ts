import { existsSync } from "node:fs";
import { join } from "node:path";
import { type BrowserServiceClient, createClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_COMMAND_DEPTH } from "../src/cdp/command-text.js";
import { type CdpClose, type CdpMessage, CdpRawClient } from "./support/cdp-raw-client.js";
import { spawnServer } from "./support/child-server.js";
import { insideSandbox } from "./support/sandbox-probe.js";
import { tempDataDir, useTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";

// What a DevTools client of a browser can send, from the attacker's side: messages built
// to crash the server, commands that would end the browser behind the server's back, and
// commands that would reach the server's own files.

const UPLOAD_PAGE = `<!doctype html><title>Upload</title><input type="file" id="f">
<div id="drop" style="width:200px;height:200px">drop</div>
<script>
  window.dropped = [];
  const drop = document.getElementById("drop");
  drop.addEventListener("dragover", (event) => event.preventDefault());
  drop.addEventListener("drop", (event) => { event.preventDefault(); window.dropped = [...event.dataTransfer.files].map((file) => file.name); });
</script>`;

const nested = (depth: number, open: string, close: string, inner = "1") => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

let pages: PageServer;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/plain", "<!doctype html><title>Plain</title><p>plain</p>");
  pages.serve("/upload", UPLOAD_PAGE);
});

afterAll(async () => {
  await pages.close();
});

/** One hostile message and what the server must answer to it. */
interface HostileCase {
  label: string;
  send(client: CdpRawClient): void;
  /** The answer (or the close) this client gets. */
  outcome(client: CdpRawClient): Promise<CdpMessage | CdpClose>;
  expected: unknown;
}

const refusedAs = (id: number, code: number, message: RegExp) => ({ id, error: { code, message: expect.stringMatching(message) } });
const TOO_DEEP = new RegExp(`nests deeper than ${MAX_COMMAND_DEPTH} levels`);

const HOSTILE_CASES: HostileCase[] = [
  {
    label: "20,000 nested arrays in params (40 KB)",
    send: (c) => c.sendRaw(`{"id":1,"method":"Browser.getVersion","params":{"x":${nested(20_000, "[", "]")}}}`),
    outcome: (c) => c.answer(1),
    expected: refusedAs(1, -32600, TOO_DEEP),
  },
  {
    label: "20,000 nested objects in params",
    send: (c) => c.sendRaw(`{"id":2,"method":"Browser.getVersion","params":${nested(20_000, '{"a":', "}")}}`),
    outcome: (c) => c.answer(2),
    expected: refusedAs(2, -32600, TOO_DEEP),
  },
  {
    label: "4,000,000 nested brackets (8 MB), before the id",
    send: (c) => c.sendRaw(`{"params":{"x":${nested(4_000_000, "[", "]")}},"id":3,"method":"Browser.getVersion"}`),
    outcome: (c) => c.answer(0),
    expected: refusedAs(0, -32600, TOO_DEEP),
  },
  {
    label: "15 MB of tiny keys in params (2 s of JSON.parse, were it parsed)",
    send: (c) =>
      c.sendRaw(
        `{"id":12,"method":"Runtime.evaluate","params":{${Array.from({ length: 1_300_000 }, (_, i) => `"${(i % 1000).toString(36)}${Math.floor(i / 1000).toString(36)}":0`).join(",")}}}`,
      ),
    outcome: (c) => c.answer(12),
    expected: refusedAs(12, -32600, /more than 1048576 characters of JSON structure/),
  },
  {
    label: "a sessionId of 20,000 brackets (a string)",
    send: (c) => c.sendRaw(JSON.stringify({ id: 4, method: "Runtime.evaluate", params: { expression: "1" }, sessionId: "[".repeat(20_000) })),
    outcome: (c) => c.answer(4),
    expected: refusedAs(4, -32001, /Session/),
  },
  {
    label: "id 1e400",
    send: (c) => c.sendRaw('{"id":1e400,"method":"Browser.getVersion"}'),
    outcome: (c) => c.answer(0),
    expected: refusedAs(0, -32600, /non-negative integer id/),
  },
  {
    label: "id 123456789012345678901234567890",
    send: (c) => c.sendRaw('{"id":123456789012345678901234567890,"method":"Browser.getVersion"}'),
    outcome: (c) => c.answer(0),
    expected: refusedAs(0, -32600, /non-negative integer id/),
  },
  {
    label: 'ids -1, 1.5 and "5"',
    send: (c) => {
      for (const id of ["-1", "1.5", '"5"']) c.sendRaw(`{"id":${id},"method":"Browser.getVersion"}`);
    },
    outcome: async (c) => {
      await c.answer(0);
      await c.answer(0);
      return c.answer(0);
    },
    expected: refusedAs(0, -32600, /non-negative integer id/),
  },
  {
    label: "invalid UTF-8 in a binary frame (read as U+FFFD)",
    send: (c) =>
      c.sendRaw(Buffer.concat([Buffer.from('{"id":5,"method":"Browser.getVersion","params":{"s":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}')]), {
        binary: true,
      }),
    outcome: (c) => c.answer(5),
    expected: { id: 5, result: expect.objectContaining({ product: expect.stringMatching(/Chrome/) }) },
  },
  {
    label: "invalid UTF-8 in a text frame, sent raw",
    send: (c) =>
      c.sendRaw(Buffer.concat([Buffer.from('{"id":6,"method":"Browser.getVersion","params":{"s":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]), {
        binary: false,
      }),
    outcome: (c) => c.closed,
    // RFC 6455 8.1: a text frame that is not UTF-8 fails the connection with 1007.
    expected: expect.objectContaining({ code: 1007 }),
  },
  {
    label: "messages that are not objects: an array, a string, a number, null",
    send: (c) => {
      for (const text of ["[1,2,3]", '"Browser.close"', "42", "null"]) c.sendRaw(text);
    },
    outcome: async (c) => {
      for (let i = 0; i < 3; i++) await c.answer(0);
      return c.answer(0);
    },
    expected: refusedAs(0, -32600, /must be a JSON object/),
  },
  {
    label: "not JSON",
    send: (c) => c.sendRaw('{"id":7,"method":"Browser.getVersion","params":{'),
    outcome: (c) => c.answer(7),
    expected: refusedAs(7, -32700, /not valid JSON/),
  },
  {
    label: "a NUL inside a string, escaped (relayed as an escape, never as a NUL)",
    send: (c) => c.sendRaw(`{"id":8,"method":"Browser.getVersion","params":{"x":"a\\u0000{\\"id\\":1,\\"method\\":\\"Browser.close\\"}"}}`),
    outcome: (c) => c.answer(8),
    expected: { id: 8, result: expect.objectContaining({ product: expect.stringMatching(/Chrome/) }) },
  },
  {
    label: "a NUL inside a string, raw (it would end the pipe's message and start one on the router's session)",
    send: (c) => c.sendRaw(`{"id":9,"method":"Browser.getVersion","params":{"x":"a\u0000{\\"id\\":1,\\"method\\":\\"Browser.close\\"}"}}`),
    outcome: (c) => c.answer(9),
    expected: refusedAs(9, -32700, /not valid JSON/),
  },
  {
    label: "a raw NUL between two commands",
    send: (c) => c.sendRaw('{"id":10,"method":"Browser.getVersion"}\u0000{"id":11,"method":"Browser.close"}'),
    outcome: (c) => c.answer(11),
    expected: refusedAs(11, -32700, /not valid JSON/),
  },
  {
    label: "a page value 20,000 levels deep asked for by value (the browser's answer)",
    send: () => undefined,
    outcome: async (c) => {
      const sessionId = await c.attachToPage();
      const answer = await c.send("Runtime.evaluate", { expression: "let v = []; for (let i = 0; i < 20000; i++) v = [v]; v", returnByValue: true }, sessionId);
      return { id: answer.id as number, answered: answer.result !== undefined || answer.error !== undefined };
    },
    expected: { id: expect.any(Number), answered: true },
  },
];

describe("no input takes the server down", () => {
  it("each hostile message from a client of project A is answered or closes only that client; the API, the browser's other client and project B's browser go on", async () => {
    // A server process of its own, as a user runs it: an exception nothing catches would end it.
    const dataDir = tempDataDir();
    const server = await spawnServer(dataDir, ["--cdp-max-clients", "16", "--cdp-max-pending", "4"]);
    const api: BrowserServiceClient = createClient({ baseUrl: server.url, apiKey: server.printedKey as string, projectId: null, maxRetries: 0 });
    const projectB = await api.projects.create({ name: "hostile-b" });
    const browserA = await api.browsers.create();
    const browserB = await api.browsers.create({}, { projectId: projectB.id });
    const neighbour = await CdpRawClient.open(browserA.cdp_ws_url);
    const other = await CdpRawClient.open(browserB.cdp_ws_url);
    try {
      for (const hostile of HOSTILE_CASES) {
        const attacker = await CdpRawClient.open(browserA.cdp_ws_url);
        hostile.send(attacker);
        expect(await hostile.outcome(attacker), hostile.label).toEqual(hostile.expected);
        expect(server.child.exitCode, hostile.label).toBeNull();
        expect(processExists(server.child.pid as number), hostile.label).toBe(true);
        expect((await api.browsers.get(browserA.id)).status, hostile.label).toBe("running");
        expect(await neighbour.evaluate("1 + 1"), hostile.label).toBe(2);
        expect(await other.evaluate("2 + 2"), hostile.label).toBe(4);
        // A client that got an answer is still connected and still works.
        if (attacker.open) expect((await attacker.send("Browser.getVersion")).result, hostile.label).toBeDefined();
        await attacker.close();
      }
      expect((await api.browsers.list()).map((row) => row.id)).toContain(browserA.id);
      // The command line's bounds reach the endpoint: a fifth command awaiting an answer is refused.
      const waiter = await CdpRawClient.open(browserA.cdp_ws_url);
      const session = await waiter.attachToPage();
      const ids = Array.from({ length: 5 }, () => waiter.post("Runtime.evaluate", { expression: "new Promise(() => {})", awaitPromise: true }, session));
      expect((await waiter.answer(ids[4] as number)).error).toMatchObject({ message: expect.stringContaining("already has 4 commands") });
      await waiter.close();
    } finally {
      await neighbour.close();
      await other.close();
      await server.stop();
    }
  });
});

describe("in-process server", () => {
  let launcher: TrackingLauncher;
  const t = useTestServer(() => {
    launcher = new TrackingLauncher();
    return { launcher };
  });

  afterEach(async () => {
    const client = t.client();
    for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
  });

  /** The browser's own target id, as its browser session reports it. */
  async function browserTargetId(client: CdpRawClient): Promise<string> {
    const { targetInfo } = (await client.send("Target.getTargetInfo")).result as { targetInfo: { targetId: string; type: string } };
    expect(targetInfo.type).toBe("browser");
    return targetInfo.targetId;
  }

  async function stillRunning(browser: Browser): Promise<void> {
    expect((await t.client().browsers.get(browser.id)).status).toBe("running");
    expect((await t.client().browsers.list()).map((row) => row.id)).toContain(browser.id);
    const check = await CdpRawClient.open(browser.cdp_ws_url);
    expect(await check.evaluate("1 + 1")).toBe(2);
    await check.close();
  }

  describe("one way out: only Browser.close or DELETE ends a browser", () => {
    it("refuses a non-flat attach (even to the browser target), an auto-attach without flatten: true, and Target.sendMessageToTarget; the browser stays running and listed", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      const browserTarget = await browserTargetId(client);
      for (const params of [{ targetId: browserTarget, flatten: false }, { targetId: browserTarget }]) {
        expect((await client.send("Target.attachToTarget", params)).error, JSON.stringify(params)).toMatchObject({
          code: -32000,
          message: expect.stringContaining("Target.attachToTarget needs flatten: true"),
        });
      }
      // The duplicate key a parser might read either way: what the server checked is what Chromium receives.
      client.sendRaw(`{"id":100,"method":"Target.attachToTarget","params":{"targetId":${JSON.stringify(browserTarget)},"flatten":true,"flatten":false}}`);
      expect((await client.answer(100)).error).toMatchObject({ message: expect.stringContaining("flatten: true") });
      client.sendRaw(`{"id":101,"method":"Target.attachToTarget","params":{"targetId":${JSON.stringify(browserTarget)},"flatten":false,"flatten":true}}`);
      const flat = (((await client.answer(101)).result ?? {}) as { sessionId?: string }).sessionId as string;
      expect((await client.send("Browser.getVersion", {}, flat)).result).toMatchObject({ product: expect.stringMatching(/Chrome/) });
      for (const params of [
        { autoAttach: true, waitForDebuggerOnStart: false },
        { autoAttach: true, waitForDebuggerOnStart: false, flatten: false },
      ]) {
        expect((await client.send("Target.setAutoAttach", params)).error).toMatchObject({
          message: expect.stringContaining("Target.setAutoAttach needs flatten: true on this service: pass flatten: true"),
        });
      }
      const closeMessage = JSON.stringify({ id: 1, method: "Browser.close" });
      expect((await client.send("Target.sendMessageToTarget", { targetId: browserTarget, message: closeMessage })).error).toMatchObject({
        message: expect.stringContaining("Target.sendMessageToTarget is refused"),
      });
      expect((await client.send("Target.sendMessageToTarget", { sessionId: flat, message: closeMessage })).error).toMatchObject({
        message: expect.stringContaining("Target.sendMessageToTarget is refused"),
      });
      const page = (await client.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string }[] };
      const pageId = page.targetInfos.find((info) => info.type === "page")?.targetId;
      expect((await client.send("Target.exposeDevToolsProtocol", { targetId: pageId })).error).toMatchObject({
        message: expect.stringContaining("Target.exposeDevToolsProtocol is refused"),
      });
      // Target.autoAttachRelated has no flatten parameter: Chromium attaches it flat, so it is let through.
      expect((await client.send("Target.autoAttachRelated", { targetId: pageId, waitForDebuggerOnStart: false })).result).toEqual({});
      const relatedAttach = (message: CdpMessage) =>
        message.method === "Target.attachedToTarget" && (message.params as { targetInfo: { targetId: string } }).targetInfo.targetId === pageId;
      await expect.poll(() => client.received.some(relatedAttach)).toBe(true);
      const related = client.received.find(relatedAttach) as { params: { sessionId: string } };
      expect((await client.send("Runtime.evaluate", { expression: "6 * 7", returnByValue: true }, related.params.sessionId)).result).toMatchObject({
        result: { value: 42 },
      });
      await client.close();
      await stillRunning(browser);
    });

    it("refuses a browser context with its own proxy, which would be a way around the egress proxy; a plain context still opens", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      for (const params of [{ proxyServer: "direct://" }, { proxyServer: "socks5://127.0.0.1:1080" }, { proxyBypassList: "*" }]) {
        expect((await client.send("Target.createBrowserContext", params)).error, JSON.stringify(params)).toMatchObject({
          code: -32000,
          message: expect.stringContaining("every browser's traffic leaves through the service's egress proxy"),
        });
      }
      expect((await client.send("Target.createBrowserContext", { disposeOnDetach: true })).result).toMatchObject({ browserContextId: expect.any(String) });
      await client.close();
      await stillRunning(browser);
    });

    it("refuses Browser.crash, Browser.crashGpuProcess, the extension commands that take server paths and Target.openDevTools", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      for (const [method, params] of [
        ["Browser.crash", {}],
        ["Browser.crashGpuProcess", {}],
        ["Extensions.loadUnpacked", { path: "/etc" }],
        ["Extensions.uninstall", { id: "a".repeat(32) }],
        ["Target.openDevTools", { targetId: "any" }],
        ["Browser.executeBrowserCommand", { commandId: "openTabSearch" }],
      ] as const) {
        expect((await client.send(method, params)).error, method).toMatchObject({ code: -32000, message: expect.stringContaining(`${method} is refused`) });
      }
      await client.close();
      await stillRunning(browser);
    });

    it("gives no session on Chromium's own UI pages, whose bindings would open file: and chrome: URLs", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      const targets = ((await client.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string; url: string }[] }).targetInfos;
      const ui = targets.filter((target) => target.type === "browser_ui" || target.url.startsWith("chrome:"));
      // Headless Chromium 156 keeps its omnibox popup as a browser_ui target.
      expect(ui.length).toBeGreaterThan(0);
      for (const target of ui) {
        const attached = await client.send("Target.attachToTarget", { targetId: target.targetId, flatten: true });
        const sessionId = (attached.result as { sessionId?: string } | undefined)?.sessionId;
        if (sessionId === undefined) continue;
        expect((await client.send("Runtime.evaluate", { expression: "typeof chrome.send" }, sessionId)).error, target.url).toMatchObject({ code: -32001 });
      }
      await client.close();
      await stillRunning(browser);
    });

    it("Browser.close sent on a page's session ends the browser as DELETE does: gone, not crashed", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      const sessionId = await client.attachToPage();
      expect((await client.send("Browser.close", {}, sessionId)).result).toEqual({});
      await expect
        .poll(async () =>
          t
            .client()
            .browsers.get(browser.id)
            .then(
              (row) => row.status,
              (error: { status: number }) => error.status,
            ),
        )
        .toBe(404);
      await client.closed;
    });
  });

  describe("no local files through DevTools", () => {
    const REFUSED_URLS = [
      "file:///etc/passwd",
      "FILE:///etc/passwd",
      " file:///etc/passwd",
      "fi\tle:///etc/passwd",
      "view-source:file:///etc/passwd",
      "filesystem:file:///etc/passwd",
      "chrome://version",
      "chrome://inducebrowsercrashforrealz",
      "about:inducebrowsercrashforrealz",
      "javascript:alert(1)",
      "/etc/passwd",
    ];

    it("refuses URLs outside http, https, data, blob, chrome-extension, about:blank and about:srcdoc in Page.navigate, Target.createTarget, Network.loadNetworkResource, the interception commands and PWA.install; an http page still loads", async () => {
      const browser = await t.client().browsers.create();
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      const sessionId = await client.attachToPage();
      const { frameTree } = (await client.send("Page.getFrameTree", {}, sessionId)).result as { frameTree: { frame: { id: string } } };
      const frameId = frameTree.frame.id;
      for (const url of REFUSED_URLS) {
        const commands: [string, object, string | undefined][] = [
          ["Page.navigate", { url }, sessionId],
          ["Target.createTarget", { url }, undefined],
          ["Network.loadNetworkResource", { url, frameId, options: { disableCache: true, includeCredentials: false } }, sessionId],
          ["Fetch.continueRequest", { requestId: "interception-job-1.0", url }, sessionId],
          ["Network.continueInterceptedRequest", { interceptionId: "interception-job-1.0", url }, sessionId],
          ["PWA.install", { manifestId: "https://example.test/", installUrlOrBundleUrl: url }, undefined],
        ];
        for (const [method, params, session] of commands) {
          expect((await client.send(method, params, session)).error, `${method} ${url}`).toMatchObject({
            code: -32000,
            message: expect.stringContaining("this service opens only http, https, data, blob, chrome-extension URLs and about:blank or about:srcdoc"),
          });
        }
      }
      expect((await client.send("Page.navigate", { url: pages.url("/plain") }, sessionId)).result).toMatchObject({ frameId });
      await expect
        .poll(
          async () =>
            ((await client.send("Runtime.evaluate", { expression: "document.title", returnByValue: true }, sessionId)).result as { result: { value: unknown } })
              .result.value,
        )
        .toBe("Plain");
      const loaded = await client.send(
        "Network.loadNetworkResource",
        { url: pages.url("/plain"), frameId, options: { disableCache: true, includeCredentials: false } },
        sessionId,
      );
      expect(loaded.result).toMatchObject({ resource: { success: true, httpStatusCode: 200 } });
      for (const url of [pages.url("/plain"), "about:blank", "data:text/html,<title>d</title>", ""]) {
        expect((await client.send("Target.createTarget", { url })).result, url).toMatchObject({ targetId: expect.any(String) });
      }
      const { targetInfos } = (await client.send("Target.getTargets")).result as { targetInfos: { type: string; url: string }[] };
      // The browser's own UI (type browser_ui) shows chrome: pages; no tab does.
      expect(targetInfos.filter((info) => info.type === "page" && !/^(https?|about|data):/.test(info.url))).toEqual([]);
      await client.close();
    });

    it("hands a page only files inside the browser's own profile: DOM.setFileInputFiles and Input.dispatchDragEvent refuse /etc/passwd and every way out of the profile", async () => {
      const browser = await t.client().browsers.create({ start_url: pages.url("/upload") });
      const { userDataDir } = launcher.latest();
      const profile = userDataDir as string;
      const inside = join(profile, "downloads", "upload.txt");
      const client = await CdpRawClient.open(browser.cdp_ws_url);
      const sessionId = await client.attachToPage();
      await expect
        .poll(
          async () =>
            (
              (await client.send("Runtime.evaluate", { expression: "document.getElementById('f') !== null", returnByValue: true }, sessionId)).result as {
                result: { value: unknown };
              }
            ).result.value,
        )
        .toBe(true);
      // The profile is a tmpfs inside the browser's sandbox: a file gets there as a download.
      await client.send(
        "Runtime.evaluate",
        {
          expression: "Object.assign(document.createElement('a'), { href: 'data:text/plain,inside%20the%20profile', download: 'upload.txt' }).click()",
          userGesture: true,
        },
        sessionId,
      );
      await expect.poll(() => existsSync(insideSandbox(launcher.latest(), inside)), { timeout: 10_000 }).toBe(true);
      const { root } = (await client.send("DOM.getDocument", {}, sessionId)).result as { root: { nodeId: number } };
      const { nodeId } = (await client.send("DOM.querySelector", { nodeId: root.nodeId, selector: "#f" }, sessionId)).result as { nodeId: number };
      const outside = ["/etc/passwd", "upload.txt", `${profile}/../../etc/passwd`, `${profile}x/upload.txt`, profile, `${inside}\u0000.png`];
      for (const file of outside) {
        expect((await client.send("DOM.setFileInputFiles", { nodeId, files: [file] }, sessionId)).error, file).toMatchObject({
          code: -32000,
          message: expect.stringContaining("only files inside the browser's own profile directory"),
        });
        const drag = { type: "drop", x: 100, y: 100, data: { items: [], files: [inside, file], dragOperationsMask: 1 } };
        expect((await client.send("Input.dispatchDragEvent", drag, sessionId)).error, file).toMatchObject({
          message: expect.stringContaining("only files inside the browser's own profile directory"),
        });
      }
      const files = async () =>
        (
          (
            await client.send(
              "Runtime.evaluate",
              { expression: "[...document.getElementById('f').files].map((file) => file.name)", returnByValue: true },
              sessionId,
            )
          ).result as { result: { value: unknown } }
        ).result.value;
      expect(await files()).toEqual([]);
      // A file inside the profile (where the browser's downloads are) is handed over, its path resolved first.
      expect((await client.send("DOM.setFileInputFiles", { nodeId, files: [`${profile}/./downloads/../downloads/upload.txt`] }, sessionId)).result).toEqual({});
      expect(await files()).toEqual(["upload.txt"]);
      const text = await client.send(
        "Runtime.evaluate",
        { expression: "document.getElementById('f').files[0].text()", awaitPromise: true, returnByValue: true },
        sessionId,
      );
      expect(text.result).toMatchObject({ result: { value: "inside the profile" } });
      await client.close();
    });
  });
});
