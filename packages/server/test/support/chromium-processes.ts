import { readdirSync, readFileSync, readlinkSync } from "node:fs";

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    // The process ended between the listing and the read.
    return undefined;
  }
}

/** Every live process of the process group `pgid` (a browser and its renderers, utilities, zygotes). */
export function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readOr(`/proc/${entry}/stat`);
    // Fields after the parenthesised command: state, ppid, pgrp.
    const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields !== undefined && Number(fields[2]) === pgid) pids.push(Number(entry));
  }
  return pids;
}

/** The socket inodes of the TCP sockets (IPv4 and IPv6) in the LISTEN state on this machine. */
export function listeningTcpInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = readOr(table);
    if (text === undefined) continue;
    for (const line of text.split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      // Column 3 is the state (0A = LISTEN), column 9 the inode.
      if (columns[3] === "0A" && columns[9] !== undefined) inodes.add(columns[9]);
    }
  }
  return inodes;
}

/** The inodes of every socket a process holds open. */
export function socketInodesOf(pid: number): string[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: string[] = [];
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.push(match[1] as string);
    } catch {
      // The descriptor closed while it was read.
    }
  }
  return inodes;
}

/** The listening TCP sockets held by any process of the group `pgid`, as `pid:inode`. */
export function listeningSocketsOfGroup(pgid: number): string[] {
  const listening = listeningTcpInodes();
  return processGroup(pgid).flatMap((pid) => socketInodesOf(pid).filter((inode) => listening.has(inode)).map((inode) => `${pid}:${inode}`));
}

/** The command line of a process, or `undefined` once it has ended. */
export function commandLine(pid: number): string[] | undefined {
  return readOr(`/proc/${pid}/cmdline`)?.split("\0");
}

/** The main processes of the browsers the server started (not their renderers). */
export function chromiumBrowserPids(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const args = commandLine(pid);
      // bwrap's own command line names the same flags: the browser is the process it runs.
      return args !== undefined && !args[0]?.endsWith("bwrap") && args.includes("--remote-debugging-pipe") && args.some((arg) => arg.startsWith("--user-data-dir=") && arg.includes("browser-service-chromium-")) && !args.some((arg) => arg.startsWith("--type="));
    });
}
