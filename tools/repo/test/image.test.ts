// The container image (deploy/image/Dockerfile), built and run for real, offline: no image
// registry is reachable, so the test makes the base itself (mmdebstrap's Debian bookworm
// plus this machine's own `node` at /usr/local/bin, imported as node:20-bookworm-slim),
// builds the image from `pnpm deploy --prod` of the built workspace (tools/repo/image-context.mjs),
// and runs it with Podman and runc as the deploy/image/README.md says: a sandboxed browser
// reads a page's WebMCP tools through the published port. Everything lives in Podman
// storage of its own in a temporary folder (its own --root, --runroot, --tmpdir, network
// config, user-mode networking instead of a bridge), removed at the end, pass or fail. Only
// Debian's rootfs is kept between runs (a gitignored cache under node_modules/.cache).
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { makeImageContext, ROOT } from "../image-context.mjs";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { decidePodman, ensurePodman, PODMAN_TOOLS } from "../podman.mjs";

type System = { platform: string; distro: string; distroName: string; isRoot: boolean; hasAptGet: boolean; hasSudo: boolean };
type Tool = { command: string; pkg: string };
const debianRoot: System = { platform: "linux", distro: "debian", distroName: "Debian GNU/Linux 12 (bookworm)", isRoot: true, hasAptGet: true, hasSudo: false };

describe("decidePodman", () => {
  it("goes on as root when every tool is there", () => {
    expect(decidePodman({ missing: [], system: debianRoot }).action).toBe("ok");
  });

  it("installs only the missing Debian packages as root, after apt-get update", () => {
    const [podman, runc] = PODMAN_TOOLS as Tool[];
    expect(decidePodman({ missing: [podman, runc], system: debianRoot })).toMatchObject({
      action: "install",
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", "podman", "runc"]],
      ],
    });
  });

  it("skips the image test, saying so, where it cannot run", () => {
    const user = decidePodman({ missing: [], system: { ...debianRoot, isRoot: false } });
    expect(user.action).toBe("stop");
    expect(user.message).toContain("image.test.ts) is skipped");
    const fedora = decidePodman({ missing: PODMAN_TOOLS, system: { ...debianRoot, distro: "fedora", distroName: "Fedora Linux 41" } });
    expect(fedora.action).toBe("stop");
    expect(fedora.message).toContain("with the package manager of Fedora Linux 41");
  });

  it("never throws: a failed install is a skip with its reason", () => {
    const result = ensurePodman({ system: debianRoot, missing: () => PODMAN_TOOLS, run: () => 100, log: () => undefined });
    expect(result.ready).toBe(false);
    expect(result.message).toContain("exit code 100");
    expect(result.message).toContain("is skipped");
  });
});

// --- The image, built and run -----------------------------------------------------------

const BASE_IMAGE = "docker.io/library/node:20-bookworm-slim";
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "browser-service-image");
const ROOTFS_CACHE = join(CACHE_DIR, "bookworm-minbase.tar");
/** A cached rootfs older than this is made again, so Debian's security updates come in. */
const ROOTFS_MAX_AGE_MS = 7 * 24 * 3600_000;
/** Where the page with WebMCP tools listens, inside the container (loopback: a secure context). */
const PAGE_PORT = 8899;
const TOOL_PAGE = `<!doctype html><title>Image test</title><script>
document.modelContext.registerTool({ name: "image_ping", description: "Answers pong.", execute: async () => ({ pong: true }) });
</script>`;

const suffix = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const image = `localhost/browser-service-image-test:${suffix}`;
const volume = `bs-image-test-${suffix}`;
const containers: string[] = [];
let work = "";
/** Podman's run and tmp folders: short, since slirp4netns's API socket there must fit a socket path (107 bytes). */
let short = "";
let podmanEnv: NodeJS.ProcessEnv = {};
let podmanGlobal: string[] = [];
let skipNote: string | undefined;
const timings: Record<string, number> = {};
/**
 * What Podman 4.3 makes outside --root and --runroot whatever its flags: the network run
 * folder (empty with slirp4netns) and the blob-info cache. Removed at the end when the test
 * made them, each only if it holds nothing else.
 */
const PODMAN_GLOBALS = [
  { dir: "/run/containers", files: [], dirs: ["/run/containers/networks"] },
  { dir: "/var/lib/containers", files: ["/var/lib/containers/cache/blob-info-cache-v1.boltdb"], dirs: ["/var/lib/containers/cache"] },
];
let globalsBefore: string[] = [];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in a process group of its own, killed whole (SIGKILL) after `timeoutMs`. */
function run(file: string, args: string[], { timeoutMs, env = process.env, cwd }: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(file, args, { env, cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`${file} ${args.join(" ")} did not end within ${timeoutMs / 1000} s:\n${tail(stdout + stderr)}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

function tail(text: string, lines = 30): string {
  return text.trim().split("\n").slice(-lines).join("\n");
}

/** Runs a command that must succeed; returns its stdout. */
async function must(file: string, args: string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<string> {
  const result = await run(file, args, options);
  if (result.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (exit code ${result.code}):\n${tail(result.stdout + result.stderr)}`);
  return result.stdout;
}

const podman = (args: string[], timeoutMs = 60_000) => must("podman", [...podmanGlobal, ...args], { timeoutMs, env: podmanEnv });
const podmanMay = (args: string[], timeoutMs = 60_000) => run("podman", [...podmanGlobal, ...args], { timeoutMs, env: podmanEnv });

async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
  const start = Date.now();
  try {
    return await step();
  } finally {
    timings[name] = Math.round((Date.now() - start) / 100) / 10;
  }
}

/** Debian bookworm's minbase with CA roots: from the cache while it is fresh, else from the mirror (about 25 s). */
async function rootfsTar(into: string): Promise<void> {
  if (existsSync(ROOTFS_CACHE) && Date.now() - statSync(ROOTFS_CACHE).mtimeMs < ROOTFS_MAX_AGE_MS) {
    copyFileSync(ROOTFS_CACHE, into);
    return;
  }
  const made = join(work, "rootfs.tar");
  // TMPDIR: mmdebstrap's own chroot (and its /proc and /dev mounts) stays in the work folder.
  await must("mmdebstrap", ["--quiet", "--variant=minbase", "--include=ca-certificates", "bookworm", made], {
    timeoutMs: 240_000,
    env: { ...process.env, TMPDIR: work },
  });
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${ROOTFS_CACHE}.${suffix}.partial`;
  copyFileSync(made, partial);
  renameSync(partial, ROOTFS_CACHE);
  renameSync(made, into);
}

/** The stand-in for node:20-bookworm-slim: the rootfs plus this machine's `node` at /usr/local/bin/node, as the real image has it. */
async function importBase(): Promise<void> {
  const tar = join(work, "base.tar");
  await rootfsTar(tar);
  const node = realpathSync(process.execPath);
  await must(
    "tar",
    ["--append", "-f", tar, "--owner=0", "--group=0", "--mode=0755", "--transform=s,.*,usr/local/bin/node,", "-C", dirname(node), basename(node)],
    { timeoutMs: 60_000 },
  );
  await podman(["import", "--change", 'CMD ["node"]', tar, BASE_IMAGE], 120_000);
  rmSync(tar, { force: true });
}

/** Starts the image detached, published on a free port of 127.0.0.1, with what its sandbox needs of the runtime. */
/** What the sandbox needs from the runtime (deploy/image/README.md): both, unless a test leaves one out. */
const SANDBOX_OPTIONS = ["seccomp=unconfined", "unmask=/proc/*"];

async function startContainer(
  name: string,
  env: Record<string, string>,
  securityOptions: string[] = SANDBOX_OPTIONS,
): Promise<{ url: string; logs: () => Promise<string> }> {
  containers.push(name);
  await podman([
    "run",
    "--detach",
    "--name",
    name,
    "--log-driver",
    "k8s-file",
    // User-mode networking: no bridge, firewall rules or IP forwarding on the host.
    "--network",
    "slirp4netns:port_handler=slirp4netns",
    "--publish",
    "127.0.0.1::8787",
    ...securityOptions.flatMap((option) => ["--security-opt", option]),
    "--volume",
    `${volume}:/data`,
    ...Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
    image,
  ]);
  const logs = async () => {
    const result = await podmanMay(["logs", name]);
    return result.stdout + result.stderr;
  };
  const deadline = Date.now() + 60_000;
  while (!/browser-service-server listening on/.test(await logs())) {
    const state = (await podman(["inspect", "--format", "{{.State.Status}}", name])).trim();
    if (state !== "running") throw new Error(`The container ${name} is ${state}:\n${tail(await logs())}`);
    if (Date.now() > deadline) throw new Error(`The server in ${name} did not listen within 60 s:\n${tail(await logs())}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const port = (await podman(["port", name, "8787"])).trim().split(":").pop();
  return { url: `http://127.0.0.1:${port}`, logs };
}

async function api(url: string, key: string, method = "GET", body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  return { status: response.status, json: text === "" ? undefined : JSON.parse(text) };
}

/** Unmounts whatever is still mounted below the work folder (a killed build or mmdebstrap), deepest first. */
function unmountBelow(dir: string): void {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\040/g, " "))
    .filter((point): point is string => point?.startsWith(`${dir}/`) === true)
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) spawnSync("umount", ["--lazy", point], { timeout: 10_000 });
}

describe("the container image", () => {
  beforeAll(async () => {
    const tools = ensurePodman({
      // Bounded, unlike an install by `npm test` itself (tools/repo/task.mjs).
      run: (command: string, args: string[]) =>
        spawnSync(command, args, { stdio: "inherit", timeout: 300_000, killSignal: "SIGKILL", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
          .status ?? 1,
    });
    if (!tools.ready) {
      skipNote = tools.message;
      console.warn(`\n${tools.message}\n`);
      return;
    }
    globalsBefore = PODMAN_GLOBALS.map((entry) => entry.dir).filter((dir) => existsSync(dir));
    work = mkdtempSync(join(tmpdir(), "browser-service-image-test-"));
    short = mkdtempSync("/tmp/bsimg-");
    const conf = join(work, "containers.conf");
    // Podman raises a container's open-files limit to 1048576 by default; where root lacks
    // CAP_SYS_RESOURCE (these machines: a hard limit of 20000), runc then refuses to start
    // it. No default ulimits: the container keeps Podman's own limits.
    writeFileSync(conf, "[containers]\ndefault_ulimits = []\n");
    podmanEnv = { ...process.env, CONTAINERS_CONF: conf };
    podmanGlobal = [
      "--root",
      join(work, "storage"),
      "--runroot",
      join(short, "run"),
      "--tmpdir",
      join(short, "tmp"),
      "--network-config-dir",
      join(work, "networks"),
      "--events-backend",
      "file",
      "--cgroup-manager=cgroupfs",
      "--runtime",
      "runc",
    ];
    const start = Date.now();
    const context = await timed("context", async () => makeImageContext(join(work, "context")));
    await timed("base", importBase);
    const log = join(work, "build.log");
    await timed("build", async () => {
      const result = await podmanMay(["build", "--isolation", "chroot", "--pull=never", "--tag", image, context], 360_000);
      writeFileSync(log, result.stdout + result.stderr);
      if (result.code !== 0) throw new Error(`podman build failed (exit code ${result.code}):\n${tail(result.stdout + result.stderr, 40)}`);
    });
    timings["total before the first run"] = Math.round((Date.now() - start) / 100) / 10;
  }, 600_000);

  afterAll(async () => {
    if (work === "") return;
    try {
      for (const name of containers) await podmanMay(["rm", "--force", "--volumes", "--time", "0", name], 60_000);
      await podmanMay(["volume", "rm", "--force", volume]);
      await podmanMay(["rmi", "--force", image, BASE_IMAGE], 120_000);
    } finally {
      for (const dir of [short, work]) {
        if (dir === "") continue;
        unmountBelow(dir);
        rmSync(dir, { recursive: true, force: true });
      }
      for (const entry of PODMAN_GLOBALS.filter((candidate) => !globalsBefore.includes(candidate.dir))) {
        for (const file of entry.files) rmSync(file, { force: true });
        for (const dir of [...entry.dirs, entry.dir]) {
          try {
            rmdirSync(dir);
          } catch {
            // Not there, or someone else's files are in it: left alone.
          }
        }
      }
      console.log(`Image test steps (s): ${JSON.stringify(timings)}`);
    }
  }, 180_000);

  it("holds the server and its production dependencies, no build tools, tests or .git", async ({ skip }) => {
    skip(skipNote !== undefined, skipNote);
    const [size, baseSize] = await Promise.all([
      podman(["image", "inspect", "--format", "{{.Size}}", image]),
      podman(["image", "inspect", "--format", "{{.Size}}", BASE_IMAGE]),
    ]);
    const added = Number(size) - Number(baseSize);
    console.log(`Image ${image}: ${(Number(size) / 1e6).toFixed(0)} MB, of which ${(added / 1e6).toFixed(0)} MB over the base`);
    // Chromium and its libraries take about 670 MB; the app about 10.
    expect(added).toBeLessThan(800e6);
    // One shell, sections split by "---": /app's size and entries, what must
    // not be there, and what must.
    const script = [
      "du -sk /app | cut -f1",
      "ls -A /app",
      "find / -xdev -name .git -print",
      "find /app \\( -name '*.test.*' -o -name '*.spec.*' -o -name tsconfig.json -o -path /app/src -o -path /app/test \\) -print",
      "for tool in gcc cc make g++ python3 pnpm tsc; do command -v $tool; done; true",
      "for tool in chromium bwrap socat tini; do command -v $tool; done",
    ].join("; echo ---; ");
    const inside = await podman(["run", "--rm", "--network", "none", "--user", "0", "--entrypoint", "sh", image, "-c", script], 60_000);
    const [appKib, appEntries, git, tests, buildTools, runtime] = inside.split("---\n").map((section) => section.trim());
    expect((await podman(["image", "inspect", "--format", "{{.Config.User}}", image])).trim()).toBe("1234:1234");
    expect(Number(appKib)).toBeLessThan(50 * 1024);
    expect(appEntries?.split("\n").sort()).toEqual(["LICENSE", "assets", "bin", "dist", "migrations", "node_modules", "package.json"]);
    expect({ git, tests, buildTools }).toEqual({ git: "", tests: "", buildTools: "" });
    expect(runtime?.split("\n")).toEqual(["/usr/bin/chromium", "/usr/bin/bwrap", "/usr/bin/socat", "/usr/bin/tini"]);
  }, 120_000);

  let apiKey = "";

  it("says at start what it cannot do: no resource budgets without cgroups it may write", async ({ skip }) => {
    skip(skipNote !== undefined, skipNote);
    const name = `bs-image-test-first-${suffix}`;
    const { url, logs } = await startContainer(name, {});
    const banner = await logs();
    apiKey = /BROWSER_SERVICE_API_KEY=(bsk_\S+)/.exec(banner)?.[1] ?? "";
    expect(apiKey, banner).not.toBe("");
    expect(banner).toContain("First start in /data");
    expect(banner).toMatch(/Browsers can start: Chromium \d+/);
    expect(banner).toMatch(/Browsers run sandboxed/);
    expect(banner).toMatch(/they reach only public addresses/);
    // PID 1 is tini, which reaps orphans and hands signals to the server.
    expect(await podman(["exec", name, "cat", "/proc/1/cmdline"])).toContain("tini");
    expect((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(200);
    // The server runs as 1234 in a cgroup mounted read-only: it may not make the budgets'
    // groups, says so on stderr at start, and refuses creates rather than run one unbounded.
    const noBudgets = /Browsers cannot be given resource budgets here/.test(banner);
    if (noBudgets) {
      const create = await api(`${url}/browsers`, apiKey, "POST", {});
      expect(create.status).toBe(503);
      expect(create.json.code).toBe("browser_unavailable");
      expect((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(503);
    } else {
      expect(banner).toMatch(/Each browser's budget/);
    }
    // SIGTERM reaches the server through tini, which stops and exits 0.
    await podman(["stop", "--time", "20", name], 60_000);
    expect((await podman(["inspect", "--format", "{{.State.ExitCode}}", name])).trim()).toBe("0");
    expect(await logs()).toContain("Received SIGTERM.");
  }, 180_000);

  it("says at start that no browser can start where /proc is masked, and is not ready", async ({ skip }) => {
    skip(skipNote !== undefined, skipNote);
    const name = `bs-image-test-masked-${suffix}`;
    const { url, logs } = await startContainer(name, { BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS: "1" }, ["seccomp=unconfined"]);
    // Each sandbox mounts a fresh /proc, which a masked one refuses: the check at start does the same.
    expect(await logs()).toMatch(/Browsers cannot start: .*bubblewrap cannot set up a sandbox here/);
    const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
    expect(ready.status).toBe(503);
    await podman(["stop", "--time", "20", name], 60_000);
  }, 180_000);

  it("runs a sandboxed browser whose page's WebMCP tools are read and invoked through the published port", async ({ skip }) => {
    skip(skipNote !== undefined, skipNote);
    expect(apiKey).not.toBe("");
    const name = `bs-image-test-second-${suffix}`;
    // Every flag from the environment; the same volume, so the first start's key still works.
    const { url, logs } = await startContainer(name, {
      BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS: "1",
      BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK: "1",
      BROWSER_SERVICE_WARM_BROWSERS: "0",
    });
    const banner = await logs();
    expect(banner).not.toContain("First start");
    expect(banner).toMatch(/Browsers run sandboxed/);
    expect(banner).toMatch(/WITHOUT resource budgets/);
    expect(banner).toMatch(/may reach loopback, private and link-local addresses/);

    // The page is served inside the container on its loopback, which the browser reaches
    // through its egress proxy (--allow-private-network) and which is a secure context, as
    // WebMCP needs: a page on another address over plain http registers no tools.
    const pageServer = `const page = ${JSON.stringify(TOOL_PAGE)}; require("node:http").createServer((request, response) => { response.setHeader("content-type", "text/html"); response.end(page); }).listen(${PAGE_PORT}, "127.0.0.1");`;
    await podman(["exec", "--detach", name, "node", "-e", pageServer]);
    const probe = `fetch("http://127.0.0.1:${PAGE_PORT}/").then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`;
    const pageDeadline = Date.now() + 20_000;
    while ((await podmanMay(["exec", name, "node", "-e", probe])).code !== 0) {
      if (Date.now() > pageDeadline) throw new Error("The page server in the container did not answer within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }

    const created = await timed("create", () => api(`${url}/browsers`, apiKey, "POST", { start_url: `http://127.0.0.1:${PAGE_PORT}/tools` }));
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json).toMatchObject({ status: "running", sandboxed: true, resource_budget: null });
    const id: string = created.json.id;

    let tools: Array<{ tool_ref: string; name: string; source: { page_url: string } }> = [];
    const toolsDeadline = Date.now() + 30_000;
    while (!tools.some((tool) => tool.name === "image_ping")) {
      if (Date.now() > toolsDeadline) throw new Error(`No WebMCP tool within 30 s: ${JSON.stringify(tools)}\n${tail(await logs())}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      const listed = await api(`${url}/browsers/${id}/webmcp/tools`, apiKey);
      expect(listed.status).toBe(200);
      tools = listed.json.tools;
    }
    const tool = tools.find((candidate) => candidate.name === "image_ping")!;
    expect(tool.source.page_url).toBe(`http://127.0.0.1:${PAGE_PORT}/tools`);
    const invoked = await api(`${url}/browsers/${id}/webmcp/invoke`, apiKey, "POST", { tool_ref: tool.tool_ref, input: {} });
    expect(invoked.status).toBe(200);
    expect(invoked.json).toMatchObject({ status: "completed", output: { pong: true } });

    expect((await api(`${url}/browsers/${id}`, apiKey, "DELETE")).status).toBe(204);
    await podman(["stop", "--time", "20", name], 60_000);
    expect((await podman(["inspect", "--format", "{{.State.ExitCode}}", name])).trim()).toBe("0");
  }, 180_000);
});
