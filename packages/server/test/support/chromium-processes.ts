import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { descendants } from "./sandbox-probe.js";

// What reading a process's /proc files fails with once it has ended (or, for a file, when
// the kernel has none, such as tcp6 without IPv6): the only failure that means "nothing".
const GONE = new Set(["ENOENT", "ESRCH"]);

/**
 * Runs one read of `/proc`: `undefined` when what it reads is gone (the process ended
 * between the listing and the read), an error for any other failure, since a check that
 * cannot see (another account's process, without the right to look) must not pass.
 */
function readProc<T>(path: string, read: (path: string) => T): T | undefined {
  try {
    return read(path);
  } catch (error) {
    if (GONE.has((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw new Error(`Cannot read ${path}: ${(error as Error).message}`);
  }
}

const readText = (path: string): string | undefined => readProc(path, (file) => readFileSync(file, "utf8"));

/** Every live process of the process group `pgid` (a browser and its renderers, utilities, zygotes). */
export function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readText(`/proc/${entry}/stat`);
    // Fields after the parenthesised command: state, ppid, pgrp.
    const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields !== undefined && Number(fields[2]) === pgid) pids.push(Number(entry));
  }
  return pids;
}

/** A listening TCP socket of a process: its local address (`127.0.0.1:1080`, `[::1]:9222`) and the process. */
export interface ListeningSocket {
  pid: number;
  command: string;
  local: string;
}

/**
 * The TCP sockets (IPv4 and IPv6) in the LISTEN state in the network namespace of `pid`,
 * by inode, with their local address. Read through the process's own `/proc/<pid>/net`:
 * a browser in its sandbox has a namespace of its own, whose sockets the host's
 * `/proc/net/tcp` does not list.
 */
function listeningInNamespaceOf(pid: number): Map<string, string> {
  const listening = new Map<string, string>();
  for (const [table, v6] of [
    [`/proc/${pid}/net/tcp`, false],
    [`/proc/${pid}/net/tcp6`, true],
  ] as const) {
    const text = readText(table);
    if (text === undefined) continue;
    for (const line of text.split("\n").slice(1)) {
      const columns = line.trim().split(/\s+/);
      // Column 1 is the local address (hex, host byte order for IPv4), 3 the state (0A = LISTEN), 9 the inode.
      if (columns[3] !== "0A" || columns[9] === undefined || columns[1] === undefined) continue;
      const [address = "", port = "0"] = columns[1].split(":");
      const host = v6
        ? `[${address}]`
        : (address.match(/../g) ?? [])
            .reverse()
            .map((byte) => parseInt(byte, 16))
            .join(".");
      listening.set(columns[9], `${host}:${parseInt(port, 16)}`);
    }
  }
  return listening;
}

/**
 * The inodes of every socket a process holds open, or `undefined` once it has ended. A
 * process whose descriptors cannot be read is an error, never an empty list.
 */
export function socketInodesOf(pid: number): string[] | undefined {
  const fds = readProc(`/proc/${pid}/fd`, (path) => readdirSync(path));
  if (fds === undefined) return undefined;
  const inodes: string[] = [];
  for (const fd of fds) {
    // `undefined`: the descriptor closed while it was read.
    const match = /^socket:\[(\d+)\]$/.exec(readProc(`/proc/${pid}/fd/${fd}`, (path) => readlinkSync(path)) ?? "");
    if (match) inodes.push(match[1] as string);
  }
  return inodes;
}

/** The listening TCP sockets held by any process of the group `pgid`, each seen in that process's own network namespace. */
export function listeningSocketsOfGroup(pgid: number): ListeningSocket[] {
  const found: ListeningSocket[] = [];
  for (const pid of processGroup(pgid)) {
    const inodes = socketInodesOf(pid);
    if (inodes === undefined || inodes.length === 0) continue;
    const listening = listeningInNamespaceOf(pid);
    for (const inode of inodes) {
      const local = listening.get(inode);
      if (local !== undefined) found.push({ pid, command: (commandLine(pid) ?? [])[0] ?? "", local });
    }
  }
  return found;
}

/** The command line of a process, or `undefined` once it has ended. */
export function commandLine(pid: number): string[] | undefined {
  return readText(`/proc/${pid}/cmdline`)?.split("\0");
}

/** Every process whose command line names `text` in one of its arguments (such as a browser's profile directory). */
export function processesNaming(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => commandLine(pid)?.some((arg) => arg.includes(text)) === true);
}

/**
 * The main processes of the browsers servers started (not their renderers): every
 * server's on the machine, other test runs' included, or with `serverPid` only the
 * processes descended from that server. Ask while it runs: once it died, its browsers
 * are re-parented and no longer descend from it.
 */
export function chromiumBrowserPids(serverPid?: number): number[] {
  const candidates =
    serverPid === undefined
      ? readdirSync("/proc")
          .filter((entry) => /^\d+$/.test(entry))
          .map(Number)
      : descendants(serverPid);
  return candidates.filter((pid) => {
    const args = commandLine(pid);
    // bwrap's own command line names the same flags: the browser is the process it runs.
    return (
      args !== undefined &&
      !args[0]?.endsWith("bwrap") &&
      args.includes("--remote-debugging-pipe") &&
      args.some((arg) => arg.startsWith("--user-data-dir=") && arg.includes("browser-service-chromium-")) &&
      !args.some((arg) => arg.startsWith("--type="))
    );
  });
}
