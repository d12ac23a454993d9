import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumLauncher } from "../src/browsers/chromium-launcher.js";
import { BrowserCgroups, type CgroupView, GROUP_PREFIX, ownCgroupView, resourceLimitsLine } from "../src/sandbox/browser-cgroups.js";
import { spawnServer } from "./support/child-server.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";
import { drive, waitForTools } from "./support/webmcp-driver.js";

// Each browser runs in cgroups of its own below the server's group, with a memory, process
// and CPU budget the kernel enforces: a page that takes more ends or stalls its own browser
// only. Written from the attacker's side: without the budget each attack below takes the
// host's memory or process table, and the assertions on the group see nothing.

const MIB = 1024 * 1024;
const BUDGET = { memoryBytes: 512 * MIB, maxProcesses: 300, cpus: 0.5 };

/** The server's own v1 group of `controller` on this host (as /proc/self/cgroup names it). */
function ownGroup(controller: string): string {
  const line = readFileSync("/proc/self/cgroup", "utf8")
    .split("\n")
    .find((each) => each.split(":")[1]?.split(",").includes(controller));
  if (line === undefined) throw new Error(`no ${controller} cgroup`);
  return join("/sys/fs/cgroup", controller, line.split(":")[2] as string);
}

/** The groups of this server's running browsers in `controller`'s hierarchy. */
function browserGroups(controller: string): string[] {
  const parent = join(ownGroup(controller), `${GROUP_PREFIX}${process.pid}`);
  if (!existsSync(parent)) return [];
  return readdirSync(parent, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(parent, entry.name));
}

const read = (path: string) => readFileSync(path, "utf8").trim();

/** Arrays that outgrow any budget: in the page, in WebAssembly memory, or in many Web Workers at once. */
const HOGS = {
  arraybuffers: `<script>const keep = []; setInterval(() => { const b = new Uint8Array(32 << 20); b.fill(1); keep.push(b); }, 10);</script>`,
  wasm: `<script>const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); setInterval(() => { try { m.grow(512); new Uint8Array(m.buffer).fill(1); } catch {} }, 10);</script>`,
  workers: `<script>const body = "const keep = []; setInterval(() => { const a = new Array(1 << 20); for (let i = 0; i < a.length; i++) a[i] = i + 0.5; keep.push(a); }, 10);";
    const url = URL.createObjectURL(new Blob([body], { type: "text/javascript" }));
    for (let i = 0; i < 8; i++) new Worker(url);</script>`,
} as const;

const TOOLS_PAGE = `<!doctype html><title>Calm</title><script>
document.modelContext.registerTool({ name: "echo", description: "Echoes.", inputSchema: { type: "object" }, execute: async (input) => input });
</script>`;

let pages: PageServer;
beforeAll(async () => {
  pages = await PageServer.start();
  for (const [name, body] of Object.entries(HOGS)) pages.serve(`/${name}`, `<!doctype html><title>${name}</title>${body}`);
  pages.serve("/calm", TOOLS_PAGE);
});
afterAll(async () => {
  await pages.close();
});

describe.runIf(process.getuid?.() === 0)("each browser's resource budget", () => {
  const t = useTestServer(() => ({ launcher: new TrackingLauncher({ budget: BUDGET }) }));
  let calm: Browser;

  beforeAll(async () => {
    calm = await t.client().browsers.create({ start_url: pages.url("/calm") });
  });

  async function crashOf(id: string): Promise<Browser> {
    for (;;) {
      const browser = await t.client().browsers.get(id);
      if (browser.status === "crashed") return browser;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const ownMemoryLimit = read(join(ownGroup("memory"), "memory.limit_in_bytes"));

  it("shows on the record, and is the kernel's: a group per browser below the server's own, removed when the browser ends", async () => {
    expect(calm.resource_budget).toEqual({ memory_mib: 512, max_processes: 300, cpus: 0.5 });
    const before = new Set(browserGroups("memory"));
    const browser = await t.client().browsers.create();
    const [memory] = browserGroups("memory").filter((group) => !before.has(group));
    if (memory === undefined) throw new Error("the new browser has no memory group");
    const label = memory.split("/").at(-1) as string;
    const pids = join(ownGroup("pids"), `${GROUP_PREFIX}${process.pid}`, label);
    const cpu = join(ownGroup("cpu"), `${GROUP_PREFIX}${process.pid}`, label);
    expect(Number(read(join(memory, "memory.limit_in_bytes")))).toBe(512 * MIB);
    // Socket buffers count too: v1 charges them to the group only under a TCP limit of its own.
    expect(Number(read(join(memory, "memory.kmem.tcp.limit_in_bytes")))).toBe(128 * MIB);
    expect(read(join(pids, "pids.max"))).toBe("300");
    expect(read(join(cpu, "cpu.cfs_quota_us"))).toBe("50000");
    // Every process of the browser is in it: the sandbox, Chromium and its helpers.
    const processes = read(join(memory, "cgroup.procs")).split("\n");
    expect(processes.length).toBeGreaterThanOrEqual(4);
    for (const pid of processes) {
      // A helper may exit between the two reads.
      if (existsSync(`/proc/${pid}`)) expect(read(`/proc/${pid}/cgroup`)).toContain(`/${GROUP_PREFIX}${process.pid}/${label}`);
    }
    // The server's own groups keep their limits: nothing above the browser's group changed.
    expect(read(join(ownGroup("memory"), "memory.limit_in_bytes"))).toBe(ownMemoryLimit);
    await t.client().browsers.delete(browser.id);
    expect(existsSync(memory)).toBe(false);
    expect(existsSync(pids)).toBe(false);
    expect(existsSync(cpu)).toBe(false);
  });

  it("lets another server clean up what it takes for a dead server's groups without harm: a live one makes its parent again", async () => {
    // Two servers that cannot see each other's process (other PID namespaces) each take the other for dead.
    const blind = (pid: number): CgroupView => ({ ...ownCgroupView(), pid, alive: () => false });
    const first = await BrowserCgroups.open(BUDGET, blind(900_001));
    const second = await BrowserCgroups.open(BUDGET, blind(900_002));
    expect(existsSync(join(ownGroup("memory"), `${GROUP_PREFIX}900001`))).toBe(false);
    const group = await first.cgroups?.create("1");
    expect(group?.directories.every((dir) => existsSync(dir))).toBe(true);
    // A group busy with a process is never removed by another server's clean-up.
    const sleeper = spawn("sleep", ["30"]);
    await group?.place(sleeper.pid as number);
    await BrowserCgroups.open(BUDGET, blind(900_003));
    expect(group?.directories.every((dir) => existsSync(dir))).toBe(true);
    expect(sleeper.exitCode).toBe(null);
    sleeper.kill("SIGKILL");
    await once(sleeper, "exit");
    await group?.remove();
    for (const pid of [900_001, 900_002, 900_003])
      for (const controller of ["memory", "pids", "cpu"])
        if (existsSync(join(ownGroup(controller), `${GROUP_PREFIX}${pid}`))) rmdirSync(join(ownGroup(controller), `${GROUP_PREFIX}${pid}`));
    expect(second.check.usable).toBe(true);
  });

  it.each(Object.keys(HOGS))("ends a browser whose page takes more memory than its budget (%s), crashed out_of_memory, and only it", async (hog) => {
    const hungry = await t.client().browsers.create({ start_url: pages.url(`/${hog}`), telemetry: {} });
    const crashed = await crashOf(hungry.id);
    expect(crashed).toMatchObject({ status: "crashed", crash_reason: "out_of_memory" });
    // Its telemetry's system category says how it ended.
    await expect
      .poll(async () => (await t.client().telemetry.events(hungry.id, { category: ["system"] })).map((envelope) => envelope.event.type))
      .toEqual(["system_oom_kill"]);
    // The other tenant's browser, and the server, go on.
    expect((await t.client().browsers.get(calm.id)).status).toBe("running");
    await waitForTools(t.client(), calm.id, (tools) => tools.some((tool) => tool.name === "echo"));
    // Its slot is free, its groups are gone.
    await t.client().browsers.delete(hungry.id);
    await expect.poll(() => browserGroups("memory").length).toBe(1);
  });

  it("leaves no group behind once a server stopped (SIGTERM), and its banner says what each browser gets", async () => {
    const dataDir = tempDataDir();
    const child = await spawnServer(dataDir, ["--browser-memory-mib", "512", "--browser-max-processes", "300", "--browser-cpus", "0.5"]);
    try {
      expect(child.stdout()).toContain("512 MiB of memory, 300 processes and threads, 0.5 CPU");
      const client = createClient({ baseUrl: child.url, apiKey: child.printedKey ?? "", projectId: null, maxRetries: 0 });
      const browser = await client.browsers.create();
      expect(browser.resource_budget).toEqual({ memory_mib: 512, max_processes: 300, cpus: 0.5 });
      const parent = join(ownGroup("memory"), `${GROUP_PREFIX}${child.child.pid}`);
      expect(readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory())).toHaveLength(1);
      expect(await child.stop()).toBe(0);
      for (const controller of ["memory", "pids", "cpu"]) expect(existsSync(join(ownGroup(controller), `${GROUP_PREFIX}${child.child.pid}`))).toBe(false);
    } finally {
      await child.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("stops a client that opens tabs past the process budget at the budget, and ends that browser alone", async () => {
    const before = new Set(browserGroups("pids"));
    const spawner = await t.client().browsers.create();
    const [group] = browserGroups("pids").filter((each) => !before.has(each));
    if (group === undefined) throw new Error("the new browser has no pids group");
    const driven = await drive(spawner.cdp_ws_url);
    let most = 0;
    const count = (file: string) => {
      try {
        return Number(/(\d+)\s*$/.exec(read(join(group, file)))?.[1] ?? 0);
      } catch {
        return 0; // The group is gone: the browser was ended.
      }
    };
    try {
      // Each tab is a renderer process of a dozen threads or more: 80 of them need far more
      // than 300. Past the budget a tab may never answer, so each gets a moment, not more.
      for (let i = 0; i < 80 && existsSync(group) && count("pids.events") === 0; i++) {
        await Promise.race([driven.context.newPage().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2_000))]);
        most = Math.max(most, count("pids.current"));
      }
      expect(most).toBeGreaterThan(100);
      expect(most).toBeLessThanOrEqual(300);
    } finally {
      await driven.disconnect().catch(() => undefined);
    }
    // The kernel refused a fork at the budget (the group's pids.events), and Chromium cannot
    // start a tab again after that: the browser is ended, and says why.
    expect(await crashOf(spawner.id)).toMatchObject({ status: "crashed", crash_reason: "process_limit" });
    await waitForTools(t.client(), calm.id, (tools) => tools.some((tool) => tool.name === "echo"));
    await t.client().browsers.delete(spawner.id);
  });
});

describe("where budgets cannot be set", () => {
  it("the banner says why, or that browsers run unbounded on purpose, or what each gets", () => {
    expect(resourceLimitsLine({ usable: false, problem: "no controllers" }, BUDGET)).toBe(
      'Browsers cannot be given resource budgets here, so none can start: no controllers. See README "Resource budgets", or start with --unsafe-no-resource-limits.',
    );
    expect(resourceLimitsLine({ usable: false, unsafe: true }, undefined)).toContain("WITHOUT resource budgets (--unsafe-no-resource-limits)");
    expect(resourceLimitsLine({ usable: true, version: 1, where: "/sys/fs/cgroup/memory/x" }, BUDGET)).toBe(
      "Each browser's budget (cgroup v1, /sys/fs/cgroup/memory/x): 512 MiB of memory, 300 processes and threads, 0.5 CPU.",
    );
  });

  it("with --unsafe-no-resource-limits runs browsers, and their records say they have no budget", async () => {
    const server = await startTestServer({ launcher: new TrackingLauncher({ unsafeNoResourceLimits: true, cgroupView: view("0::/\n", "") }) });
    try {
      const browser = await server.client().browsers.create();
      expect(browser).toMatchObject({ status: "running", resource_budget: null, crash_reason: null });
    } finally {
      await server.close();
    }
  });

  const view = (procSelfCgroup: string, mountinfo: string): CgroupView => ({ procSelfCgroup, mountinfo, pid: 4242, alive: () => true });

  it("keeps the server not ready, as no browser can start, unless it runs them unbounded on purpose", async () => {
    const readiness = async (budgets: "none" | "unsafe") => {
      const launcher = new ChromiumLauncher({ budget: BUDGET, cgroupView: view("0::/\n", ""), unsafeNoResourceLimits: budgets === "unsafe" });
      const server = await startTestServer({ launcher });
      try {
        const answer = await fetch(`${server.url}/readyz`);
        return { status: answer.status, body: (await answer.json()) as { message?: string } };
      } finally {
        await server.close();
      }
    };
    expect(await readiness("none")).toMatchObject({ status: 503, body: { message: expect.stringContaining("browsers cannot start on this host") } });
    expect((await readiness("unsafe")).status).toBe(200);
  });

  it("says why, and a launch fails with it instead of running the browser unbounded", async () => {
    const opened = await BrowserCgroups.open(BUDGET, view("0::/\n", ""));
    expect(opened.check).toMatchObject({ usable: false, problem: expect.stringContaining("memory, pids, cpu") });
    const launcher = new TrackingLauncher({ budget: BUDGET, cgroupView: view("0::/\n", "") });
    await expect(launcher.launch({})).rejects.toMatchObject({
      code: "browser_launch_failed",
      message: expect.stringContaining("--unsafe-no-resource-limits"),
    });
  });

  it("under cgroup v2 makes groups only below the server's own, moving its processes to a leaf to hand the controllers down", async () => {
    const root = mkdtempSync(join(tmpdir(), "cgroup2-"));
    try {
      const own = join(root, "service.slice", "app");
      mkdirSync(own, { recursive: true });
      writeFileSync(join(own, "cgroup.controllers"), "cpuset cpu io memory pids\n");
      writeFileSync(join(own, "cgroup.subtree_control"), "\n");
      writeFileSync(join(own, "cgroup.procs"), "4242\n");
      writeFileSync(join(own, "memory.max"), "max\n");
      const mountinfo = `40 30 0:37 / ${root} rw,relatime - cgroup2 cgroup2 rw\n`;
      const opened = await BrowserCgroups.open(BUDGET, view("0::/service.slice/app\n", mountinfo));
      expect(opened.check).toEqual({ usable: true, version: 2, where: join(own, `${GROUP_PREFIX}4242`) });
      expect(read(join(own, `${GROUP_PREFIX}server`, "cgroup.procs"))).toBe("4242");
      expect(read(join(own, "cgroup.subtree_control"))).toBe("+memory +pids +cpu");
      const group = await opened.cgroups?.create("7");
      expect(group?.directories).toHaveLength(1);
      const dir = group?.directories[0] as string;
      expect(dir).toMatch(new RegExp(`^${join(own, `${GROUP_PREFIX}4242`)}/7-[0-9a-f]{8}$`));
      expect(read(join(dir, "memory.max"))).toBe(String(512 * MIB));
      expect(read(join(dir, "memory.oom.group"))).toBe("1");
      expect(read(join(dir, "pids.max"))).toBe("300");
      expect(read(join(dir, "cpu.max"))).toBe("50000 100000");
      // The server's own group keeps its limit.
      expect(read(join(own, "memory.max"))).toBe("max");
      await expect(opened.cgroups?.create("../escape")).rejects.toThrow(RangeError);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("refuses a v2 group whose controllers were not delegated", async () => {
    const root = mkdtempSync(join(tmpdir(), "cgroup2-"));
    try {
      writeFileSync(join(root, "cgroup.controllers"), "memory\n");
      const opened = await BrowserCgroups.open(BUDGET, view("0::/\n", `40 30 0:37 / ${root} rw - cgroup2 cgroup2 rw\n`));
      expect(opened.check).toMatchObject({ usable: false, problem: expect.stringContaining("pids, cpu are not delegated") });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
