import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { lookup as dnsLookup } from "node:dns/promises";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ChromiumLauncher, type LaunchedBrowser } from "../src/index.js";
import { browserProcess, commandLineOf, descendants, insideSandbox, SandboxProbe, statusField } from "./support/sandbox-probe.js";
import { startTestServer, useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// What a browser's owner (full DevTools) or a page tries, from inside a sandboxed browser,
// to reach the host: its files, other browsers, the server's data, its network. Each test
// goes past the DevTools endpoint (the server's own root session), so it shows the wall
// behind the endpoint's own refusals. Issue 21.

const isRoot = process.getuid?.() === 0;
const CANARY = `canary-${process.pid}-${Date.now()}`;
const SMALL_DOWNLOAD = "a small download\n";
const CAP_BYTES = 1024 * 1024;

/** A host page server on 127.0.0.1: pages, an attachment, a big attachment, and who asked. */
class HostPages {
  readonly hits: string[] = [];
  private constructor(readonly server: Server) {}

  static async start(): Promise<HostPages> {
    let pages!: HostPages;
    const server = createServer((request, response) => {
      pages.hits.push(request.url ?? "");
      if (request.url === "/small.txt") {
        response.writeHead(200, { "content-type": "text/plain", "content-disposition": 'attachment; filename="small.txt"' });
        response.end(SMALL_DOWNLOAD);
      } else if (request.url === "/big.bin") {
        response.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-disposition": 'attachment; filename="big.bin"',
          "content-length": String(4 * CAP_BYTES),
        });
        response.end(Buffer.alloc(4 * CAP_BYTES, 7));
      } else if (request.url === "/upload") {
        response.writeHead(200, { "content-type": "text/html" });
        response.end('<!doctype html><title>Upload</title><input type="file" id="f">');
      } else {
        response.writeHead(200, { "content-type": "text/html", "access-control-allow-origin": "*" });
        response.end(`<!doctype html><title>Host page</title><p>${CANARY}</p>`);
      }
    });
    pages = new HostPages(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return pages;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string, host = "127.0.0.1"): string {
    return `http://${host}:${this.port}${path}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let pages: HostPages;
let secrets: string;
let rootOnlyFile: string;
const refused: { destination: string; reason: string }[] = [];
// A name only the egress proxy's resolver knows, standing for a public name that an
// attacker points at 127.0.0.1 (or rebinds to it between two lookups).
const lookup = async (hostname: string) => (hostname === "rebound.test" ? [{ address: "127.0.0.1", family: 4 }] : dnsLookup(hostname, { all: true }));

beforeAll(async () => {
  pages = await HostPages.start();
  secrets = mkdtempSync(join(tmpdir(), "browser-service-sandbox-test-"));
  rootOnlyFile = join(secrets, "root-only.txt");
  writeFileSync(rootOnlyFile, CANARY, { mode: 0o600 });
  process.env.BROWSER_SERVICE_SANDBOX_TEST_CANARY = CANARY;
});

afterAll(async () => {
  delete process.env.BROWSER_SERVICE_SANDBOX_TEST_CANARY;
  rmSync(secrets, { recursive: true, force: true });
  await pages.close();
});

/** Two servers: one with the default egress policy, one with --allow-private-network; each with a warm pool of one. */
for (const pool of ["warm", "cold"] as const) {
  describe(`a ${pool} browser's sandbox`, () => {
    let launcher: TrackingLauncher;
    let otherProjectKey: string;

    const t = useTestServer(() => {
      launcher = new TrackingLauncher({
        allowPrivateNetwork: false,
        lookup,
        downloadBytes: CAP_BYTES,
        onEgressRefused: (destination, reason) => refused.push({ destination, reason }),
      });
      return { launcher, warmBrowsers: pool === "warm" ? 1 : 0 };
    });

    beforeAll(async () => {
      const other = await t.client().projects.create({ name: `other-${pool}` });
      otherProjectKey = (await t.server.issueApiKey(other.id)).secret;
    });

    /** Creates a browser (from the pool when there is one) and returns its record and process. */
    async function create(apiKey?: string): Promise<{ id: string; sandboxed: boolean; launched: LaunchedBrowser; probe: SandboxProbe }> {
      if (pool === "warm") await expect.poll(() => t.server.warmPoolStats().ready, { timeout: 30_000 }).toBe(1);
      const before = launcher.launched.length;
      const taken = t.server.warmPoolStats().taken;
      const browser = await t.client(apiKey === undefined ? {} : { apiKey }).browsers.create();
      // A warm create hands over a browser launched earlier; a cold one launches now.
      const launched =
        pool === "warm"
          ? launcher.launched.find((each) => each.pid !== undefined && !used.has(each) && launcher.launched.indexOf(each) < before)
          : launcher.launched.at(-1);
      if (pool === "warm") expect(t.server.warmPoolStats().taken).toBe(taken + 1);
      if (!launched) throw new Error("No launched browser for the create.");
      used.add(launched);
      return { id: browser.id, sandboxed: browser.sandboxed, launched, probe: new SandboxProbe(launched) };
    }
    const used = new Set<LaunchedBrowser>();

    it("says so in its record, runs as an account of its own (never root, never the server's) and keeps Chromium's own sandbox", async () => {
      const a = await create();
      const b = await create(otherProjectKey);
      expect(a.sandboxed).toBe(true);
      // A page to have a renderer process.
      for (const each of [a, b]) await each.probe.open("data:text/html,<p>page</p>");
      const accounts = [a, b].map(({ launched }) => {
        const processes = [launched.pid as number, ...descendants(launched.pid as number)];
        const uids = new Set(
          processes
            .map((pid) => statusField(pid, "Uid")?.split(/\s+/))
            .filter((ids) => ids !== undefined)
            .flat(),
        );
        expect(uids.size).toBe(1);
        for (const pid of processes) {
          expect(commandLineOf(pid)).not.toContain("--no-sandbox");
          if (isRoot) expect(statusField(pid, "Groups") ?? "").toBe("");
        }
        // Chromium's renderers run under its own seccomp-bpf sandbox inside ours.
        const renderers = processes.filter((pid) => commandLineOf(pid).includes("--type=renderer"));
        expect(renderers.length).toBeGreaterThan(0);
        for (const pid of renderers) expect(statusField(pid, "Seccomp")).toBe("2");
        return Number([...uids][0]);
      });
      if (isRoot) {
        // Root gives each browser a host account of its own: other browsers and the server are strangers to it.
        expect(accounts[0]).not.toBe(0);
        expect(accounts[1]).not.toBe(0);
        expect(accounts[0]).not.toBe(accounts[1]);
      } else {
        // Without root there is one host account to give; the browser is then walled in by its namespaces alone.
        expect(accounts).toEqual([process.getuid?.(), process.getuid?.()]);
      }
      // The server's environment (its keys, its database URL) does not reach the browser.
      expect(readFileSync(`/proc/${browserProcess(a.launched)}/environ`, "latin1")).not.toContain(CANARY);
      await t.client().browsers.delete(a.id);
      await t.client({ apiKey: otherProjectKey }).browsers.delete(b.id);
    });

    it("can write only to tmpfs mounts with a size (profile, downloads, /tmp, /dev/shm), never to the host's disk nor to memory without a cap", async () => {
      const a = await create();
      const main = browserProcess(a.launched);
      const profile = a.launched.userDataDir as string;
      const caps: Record<string, number> = {
        "/dev/shm": 256 * 1024 * 1024,
        "/tmp": 16 * 1024 * 1024,
        [profile]: 512 * 1024 * 1024,
        [`${profile}/downloads`]: CAP_BYTES,
      };
      const writable = readFileSync(`/proc/${main}/mountinfo`, "utf8")
        .trim()
        .split("\n")
        .map((line) => {
          const [before, after] = line.split(" - ");
          const fields = (before as string).split(" ");
          const [type, , superOptions] = (after as string).split(" ");
          return {
            point: fields[4] as string,
            options: (fields[5] as string).split(","),
            type: type as string,
            superOptions: (superOptions as string).split(","),
          };
        })
        .filter((mount) => mount.options.includes("rw"));
      for (const mount of writable) {
        if (mount.type === "proc" || mount.type === "devpts") continue;
        // Device nodes bound into /dev (null, zero, random...): writes go to the device, not to storage.
        if (mount.type === "devtmpfs") {
          expect(mount.point).toMatch(/^\/dev\/(null|zero|full|random|urandom|tty)$/);
          continue;
        }
        expect({ point: mount.point, type: mount.type }).toEqual({ point: mount.point, type: "tmpfs" });
        const size = Number(/^size=(\d+)k$/.exec(mount.superOptions.find((option) => option.startsWith("size=")) ?? "")?.[1]) * 1024;
        expect({ point: mount.point, size }).toEqual({ point: mount.point, size: caps[mount.point] });
      }
      expect(writable.map((mount) => mount.point)).toEqual(expect.arrayContaining(Object.keys(caps)));
      // Temporary files (a client's trace streams among them) go to the profile, under its cap.
      expect(readFileSync(`/proc/${main}/environ`, "latin1").split("\0")).toContain(`TMPDIR=${profile}/.tmp`);
      await t.client().browsers.delete(a.id);
    });

    it("sees none of the host's files: /etc/passwd, a root-only file, /root, /home, the data directory, the server's code, other profiles", async () => {
      const a = await create();
      const b = await create(otherProjectKey);
      const tab = await a.probe.open("about:blank");
      for (const path of [
        "/etc/passwd",
        rootOnlyFile,
        "/root/",
        "/home/",
        `${t.dataDir}/`,
        join(t.dataDir, "browser-service.sqlite"),
        `${process.cwd()}/package.json`,
        `${b.launched.userDataDir}/`,
        `${secrets}/`,
      ]) {
        const error = await a.probe.navigate(tab, `file://${path}`);
        const text = await a.probe.text(tab);
        expect({ path, shown: text.includes(CANARY) || text.includes("root:x:0:0") }).toEqual({ path, shown: false });
        expect({ path, error }).toEqual({ path, error: "net::ERR_FILE_NOT_FOUND" });
      }
      // Its /tmp is its own: it holds its profile and nothing of the host's (other profiles, test data).
      expect(await a.probe.navigate(tab, "file:///tmp/")).toBeUndefined();
      const listing = await a.probe.text(tab);
      expect(listing).toContain(basename(a.launched.userDataDir as string));
      expect(listing).not.toContain(basename(b.launched.userDataDir as string));
      expect(listing).not.toContain(basename(t.dataDir));
      expect(listing).not.toContain(basename(secrets));
      await t.client().browsers.delete(a.id);
      await t.client({ apiKey: otherProjectKey }).browsers.delete(b.id);
    });

    it("cannot hand a host file to a page through a file input (DOM.setFileInputFiles)", async () => {
      const a = await create();
      const open = new SandboxProbe(a.launched);
      // The page itself must load: it comes from 127.0.0.1, which this server refuses, so use data:.
      const tab = await open.open("data:text/html,<input type=file id=f>");
      const { root } = await a.launched.cdp.call("DOM.getDocument", {}, tab);
      const { nodeId } = await a.launched.cdp.call("DOM.querySelector", { nodeId: (root as { nodeId: number }).nodeId, selector: "#f" }, tab);
      await a.launched.cdp.call("DOM.setFileInputFiles", { nodeId, files: [rootOnlyFile] }, tab);
      const read = await open.evaluate<string>(
        tab,
        "document.getElementById('f').files[0].text().then((text) => 'read:' + text, (error) => 'failed:' + error.name)",
      );
      expect(read).not.toContain(CANARY);
      expect(read).toMatch(/^failed:/);
      await t.client().browsers.delete(a.id);
    });

    it("reaches no loopback, private or link-local address, by IP or by a name resolving to one; WebRTC sends no UDP", async () => {
      const a = await create();
      const tab = await a.probe.open("about:blank");
      const stun = await UdpListener.start();
      try {
        refused.length = 0;
        const fetchFrom = (url: string) =>
          a.probe.evaluate<string>(tab, `fetch(${JSON.stringify(url)}, { mode: "no-cors" }).then(() => "reached", (error) => "failed: " + error.message)`);
        const urls = [
          pages.url("/"),
          pages.url("/", "localhost"),
          `http://rebound.test:${pages.port}/`,
          "http://169.254.169.254/latest/meta-data/",
          "http://10.0.0.1/",
          "http://[::1]:8080/",
        ];
        for (const url of urls) expect({ url, outcome: await fetchFrom(url) }).toEqual({ url, outcome: "failed: Failed to fetch" });
        // Navigations too; the egress proxy is what says no (a SOCKS refusal), not a page-side rule of Chromium's.
        const other = await a.probe.open("about:blank");
        for (const url of urls) expect({ url, error: await a.probe.navigate(other, url) }).toEqual({ url, error: "net::ERR_SOCKS_CONNECTION_FAILED" });
        expect(pages.hits.filter((hit) => hit === "/")).toEqual([]);
        const reasons = refused.map((entry) => `${entry.destination} ${entry.reason}`).join("\n");
        expect(reasons).toContain(`rebound.test:${pages.port} 127.0.0.1`);
        expect(reasons).toContain(`localhost:${pages.port}`);
        expect(reasons).toContain("169.254.169.254:80");
        expect(reasons).toContain("10.0.0.1:80");
        await gatherIce(a.probe, tab, stun.port);
        expect(stun.packets).toBe(0);
      } finally {
        await stun.close();
      }
      await t.client().browsers.delete(a.id);
    });

    it("downloads land in its own capped folder inside the sandbox, never in the account's home, and go with it", async () => {
      const homeDownloads = join(homedir(), "Downloads");
      const before = existsSync(homeDownloads) ? readdirSync(homeDownloads) : [];
      const a = await create();
      const channel = await a.launched.cdp.openChannel();
      const events: Record<string, unknown>[] = [];
      channel.onMessage((message) =>
        events.push(typeof message === "string" ? (JSON.parse(message) as Record<string, unknown>) : (message as Record<string, unknown>)),
      );
      // "default" would be the browser's default folder, outside the cap: it is pointed at the capped one too.
      channel.send({ id: 1, method: "Browser.setDownloadBehavior", params: { behavior: "default", eventsEnabled: true } });
      const tab = await a.probe.open("about:blank");
      const downloads = join(a.launched.userDataDir as string, "downloads");
      // The page comes from a data: URL; its links go to the host page server, which this server's browsers may not reach,
      // so the attachments are served by a second browser-side fetch below: here, through a page of the allowed kind.
      await a.probe.evaluate(
        tab,
        `document.body.innerHTML = '<a id=big href="data:application/octet-stream;base64,${Buffer.alloc(4 * CAP_BYTES, 7).toString("base64")}" download="big.bin">big</a><a id=small href="data:text/plain,${encodeURIComponent(SMALL_DOWNLOAD)}" download="small.txt">small</a>'`,
      );
      await a.probe.evaluate(tab, "document.getElementById('big').click(), document.getElementById('small').click(), true");
      const states = () => events.filter((event) => event.method === "Browser.downloadProgress").map((event) => (event.params as { state: string }).state);
      await expect.poll(() => states().filter((state) => state !== "inProgress").length, { timeout: 30_000 }).toBe(2);
      expect(
        states()
          .filter((state) => state !== "inProgress")
          .sort(),
      ).toEqual(["canceled", "completed"]);
      if (isRoot) {
        expect(readFileSync(join(insideSandbox(a.launched, downloads), "small.txt"), "utf8")).toBe(SMALL_DOWNLOAD);
        const big = join(insideSandbox(a.launched, downloads), "big.bin");
        expect(existsSync(big) ? statSync(big).size : 0).toBeLessThan(4 * CAP_BYTES);
      }
      expect(existsSync("/root/small.txt")).toBe(false);
      expect(existsSync(homeDownloads) ? readdirSync(homeDownloads) : []).toEqual(before);
      channel.close();
      await t.client().browsers.delete(a.id);
      expect(existsSync(a.launched.userDataDir as string)).toBe(false);
    });

    it("a crashing tab leaves no crash report outside the browser (Chromium's crash database is in its profile), and the browser goes on", async () => {
      const crashReports = join(homedir(), ".config", "chromium", "Crash Reports");
      const before = existsSync(crashReports) ? readdirSync(crashReports, { recursive: true }) : [];
      const a = await create();
      const tab = await a.probe.open("about:blank");
      // The crashed tab never answers.
      void a.launched.cdp.call("Page.crash", {}, tab).catch(() => undefined);
      // A crash handler would write its dump within moments of the crash.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const other = await a.probe.open("about:blank");
      expect(await a.probe.evaluate(other, "1 + 1")).toBe(2);
      expect(existsSync(crashReports) ? readdirSync(crashReports, { recursive: true }) : []).toEqual(before);
      // Debian's Chromium always starts its crash handler; its database is the browser's own, removed with the profile.
      const databases = descendants(a.launched.pid as number).flatMap((pid) => commandLineOf(pid).filter((arg) => arg.startsWith("--database=")));
      for (const database of databases) expect(database.startsWith(`--database=${a.launched.userDataDir}/`)).toBe(true);
      await t.client().browsers.delete(a.id);
    });
  });
}

describe("--allow-private-network", () => {
  let launcher: TrackingLauncher;
  const t = useTestServer(() => {
    launcher = new TrackingLauncher({ allowPrivateNetwork: true, lookup, profileBytes: 64 * 1024 * 1024 });
    return { launcher };
  });

  it("lets a page reach this host by IP and by name, still through the proxy only: WebRTC sends no UDP", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/") });
    const probe = new SandboxProbe(launcher.latest());
    const tab = await probe.open(pages.url("/"));
    expect(await probe.text(tab)).toContain(CANARY);
    // Chromium itself keeps a page it fetched through a proxy from fetching "localhost" (Local Network Access), so that one is navigated to.
    for (const url of [pages.url("/"), `http://rebound.test:${pages.port}/`]) {
      expect(
        await probe.evaluate<string>(tab, `fetch(${JSON.stringify(url)}).then((response) => response.text(), (error) => "failed: " + error.message)`),
      ).toContain(CANARY);
    }
    const other = await probe.open(pages.url("/", "localhost"));
    expect(await probe.text(other)).toContain(CANARY);
    const stun = await UdpListener.start();
    try {
      await gatherIce(probe, tab, stun.port);
      expect(stun.packets).toBe(0);
    } finally {
      await stun.close();
    }
    await t.client().browsers.delete(browser.id);
  });

  it("a page filling its site storage fills only its capped profile, never the host's disk", async () => {
    const browser = await t.client().browsers.create();
    const launched = launcher.latest();
    const probe = new SandboxProbe(launched);
    const tab = await probe.open(pages.url("/"));
    // 128 MiB into the origin private file system, against a profile of 64 MiB.
    const outcome = await probe.evaluate<string>(
      tab,
      `(async () => {
        const file = await (await navigator.storage.getDirectory()).getFileHandle("fill", { create: true });
        const writable = await file.createWritable();
        const chunk = new Uint8Array(1024 * 1024);
        let written = 0;
        try {
          for (; written < 128; written++) await writable.write(chunk);
          await writable.close();
          return "wrote " + written + " MiB";
        } catch (error) {
          return "stopped at " + written + " MiB: " + error.name;
        }
      })()`,
    );
    expect(outcome).toMatch(/^stopped at \d+ MiB/);
    expect(Number(/\d+/.exec(outcome)?.[0])).toBeLessThan(64);
    // On the host, the browser's directory holds its proxy socket and nothing written by the page.
    const hostBytes = (dir: string): number =>
      readdirSync(dir, { withFileTypes: true }).reduce(
        (sum, entry) => sum + (entry.isDirectory() ? hostBytes(join(dir, entry.name)) : entry.isFile() ? statSync(join(dir, entry.name)).size : 0),
        0,
      );
    expect(hostBytes(launched.userDataDir as string)).toBeLessThan(1024 * 1024);
    expect(await probe.evaluate(tab, "1 + 1")).toBe(2);
    await t.client().browsers.delete(browser.id);
  });

  it("a start_url that downloads writes into the browser's own folder, not the account's home; nothing is left after DELETE", async () => {
    const homeDownloads = join(homedir(), "Downloads");
    const before = existsSync(homeDownloads) ? readdirSync(homeDownloads) : [];
    const browser = await t.client().browsers.create({ start_url: pages.url("/small.txt") });
    const launched = launcher.latest();
    const downloads = join(launched.userDataDir as string, "downloads");
    if (isRoot) await expect.poll(() => existsSync(join(insideSandbox(launched, downloads), "small.txt")), { timeout: 15_000 }).toBe(true);
    else await expect.poll(() => pages.hits.includes("/small.txt"), { timeout: 15_000 }).toBe(true);
    expect(existsSync(homeDownloads) ? readdirSync(homeDownloads) : []).toEqual(before);
    await t.client().browsers.delete(browser.id);
    expect(existsSync(launched.userDataDir as string)).toBe(false);
  });
});

describe("a page's requests to this server (with --allow-private-network)", () => {
  it("cannot open DevTools connections (its Origin is refused), and its attempts lock out neither the address it shares with the server's real clients nor anyone", async () => {
    const launcher = new TrackingLauncher({ allowPrivateNetwork: true });
    const t = await startTestServer({ launcher, rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0.001, burst: 5 } } });
    try {
      const browser = await t.client().browsers.create();
      const probe = new SandboxProbe(launcher.latest());
      const tab = await probe.open(pages.url("/"));
      const opens = (url: string, times: number) =>
        probe.evaluate<string[]>(
          tab,
          `Promise.all(Array.from({ length: ${times} }, () => new Promise((resolve) => {
            const socket = new WebSocket(${JSON.stringify(url)});
            socket.onopen = () => { socket.close(); resolve("open"); };
            socket.onerror = () => resolve("refused");
          })))`,
        );
      const wrong = browser.cdp_ws_url.replace(/token=[^&]+/, "token=wrong");
      // WebSockets skip CORS: a hostile page could send any number of guesses to the server. Its
      // upgrades carry its Origin and are refused before their credential is looked at.
      expect(await opens(wrong, 20)).toEqual(Array(20).fill("refused"));
      expect(await opens(browser.cdp_ws_url, 1)).toEqual(["refused"]);
      // The server's real clients on 127.0.0.1 are not locked out...
      expect((await t.client().limits.get()).max_concurrent_sessions).toBeGreaterThan(0);
      const fromHost = new WebSocket(browser.cdp_ws_url);
      await new Promise((resolve, reject) => {
        fromHost.once("open", resolve);
        fromHost.once("error", reject);
      });
      fromHost.close();
      await t.client().browsers.delete(browser.id);
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("without a usable sandbox", () => {
  it("refuses to launch a browser, naming the cause and the fix, instead of running it unsandboxed", async () => {
    const empty = mkdtempSync(join(tmpdir(), "browser-service-no-bwrap-"));
    const path = process.env.PATH;
    process.env.PATH = empty;
    try {
      const launcher = new ChromiumLauncher({ allowPrivateNetwork: true });
      await expect(launcher.launch({})).rejects.toThrow(/bubblewrap \(bwrap\) is not installed.*apt-get install -y bubblewrap socat.*--unsafe-no-sandbox/);
      const t = await startTestServer({ launcher });
      try {
        await expect(t.client().browsers.create()).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });
        expect(t.mismatches).toEqual([]);
      } finally {
        await t.close();
      }
    } finally {
      process.env.PATH = path;
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("--unsafe-no-sandbox runs browsers as the server's account, and every record says so", async () => {
    const t = await startTestServer({ unsafeNoSandbox: true, allowPrivateNetwork: false });
    try {
      const browser = await t.client().browsers.create();
      expect(browser.sandboxed).toBe(false);
      expect((await t.client().browsers.get(browser.id)).sandboxed).toBe(false);
      await t.client().browsers.delete(browser.id);
    } finally {
      await t.close();
    }
  });
});

/** A UDP socket on 127.0.0.1 that counts what reaches it (a STUN server a page would ask). */
class UdpListener {
  packets = 0;
  private constructor(private readonly socket: UdpSocket) {
    socket.on("message", () => this.packets++);
  }

  static async start(): Promise<UdpListener> {
    const socket = createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    return new UdpListener(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

/**
 * Has the page gather ICE candidates against a STUN server on 127.0.0.1:`port`, for at most
 * 5 s (without a network it may gather forever); resolves with the gathering state then.
 */
function gatherIce(probe: SandboxProbe, tab: string, port: number): Promise<string> {
  return probe.evaluate<string>(
    tab,
    `new Promise((resolve) => {
      const connection = new RTCPeerConnection({ iceServers: [{ urls: "stun:127.0.0.1:${port}" }] });
      connection.createDataChannel("probe");
      connection.onicegatheringstatechange = () => { if (connection.iceGatheringState === "complete") resolve("complete"); };
      setTimeout(() => resolve(connection.iceGatheringState), 5000);
      connection.createOffer().then((offer) => connection.setLocalDescription(offer));
    })`,
  );
}
