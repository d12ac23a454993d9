import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { dirname } from "node:path";

/** The loopback port, inside a browser's network namespace, where the relay to the egress proxy listens. */
export const RELAY_PORT = 1080;

/** The most a browser holds in its download folder unless configured otherwise: 256 MiB. */
export const DEFAULT_DOWNLOAD_BYTES = 256 * 1024 * 1024;

/** The most a browser holds in its profile (site storage, caches, downloads to its default folder) unless configured otherwise: 512 MiB. */
export const DEFAULT_PROFILE_BYTES = 512 * 1024 * 1024;

/** The most a browser holds in shared memory (`/dev/shm`: rendering buffers between its processes) unless configured otherwise: 256 MiB. */
export const DEFAULT_SHM_BYTES = 256 * 1024 * 1024;

/**
 * The size of a sandbox's own `/tmp`, which holds only the mount point of the profile:
 * temporary files go to the profile (`TMPDIR`), so that they count against its cap.
 */
const TMP_BYTES = 16 * 1024 * 1024;

/** Where the egress proxy's socket appears inside a sandbox. */
export const SANDBOX_PROXY_SOCKET = "/run/egress.sock";

/** The user and group id a browser has inside its sandbox (its user namespace maps them to its host account). */
export const SANDBOX_ID = 1000;

// Top-level system directories a merged-/usr system has as links into /usr (Debian 12, Ubuntu, Fedora).
const SYSTEM_LINKS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;

/**
 * What of the host outside /usr a browser sees, read-only: of /etc fonts, TLS roots, the
 * dynamic linker's cache, the time zone, Debian's launcher settings (`/etc/chromium.d`)
 * and an administrator's Chromium policies; and the font cache, without which every
 * start would rebuild it (about 100 ms here). Nothing else: no passwd, no hosts, no
 * resolv.conf (the egress proxy resolves names), no machine-id.
 */
const SYSTEM_READ_ONLY = [
  "/etc/fonts",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
  "/etc/ld.so.cache",
  "/etc/localtime",
  "/etc/alternatives",
  "/etc/chromium.d",
  "/etc/chromium",
  "/var/cache/fontconfig",
] as const;

/** How the host's root is laid out, read once: which system directories are links, which read-only paths exist. */
export interface SystemLayout {
  /** `["bin", "usr/bin"]`: /bin is a link to usr/bin. */
  links: [string, string][];
  /** System directories that are real directories (not merged into /usr), bound read-only. */
  directories: string[];
  /** Paths of {@link SYSTEM_READ_ONLY} that exist here. */
  readOnly: string[];
}

/** Reads the host's {@link SystemLayout}. */
export function readSystemLayout(): SystemLayout {
  const layout: SystemLayout = { links: [], directories: [], readOnly: [] };
  for (const name of SYSTEM_LINKS) {
    const stat = lstatOrUndefined(`/${name}`);
    if (stat?.isSymbolicLink()) layout.links.push([name, readlinkSync(`/${name}`)]);
    else if (stat?.isDirectory()) layout.directories.push(`/${name}`);
  }
  for (const path of SYSTEM_READ_ONLY) if (lstatOrUndefined(path) !== undefined) layout.readOnly.push(path);
  return layout;
}

/** Everything one browser's sandbox is made of. */
export interface SandboxSpec {
  /** The host's layout ({@link readSystemLayout}). */
  layout: SystemLayout;
  /**
   * The browser's profile (its `--user-data-dir`): inside the sandbox a tmpfs of
   * {@link profileBytes} at this path, the one writable place; on the host a directory
   * that holds only the egress proxy's socket.
   */
  browserDir: string;
  /** The most the profile may hold, in bytes (a page's storage, caches, crash reports, temporary files). */
  profileBytes: number;
  /** The most the browser may hold in `/dev/shm`, in bytes. */
  shmBytes: number;
  /** Its download folder inside {@link browserDir}, a tmpfs of its own of {@link downloadBytes}. */
  downloadDir: string;
  /** The most a browser may download at once, in bytes. */
  downloadBytes: number;
  /**
   * A folder of the host inside {@link browserDir} where the server unpacks extensions:
   * bound at the same path, read-only, so what the server writes there later is seen by
   * the browser and never written by it.
   */
  extensionsDir: string;
  /** The egress proxy's Unix socket on the host; it appears at {@link SANDBOX_PROXY_SOCKET} inside. */
  proxySocket: string;
  /** The Chromium executable (bound read-only with its directory when outside /usr). */
  executablePath: string;
  /** Chromium's flags. */
  flags: readonly string[];
  /**
   * A tar on the host of storage folders to unpack into the profile before Chromium
   * starts (bound read-only at {@link SANDBOX_PROFILE_SEED}); a failure exits with
   * {@link PROFILE_SEED_FAILED} before Chromium runs.
   */
  profileSeed?: string | undefined;
  /** Once Chromium exits, write a tar of its storage folders ({@link PROFILE_STATE_PATHS}) to fd 5. */
  saveProfile?: boolean | undefined;
}

/** Where a profile's saved state appears inside the sandbox. */
export const SANDBOX_PROFILE_SEED = "/run/profile-seed.tar";
/** The exit code of a sandbox whose profile state could not be unpacked. */
export const PROFILE_SEED_FAILED = 70;
/** The exit code of a sandbox whose storage could not be read back whole after Chromium closed. */
export const PROFILE_SAVE_FAILED = 71;
/**
 * What of Chromium's profile a saved profile keeps: what a logged-in site needs beside its
 * cookies (which are read over DevTools, session cookies included), without caches.
 */
export const PROFILE_STATE_PATHS = ["Default/Local Storage", "Default/IndexedDB", "Default/WebStorage"] as const;

/** The shell words that start Chromium: unpack the saved state first, read it back after, or neither. */
function startScript(spec: SandboxSpec, browserDir: string): string {
  const seed =
    spec.profileSeed === undefined
      ? ""
      : `tar -x -f ${SANDBOX_PROFILE_SEED} -C '${browserDir}' --no-same-owner --no-same-permissions || exit ${PROFILE_SEED_FAILED}; `;
  if (spec.saveProfile !== true) return `${seed}exec "$@"`;
  const paths = PROFILE_STATE_PATHS.map((path) => `'${path}'`).join(" ");
  // Chromium must not hold fd 5, or the server would wait on it; tar's complaints about
  // folders a site never made are not errors.
  // GNU tar's 1 is "a file changed as it was read", which it still writes whole; 2 and up are fatal.
  return `${seed}"$@" 5>&-; code=$?; cd '${browserDir}' || exit ${PROFILE_SAVE_FAILED}; tar -c -f - --ignore-failed-read ${paths} >&5 2>/dev/null; [ $? -le 1 ] || exit ${PROFILE_SAVE_FAILED}; exit $code`;
}

/**
 * The `bwrap` (bubblewrap) command line that runs Chromium in a world of its own: new user,
 * mount, PID, IPC, UTS, cgroup and network namespaces; the system read-only and only what
 * Chromium needs of it; its own `/tmp`, `/proc` and `/dev`; its profile, a capped tmpfs, as
 * the one writable place (nothing of the host is writable); no environment of the server's. The network namespace has only
 * loopback, where `socat` relays port {@link RELAY_PORT} to the egress proxy's socket: the
 * only way out. Chromium keeps its own sandbox inside (nested user namespaces), so no
 * `--no-sandbox`. `--die-with-parent` ends the sandbox when the server dies, even by SIGKILL.
 */
export function sandboxCommand(spec: SandboxSpec): { file: string; args: string[] } {
  const { layout, browserDir } = spec;
  for (const path of [browserDir, spec.proxySocket, spec.extensionsDir, ...(spec.profileSeed === undefined ? [] : [spec.profileSeed])]) {
    // socat reads its address with ':' and ',' as separators; the shell gets it as an argument.
    if (!/^\/[A-Za-z0-9._/-]+$/.test(path))
      throw new RangeError(
        `The path ${JSON.stringify(path)} cannot be given to the sandbox: use a temporary directory whose path has only letters, digits and ._-/ (TMPDIR).`,
      );
  }
  const args = [
    "--unshare-all",
    "--unshare-user",
    "--uid",
    String(SANDBOX_ID),
    "--gid",
    String(SANDBOX_ID),
    "--hostname",
    "browser",
    "--die-with-parent",
    "--clearenv",
    "--setenv",
    "HOME",
    browserDir,
    "--setenv",
    "XDG_CONFIG_HOME",
    `${browserDir}/.config`,
    "--setenv",
    "XDG_CACHE_HOME",
    `${browserDir}/.cache`,
    "--setenv",
    "TMPDIR",
    `${browserDir}/.tmp`,
    "--setenv",
    "PATH",
    "/usr/bin:/bin",
    "--ro-bind",
    "/usr",
    "/usr",
  ];
  for (const [name, target] of layout.links) args.push("--symlink", target, `/${name}`);
  for (const directory of layout.directories) args.push("--ro-bind", directory, directory);
  for (const path of layout.readOnly) args.push("--ro-bind", path, path);
  const executableDir = dirname(realpathOr(spec.executablePath));
  if (!executableDir.startsWith("/usr/")) args.push("--ro-bind", executableDir, executableDir);
  args.push(
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    // Every writable place is a tmpfs with a size, held in memory: a page filling its storage,
    // or a client its trace streams, fills only its own caps, never the host's disk or RAM.
    "--size",
    String(spec.shmBytes),
    "--tmpfs",
    "/dev/shm",
    "--size",
    String(TMP_BYTES),
    "--tmpfs",
    "/tmp",
    "--size",
    String(spec.profileBytes),
    "--tmpfs",
    browserDir,
    "--dir",
    `${browserDir}/.tmp`,
    "--size",
    String(spec.downloadBytes),
    "--tmpfs",
    spec.downloadDir,
    "--ro-bind",
    spec.extensionsDir,
    spec.extensionsDir,
    "--dir",
    "/run",
    "--ro-bind",
    spec.proxySocket,
    SANDBOX_PROXY_SOCKET,
    ...(spec.profileSeed === undefined ? [] : ["--ro-bind", spec.profileSeed, SANDBOX_PROFILE_SEED]),
    // The rest (the root bwrap builds, /dev) read-only: no uncapped place is left.
    "--remount-ro",
    "/dev",
    "--remount-ro",
    "/",
    "--chdir",
    browserDir,
    "--",
    "/bin/sh",
    "-c",
    // The relay must not hold the DevTools pipe (fds 3 and 4), or the pipe would outlive Chromium.
    `socat TCP-LISTEN:${RELAY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$1" </dev/null >/dev/null 2>&1 3>&- 4>&- 5>&- & shift; ${startScript(spec, browserDir)}`,
    "sandbox",
    SANDBOX_PROXY_SOCKET,
    spec.executablePath,
    ...spec.flags,
  );
  return { file: "bwrap", args };
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
