import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";

/** What one browser may use of the host, enforced by the kernel (cgroups). */
export interface ResourceBudget {
  /** Memory of all its processes together, page cache and its tmpfs files included, in bytes; past it the browser is ended. */
  memoryBytes: number;
  /** Processes and threads at once (the kernel counts each thread); past it new ones fail. */
  maxProcesses: number;
  /** CPU time, in cores (1.5: one and a half cores' worth each period). */
  cpus: number;
}

/**
 * A budget fit for a host of 2 cores and 24 GiB running about ten browsers: a heavy page
 * and a few tabs fit in 2 GiB (tmpfs files count too: profile, downloads and `/dev/shm`
 * together reach 1 GiB at their default caps); an idle headless Chromium runs about 200
 * threads in 8 processes, and a browser of ten tabs stays under 1,000. CPU: every core of
 * the host as the ceiling, since Chromium starts on several at once (a ceiling of one core
 * makes a cold start about 1 s slower here); under contention each browser's group weighs
 * as one, however many processes and workers it runs, so a busy browser gets its share and
 * no more.
 */
export const DEFAULT_RESOURCE_BUDGET: ResourceBudget = { memoryBytes: 2 * 1024 ** 3, maxProcesses: 1024, cpus: availableParallelism() };

/** The scheduler's period for a CPU quota, in microseconds (the kernel's default). */
const CPU_PERIOD_US = 100_000;

/** The controllers a budget needs. */
const CONTROLLERS = ["memory", "pids", "cpu"] as const;
type Controller = (typeof CONTROLLERS)[number];

/** How the name of a group this server makes below its own starts; the rest is its process id. */
export const GROUP_PREFIX = "browser-service-";

/** Whether browsers can be given budgets here, and if not, why. */
export type CgroupCheck = { usable: true; version: 1 | 2; where: string } | { usable: false; problem: string };

/** Where the kernel's cgroup hierarchies are, as this process sees them (tests give their own). */
export interface CgroupView {
  /** The text of `/proc/self/cgroup`. */
  procSelfCgroup: string;
  /** The text of `/proc/self/mountinfo`. */
  mountinfo: string;
  /** This server's process id: names its group of browsers. */
  pid: number;
  /** Whether a process id is alive (a stale group of a dead server may be removed). */
  alive(pid: number): boolean;
}

/** The cgroup view of this process. */
export function ownCgroupView(): CgroupView {
  return {
    procSelfCgroup: readOr("/proc/self/cgroup"),
    mountinfo: readOr("/proc/self/mountinfo"),
    pid: process.pid,
    alive: (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code !== "ESRCH";
      }
    },
  };
}

function readOr(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

interface Mount {
  root: string;
  mountPoint: string;
  fstype: string;
  superOptions: string[];
}

function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    const separator = fields.indexOf("-");
    if (separator < 6 || fields.length < separator + 4) continue;
    mounts.push({
      root: unescapeMount(fields[3] as string),
      mountPoint: unescapeMount(fields[4] as string),
      fstype: fields[separator + 1] as string,
      superOptions: (fields[separator + 3] as string).split(","),
    });
  }
  return mounts;
}

// mountinfo writes space, tab, newline and backslash in paths as octal escapes.
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The groups of this process: `controller` (or `""` for cgroup v2) to its path. */
function parseProcCgroup(text: string): Map<string, string> {
  const groups = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (match === null) continue;
    for (const controller of (match[1] as string).split(",")) groups.set(controller, match[2] as string);
  }
  return groups;
}

/** The directory of a group `path` seen through `mount`, or `undefined` when the mount does not show it. */
function groupDirectory(mount: Mount, path: string): string | undefined {
  const inside = relative(mount.root, path);
  if (inside.startsWith("..")) return undefined;
  return join(mount.mountPoint, inside);
}

/** Where this server's groups go: one directory per controller (v1) or one for all (v2). */
type Layout = { version: 1; parents: Record<Controller, string> } | { version: 2; own: string };

/** Finds the server's own groups; `problem` when the controllers a budget needs are not there. */
function findLayout(view: CgroupView): Layout | { problem: string } {
  const groups = parseProcCgroup(view.procSelfCgroup);
  const mounts = parseMountinfo(view.mountinfo);
  if (groups.size === 0) return { problem: "this system has no cgroups (/proc/self/cgroup is empty or missing)" };
  const v1 = {} as Record<Controller, string>;
  const missing: string[] = [];
  for (const controller of CONTROLLERS) {
    const path = groups.get(controller);
    const mount = mounts.find((m) => m.fstype === "cgroup" && m.superOptions.includes(controller));
    const directory = path === undefined || mount === undefined ? undefined : groupDirectory(mount, path);
    if (directory === undefined) missing.push(controller);
    else v1[controller] = directory;
  }
  if (missing.length === 0) return { version: 1, parents: v1 };
  const unified = groups.get("");
  const mount = mounts.find((m) => m.fstype === "cgroup2");
  if (missing.length === CONTROLLERS.length && unified !== undefined && mount !== undefined) {
    const own = groupDirectory(mount, unified);
    if (own !== undefined) return { version: 2, own };
  }
  return {
    problem: `the cgroup controllers ${missing.join(", ")} are not available to this process (cgroup v1 without them mounted, or cgroup v2 not mounted)`,
  };
}

/**
 * Browsers' resource budgets through the kernel's cgroups. Groups are made only below the
 * server's own group, never anywhere else, and no limit of the server's group or any above
 * it is touched: the server's browsers sit in `<own group>/browser-service-<server pid>/<label>`.
 *
 * - cgroup v1 (only v1 controllers, as on hosts without systemd's unified hierarchy):
 *   a group per browser in each of the `memory`, `pids` and `cpu` hierarchies.
 * - cgroup v2 (the server owns a delegated subtree: systemd's `Delegate=yes`, a
 *   container): v2 allows controllers only in groups without processes of their own, so
 *   the processes of the server's group move to its child `browser-service-server`, and
 *   the group hands `memory`, `pids` and `cpu` to its children.
 */
export class BrowserCgroups {
  readonly #layout: Layout;
  readonly #name: string;
  readonly #budget: ResourceBudget;
  #prepared: Promise<void> | undefined;

  private constructor(layout: Layout, name: string, budget: ResourceBudget) {
    this.#layout = layout;
    this.#name = name;
    this.#budget = budget;
  }

  /**
   * Checks that budgets can be set here and prepares the server's group of browsers
   * (removing empty ones that servers no longer running left); a {@link CgroupCheck}
   * that says why not otherwise.
   */
  static async open(budget: ResourceBudget, view: CgroupView = ownCgroupView()): Promise<{ check: CgroupCheck; cgroups?: BrowserCgroups }> {
    const layout = findLayout(view);
    if ("problem" in layout) return { check: { usable: false, problem: layout.problem } };
    const cgroups = new BrowserCgroups(layout, `${GROUP_PREFIX}${view.pid}`, budget);
    try {
      await cgroups.#prepare(view);
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      const why =
        code === "EACCES" || code === "EPERM" || code === "EROFS"
          ? `this process may not make groups below its own (${message}); delegate a cgroup subtree to it (systemd: Delegate=yes; a container: a writable cgroup namespace)`
          : message;
      return { check: { usable: false, problem: why } };
    }
    const where = layout.version === 1 ? join(layout.parents.memory, cgroups.#name) : join(layout.own, cgroups.#name);
    return { check: { usable: true, version: layout.version, where }, cgroups };
  }

  /** Removes the server's group of browsers where it is empty (the kernel keeps one that holds a browser). */
  async close(): Promise<void> {
    const parents = this.#parents();
    for (const parent of parents) await rmdir(parent).catch(() => undefined);
  }

  /** The server's group of browsers: one per controller (v1) or one (v2). */
  #parents(): string[] {
    const layout = this.#layout;
    return layout.version === 1 ? CONTROLLERS.map((c) => join(layout.parents[c], this.#name)) : [join(layout.own, this.#name)];
  }

  /** The budget every browser gets. */
  get budget(): ResourceBudget {
    return this.#budget;
  }

  async #prepare(view: CgroupView): Promise<void> {
    this.#prepared ??= (async () => {
      const layout = this.#layout;
      if (layout.version === 1) {
        for (const controller of CONTROLLERS) await removeStale(layout.parents[controller], view);
        for (const parent of this.#parents()) await mkdir(parent, { recursive: true });
        return;
      }
      const controllers = (await readFile(join(layout.own, "cgroup.controllers"), "utf8")).split(/\s+/);
      const absent = CONTROLLERS.filter((c) => !controllers.includes(c));
      if (absent.length > 0) throw new Error(`the controllers ${absent.join(", ")} are not delegated to this process's cgroup v2 group ${layout.own}`);
      await removeStale(layout.own, view);
      const enabled = (await readFile(join(layout.own, "cgroup.subtree_control"), "utf8")).split(/\s+/);
      if (!CONTROLLERS.every((c) => enabled.includes(c))) {
        // "No internal processes": the group's processes move to a leaf of their own first.
        const leaf = join(layout.own, `${GROUP_PREFIX}server`);
        await mkdir(leaf, { recursive: true });
        for (const pid of await groupProcesses(layout.own)) await writeFile(join(leaf, "cgroup.procs"), String(pid)).catch(ignoreGone);
        await writeFile(join(layout.own, "cgroup.subtree_control"), CONTROLLERS.map((c) => `+${c}`).join(" "));
      }
      await ensureParentV2(join(layout.own, this.#name));
    })();
    return this.#prepared;
  }

  /**
   * Makes the group of one browser, with the budget's limits; `label` names it among this
   * server's, with a random suffix, so that it never meets a group of another (a server
   * that ran with the same process id before, or in another process namespace).
   */
  async create(label: string): Promise<BudgetGroup> {
    if (!/^[A-Za-z0-9_-]+$/.test(label)) throw new RangeError(`A browser's group label must be letters, digits, _ or -; received ${JSON.stringify(label)}.`);
    const layout = this.#layout;
    const budget = this.#budget;
    const quota = Math.max(1000, Math.round(budget.cpus * CPU_PERIOD_US));
    const name = `${label}-${randomBytes(4).toString("hex")}`;
    // The parents again: another server's clean-up may have taken an empty one away.
    const parents = this.#parents();
    const dirs = parents.map((parent) => join(parent, name));
    const group = new BudgetGroup(layout.version, dirs);
    try {
      for (const [i, dir] of dirs.entries()) {
        if (layout.version === 2) await ensureParentV2(parents[i] as string);
        else await mkdir(parents[i] as string, { recursive: true });
        await mkdir(dir);
        group.made.push(dir);
      }
      if (layout.version === 1) {
        const [memory, pids, cpu] = dirs as [string, string, string];
        await writeFile(join(memory, "memory.limit_in_bytes"), String(budget.memoryBytes));
        // Where swap is accounted, the same cap on memory and swap together: swap is no way around it.
        await writeFile(join(memory, "memory.memsw.limit_in_bytes"), String(budget.memoryBytes)).catch(ignoreAbsent);
        // v1 charges socket buffers to a group only under a TCP limit of its own: without
        // one, a page holding sockets nobody reads from fills the host's TCP memory.
        await writeFile(join(memory, "memory.kmem.tcp.limit_in_bytes"), String(Math.floor(budget.memoryBytes / 4))).catch(ignoreAbsent);
        await writeFile(join(pids, "pids.max"), String(budget.maxProcesses));
        await writeFile(join(cpu, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
        await writeFile(join(cpu, "cpu.cfs_quota_us"), String(quota));
      } else {
        const dir = dirs[0] as string;
        // v2 counts socket buffers in memory.current: they are in the budget already.
        await writeFile(join(dir, "memory.max"), String(budget.memoryBytes));
        await writeFile(join(dir, "memory.swap.max"), "0").catch(ignoreAbsent);
        // The whole browser ends at once, never a renderer alone behind a page that shows "Aw, Snap".
        await writeFile(join(dir, "memory.oom.group"), "1").catch(ignoreAbsent);
        await writeFile(join(dir, "pids.max"), String(budget.maxProcesses));
        await writeFile(join(dir, "cpu.max"), `${quota} ${CPU_PERIOD_US}`);
      }
    } catch (error) {
      await group.remove().catch(() => undefined);
      throw error;
    }
    return group;
  }
}

async function ensureParentV2(parent: string): Promise<void> {
  try {
    await mkdir(parent);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return;
    throw error;
  }
  await writeFile(join(parent, "cgroup.subtree_control"), CONTROLLERS.map((c) => `+${c}`).join(" "));
}

/** Why a browser's group says it went past its budget. */
export type OverBudget = "out_of_memory" | "process_limit";

/** The group of one browser: every process it starts is in it, and counts against its budget. */
export class BudgetGroup {
  readonly #version: 1 | 2;
  /** Its directories: one per controller (v1: memory, pids, cpu) or one (v2). */
  readonly directories: readonly string[];
  /** @internal The directories this group made: the only ones it removes or kills in. */
  readonly made: string[] = [];

  /** @internal Made by {@link BrowserCgroups.create}. */
  constructor(version: 1 | 2, directories: string[]) {
    this.#version = version;
    this.directories = directories;
  }

  /** Moves a process into the group; what it starts afterwards is in it too. */
  async place(pid: number): Promise<void> {
    for (const dir of this.directories) await writeFile(join(dir, "cgroup.procs"), String(pid));
  }

  /**
   * Whether the kernel stopped the browser at its budget: killed a process for memory, or
   * refused one a process or thread past the process budget. Chromium does not recover
   * from a failed start of a helper process (every tab then crashes, new ones too), so
   * either ends the browser.
   */
  async overBudget(): Promise<OverBudget | undefined> {
    const [memory, pids] =
      this.#version === 1 ? (this.directories as [string, string, string]) : [this.directories[0] as string, this.directories[0] as string];
    if ((await counter(join(memory, this.#version === 1 ? "memory.oom_control" : "memory.events"), "oom_kill")) > 0) return "out_of_memory";
    if ((await counter(join(pids, "pids.events"), "max")) > 0) return "process_limit";
    return undefined;
  }

  /** Kills every process of the group (one that left the browser's process group too). */
  async killAll(): Promise<void> {
    const first = this.made[0];
    if (first === undefined) return;
    for (const pid of await groupProcesses(first).catch(() => [])) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch (error) {
        ignoreGone(error);
      }
    }
  }

  /** Removes the group once its processes are gone (the kernel refuses while one is left: retried a moment, then an error). */
  async remove(): Promise<void> {
    for (const dir of this.made) {
      for (let attempt = 0; ; attempt++) {
        try {
          await rmdir(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "ENOENT") break;
          if (code !== "EBUSY" || attempt >= 40) throw error;
          await this.killAll();
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }
  }
}

/** A `name value` line of a cgroup's counters file; 0 when absent or unreadable (the group is gone). */
async function counter(file: string, name: string): Promise<number> {
  try {
    const match = new RegExp(`^${name} (\\d+)$`, "m").exec(await readFile(file, "utf8"));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/**
 * The processes of a group as this process sees them. The kernel writes 0 for one outside
 * this process's PID namespace: never a process to move or signal (0 would be this
 * server's own process group), so it is left out.
 */
async function groupProcesses(dir: string): Promise<number[]> {
  return (await readFile(join(dir, "cgroup.procs"), "utf8"))
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number)
    .filter((pid) => pid > 0);
}

/**
 * Removes groups that servers no longer running left below `dir` (`browser-service-<pid>`
 * with no such process), and their browsers' groups, when empty: the kernel refuses to
 * remove a group that still holds a process, so nothing running is touched.
 */
async function removeStale(dir: string, view: CgroupView): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const match = new RegExp(`^${GROUP_PREFIX}(\\d+)$`).exec(entry.name);
    if (!entry.isDirectory() || match === null || Number(match[1]) === view.pid || view.alive(Number(match[1]))) continue;
    const stale = join(dir, entry.name);
    for (const child of await readdir(stale, { withFileTypes: true })) {
      if (child.isDirectory()) await rmdir(join(stale, child.name)).catch(() => undefined);
    }
    await rmdir(stale).catch(() => undefined);
  }
}

function ignoreGone(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
}

function ignoreAbsent(error: unknown): void {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "ENOENT") throw error;
}

/** The start-up line about browsers' budgets: what each gets, or plainly why they get none. */
export function resourceLimitsLine(check: CgroupCheck | { usable: false; unsafe: true }, budget: ResourceBudget | undefined): string {
  if ("unsafe" in check)
    return "Browsers run WITHOUT resource budgets (--unsafe-no-resource-limits): one page can take the host's memory, CPU and process table.";
  if (!check.usable)
    return `Browsers cannot be given resource budgets here, so none can start: ${check.problem}. See README "Resource budgets", or start with --unsafe-no-resource-limits.`;
  const b = budget ?? DEFAULT_RESOURCE_BUDGET;
  return `Each browser's budget (cgroup v${check.version}, ${check.where}): ${Math.floor(b.memoryBytes / 1024 ** 2)} MiB of memory, ${b.maxProcesses} processes and threads, ${b.cpus} CPU.`;
}
