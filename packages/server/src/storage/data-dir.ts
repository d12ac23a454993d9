import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** Where everything lives inside a data directory. */
export interface DataDirLayout {
  /** The data directory itself, absolute. */
  root: string;
  /** The SQLite database file. */
  databaseFile: string;
  /** Stored extension archives, one `<id>.zip` each. */
  extensionsDir: string;
  /** Uploads being received; on the same file system so a finished one moves by rename. */
  uploadsDir: string;
  /** Holds the pid of the server that owns the data directory. */
  ownerFile: string;
  /** Where `keys create` leaves requests for a running server, and finds its answers. */
  keyRequestsDir: string;
}

/** The layout of the data directory `root` (relative paths resolve against the cwd). */
export function dataDirLayout(root: string): DataDirLayout {
  const absolute = resolve(root);
  return {
    root: absolute,
    databaseFile: join(absolute, "browser-service.sqlite"),
    extensionsDir: join(absolute, "extensions"),
    uploadsDir: join(absolute, "uploads"),
    ownerFile: join(absolute, "server.pid"),
    keyRequestsDir: join(absolute, "key-requests"),
  };
}

/** Creates the data directory and its folders if they are missing. */
export function ensureDataDir(layout: DataDirLayout): void {
  for (const dir of [layout.root, layout.extensionsDir, layout.uploadsDir, layout.keyRequestsDir]) mkdirSync(dir, { recursive: true });
}

/** Another live server already owns the data directory. */
export class DataDirInUseError extends Error {
  /** Stable code of the failure. */
  readonly code = "data_dir_in_use";

  constructor(layout: DataDirLayout, pid: number) {
    super(`The data directory ${layout.root} is in use by the server with pid ${pid}. Stop it, or use another --data-dir; if no such server runs, delete ${layout.ownerFile}.`);
    this.name = "DataDirInUseError";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid of the live server that owns the data directory, if one does. */
export function liveOwner(layout: DataDirLayout): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(layout.ownerFile, "utf8"), 10);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return Number.isInteger(pid) && pid !== process.pid && isAlive(pid) ? pid : undefined;
}

/**
 * Makes this process the owner of the data directory and clears what a killed owner
 * left behind: SQLite's lock directory (node-sqlite3-wasm locks with `mkdir`, which a
 * `SIGKILL` never undoes, so the next open would see the database locked forever) and
 * half-received uploads. Returns the function that gives ownership back.
 */
export function claimDataDir(layout: DataDirLayout): () => void {
  ensureDataDir(layout);
  const previous = liveOwner(layout);
  if (previous !== undefined) throw new DataDirInUseError(layout, previous);
  writeFileSync(layout.ownerFile, `${process.pid}\n`);
  rmSync(`${layout.databaseFile}.lock`, { recursive: true, force: true });
  rmSync(layout.uploadsDir, { recursive: true, force: true });
  mkdirSync(layout.uploadsDir, { recursive: true });
  return () => rmSync(layout.ownerFile, { force: true });
}
