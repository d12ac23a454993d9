import { readdirSync, readFileSync } from "node:fs";
import type { LaunchedBrowser } from "../../src/index.js";

/**
 * Looks at a browser from inside its own sandbox, through the server's root DevTools
 * session (`launched.cdp.call`), which the DevTools endpoint's refusals do not apply to:
 * what a page or a client reaches once past the endpoint is what the sandbox lets it see.
 */
export class SandboxProbe {
  constructor(readonly launched: LaunchedBrowser) {}

  /** Opens a tab on `url`, waits for its load to settle, and returns its session. */
  async open(url: string): Promise<string> {
    const { targetId } = await this.launched.cdp.call("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await this.launched.cdp.call("Target.attachToTarget", { targetId, flatten: true });
    if (url !== "about:blank") await this.navigate(sessionId as string, url);
    return sessionId as string;
  }

  /** Navigates an open tab and waits for the load to settle; returns Chromium's error text, if any. */
  async navigate(sessionId: string, url: string): Promise<string | undefined> {
    const result = await this.launched.cdp.call("Page.navigate", { url }, sessionId);
    await this.settle(sessionId);
    return result.errorText as string | undefined;
  }

  /** Evaluates `expression` in the tab (awaiting a promise) and returns its value. */
  async evaluate<T = unknown>(sessionId: string, expression: string): Promise<T> {
    const result = await this.launched.cdp.call("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, sessionId);
    return (result.result as { value: T }).value;
  }

  /** The text the tab shows (its URL, then its body's text), for error pages too. */
  async text(sessionId: string): Promise<string> {
    return this.evaluate<string>(sessionId, "location.href + '\\n' + (document.body ? document.body.innerText : '')");
  }

  async settle(sessionId: string): Promise<void> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const state = await this.evaluate<string>(sessionId, "document.readyState").catch(() => "loading");
      if (state === "complete") return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function children(pid: number): number[] {
  const found: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    try {
      found.push(...readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // The task ended while it was read.
    }
  }
  return found;
}

/** Every process descended from `pid`. */
export function descendants(pid: number): number[] {
  const all: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children(queue.shift() as number)) {
      all.push(child);
      queue.push(child);
    }
  }
  return all;
}

/** A field of `/proc/<pid>/status` (such as `Uid` or `Groups`), or `undefined` once the process is gone. */
export function statusField(pid: number, field: string): string | undefined {
  try {
    return new RegExp(`^${field}:[ \\t]*(.*)$`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]?.trim();
  } catch {
    return undefined;
  }
}

/**
 * The command line of a process, or `[]` once it is gone. Chromium rewrites the command
 * line of its child processes into one string of space-separated arguments, so it is split
 * at spaces too.
 */
export function commandLineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split(/[\0 ]/).filter(Boolean);
  } catch {
    return [];
  }
}

/** Chromium's main browser process inside a launched browser's sandbox. */
export function browserProcess(launched: LaunchedBrowser): number {
  const pid = descendants(launched.pid as number).find((each) => {
    const args = commandLineOf(each);
    return args.some((arg) => arg.startsWith("--user-data-dir=")) && !args.some((arg) => arg.startsWith("--type=")) && !args[0]?.endsWith("bwrap");
  });
  if (pid === undefined) throw new Error(`No Chromium process under ${launched.pid}.`);
  return pid;
}

/** How a path inside a browser's sandbox is reached from the host (root only): through its process's root. */
export function insideSandbox(launched: LaunchedBrowser, path: string): string {
  return `/proc/${browserProcess(launched)}/root${path}`;
}
