import { randomUUID } from "node:crypto";
import {
  chmodSync,
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, join, resolve } from "node:path";
import { isIdOf } from "./ids.js";

/** Where everything lives inside a data directory. */
export interface DataDirLayout {
  /** The data directory itself, absolute. */
  root: string;
  /** Marks the directory as this server's: without it, a non-empty directory is refused. */
  markerFile: string;
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
  /** One record per warm browser (not a session, so not in the database), for the clean-up after a kill. */
  warmBrowsersDir: string;
  /** The key that encrypts stored secrets, made at the first start unless one is given. */
  secretsKeyFile: string;
  /** Profiles' saved state, sealed, one `<profile id>.<random>.state` file per save (SQLite only). */
  profilesDir: string;
}

/** The layout of the data directory `root` (relative paths resolve against the cwd). */
export function dataDirLayout(root: string): DataDirLayout {
  const absolute = resolve(root);
  return {
    root: absolute,
    markerFile: join(absolute, "browser-service-data-dir.txt"),
    databaseFile: join(absolute, "browser-service.sqlite"),
    extensionsDir: join(absolute, "extensions"),
    uploadsDir: join(absolute, "uploads"),
    ownerFile: join(absolute, "server.pid"),
    keyRequestsDir: join(absolute, "key-requests"),
    warmBrowsersDir: join(absolute, "warm-browsers"),
    secretsKeyFile: join(absolute, "secrets.key"),
    profilesDir: join(absolute, "profiles"),
  };
}

// The directory holds API key hashes, the organization's data and uploaded archives: only
// the server's own user may list or read it. Files inside are private too, so that a
// directory made readable again by hand still does not expose them.
/** Mode of the data directory and of its folders. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file the server writes in the data directory. */
export const PRIVATE_FILE_MODE = 0o600;

const MARKER_TEXT =
  "This is the data directory of a browser-service-server. The server deletes only files it created itself, in its own folders; keep other files elsewhere.\n";

/** The first 16 bytes of every SQLite 3 database file. */
const SQLITE_HEADER = Buffer.from("SQLite format 3\0", "latin1");

/** Syncs a folder's entries to disk, so that a file renamed or created in it stays after a crash. */
export function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The name of a stored extension archive: the extension's id and `.zip`. */
export function archiveFileName(extensionId: string): string {
  return `${extensionId}.zip`;
}

/** Whether a file of the extensions folder is an archive the server stored (the folder may hold others). */
export function isArchiveFileName(name: string): boolean {
  return name.endsWith(".zip") && isIdOf("extension", name.slice(0, -".zip".length));
}

/** The name of a file of profile `profileId`'s saved state: its id, a random part, `.state`. */
export function profileStateFileName(profileId: string): string {
  return `${profileId}.${randomUUID()}.state`;
}

/** Whether a file of the profiles folder is saved state the server wrote (the folder may hold others). */
export function isProfileStateFileName(name: string): boolean {
  const match = /^([a-z]+_[a-z2-7]{24})\.[0-9a-f-]{36}\.state$/.exec(name);
  return match !== null && isIdOf("profile", match[1] as string);
}

/** A new, unused path for an upload being received. */
export function newUploadPath(uploadsDir: string): string {
  return join(uploadsDir, `${randomUUID()}.zip`);
}

const UPLOAD_FILE_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.zip$/;

/** Whether a file of the uploads folder is one {@link newUploadPath} named (the folder may hold others). */
export function isUploadFileName(name: string): boolean {
  return UPLOAD_FILE_NAME.test(name);
}

/** The data directory is not empty and not marked as this server's, so the server will not use it. */
export class DataDirNotOwnedError extends Error {
  /** Stable code of the failure. */
  readonly code = "data_dir_not_owned";

  constructor(layout: DataDirLayout) {
    super(
      `The directory ${layout.root} is not empty and has no ${basename(layout.markerFile)}, so it is not a data directory of this server; use an empty or new directory as --data-dir.`,
    );
    this.name = "DataDirNotOwnedError";
  }
}

/** How a start found its data directory. */
export type DataDirState = "marked" | "new" | "adopted";

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

function startsWithSqliteHeader(path: string): boolean {
  if (!isFile(path)) return false;
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whose the directory is: `marked` (this server's), `new` (empty: it becomes this
 * server's), `adopted` (an older version of this server's: no mark yet, but its SQLite
 * database, a file whose name and header only this server gives), or `undefined`
 * (someone else's).
 */
function stateOf(layout: DataDirLayout): DataDirState | undefined {
  if (isFile(layout.markerFile)) return "marked";
  if (readdirSync(layout.root).length === 0) return "new";
  if (startsWithSqliteHeader(layout.databaseFile)) return "adopted";
  return undefined;
}

/**
 * Makes sure the data directory is this server's and is laid out: creates it if missing,
 * marks an empty one (or one an older version of the server left, which has its database
 * but no mark), and refuses anything else with {@link DataDirNotOwnedError}, before
 * writing or changing anything in it. Then creates the folders, and makes the directory,
 * its folders, the database and the stored archives private to the server's user
 * (older versions left them readable by everyone).
 */
export function ensureDataDir(layout: DataDirLayout): DataDirState {
  mkdirSync(layout.root, { recursive: true, mode: PRIVATE_DIR_MODE });
  const state = stateOf(layout);
  if (state === undefined) throw new DataDirNotOwnedError(layout);
  chmodSync(layout.root, PRIVATE_DIR_MODE);
  if (state !== "marked") writeFileSync(layout.markerFile, MARKER_TEXT, { mode: PRIVATE_FILE_MODE });
  for (const dir of [layout.extensionsDir, layout.uploadsDir, layout.keyRequestsDir, layout.warmBrowsersDir, layout.profilesDir]) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    chmodSync(dir, PRIVATE_DIR_MODE);
  }
  // Created before SQLite opens it, because SQLite gives its journal the database's mode.
  closeSync(openSync(layout.databaseFile, "a", PRIVATE_FILE_MODE));
  chmodSync(layout.databaseFile, PRIVATE_FILE_MODE);
  for (const name of readdirSync(layout.extensionsDir)) {
    const path = join(layout.extensionsDir, name);
    if (isArchiveFileName(name) && isFile(path)) chmodSync(path, PRIVATE_FILE_MODE);
  }
  return state;
}

/** Another live server already owns the data directory. */
export class DataDirInUseError extends Error {
  /** Stable code of the failure. */
  readonly code = "data_dir_in_use";

  constructor(layout: DataDirLayout, pid: number) {
    super(
      `The data directory ${layout.root} is in use by the server with pid ${pid}. Stop it, or use another --data-dir; if no such server runs, delete ${layout.ownerFile}.`,
    );
    this.name = "DataDirInUseError";
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  // A killed server its parent (a supervisor, a shell) has not reaped yet is a zombie: it
  // holds nothing, and a restart at once must not wait on it. Without /proc it counts as alive.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
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
 * half-received uploads. Only what the server names itself is removed: the (empty) lock
 * directory and upload files named by {@link newUploadPath}; anything else in the
 * uploads folder stays. Returns the function that gives ownership back.
 */
export function claimDataDir(layout: DataDirLayout): () => void {
  ensureDataDir(layout);
  const previous = liveOwner(layout);
  if (previous !== undefined) throw new DataDirInUseError(layout, previous);
  writeFileSync(layout.ownerFile, `${process.pid}\n`, { mode: PRIVATE_FILE_MODE });
  try {
    rmdirSync(`${layout.databaseFile}.lock`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  for (const name of readdirSync(layout.uploadsDir)) {
    const path = join(layout.uploadsDir, name);
    if (isUploadFileName(name) && isFile(path)) rmSync(path, { force: true });
  }
  return () => rmSync(layout.ownerFile, { force: true });
}
