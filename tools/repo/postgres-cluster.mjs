// A throwaway PostgreSQL server for tests and benchmarks: Debian's binaries, a fresh
// cluster in a temporary folder, reachable only through a Unix socket in that folder
// (no TCP port to collide with or expose), removed when stopped. PostgreSQL refuses to run
// as root, so under root the cluster belongs to the `postgres` account (or `nobody`).
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** Where Debian's `postgresql-NN` packages put their programs. */
const DEBIAN_ROOT = "/usr/lib/postgresql";

/** The folder of `initdb` and `postgres`: `PG_BIN`, else the newest Debian version; `undefined` when there is none. */
export function findPostgresBin(env = process.env) {
  if (env.PG_BIN) return existsSync(join(env.PG_BIN, "postgres")) ? env.PG_BIN : undefined;
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(DEBIAN_ROOT, name, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(DEBIAN_ROOT, versions[0], "bin");
}

/** The account the cluster runs as: this process's, or (under root) `postgres`, else `nobody`. */
function clusterAccount() {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
      const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
      return { uid, gid };
    } catch {
      // No such account: try the next.
    }
  }
  throw new Error("PostgreSQL does not run as root, and this machine has neither a postgres nor a nobody account to run it as.");
}

function run(command, args, account, output) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...(account ?? {}) });
    child.stdout.on("data", (chunk) => output.push(chunk));
    child.stderr.on("data", (chunk) => output.push(chunk));
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${command} failed (${signal ?? code}):\n${Buffer.concat(output).toString().slice(-2000)}`)),
    );
  });
}

/**
 * Starts a fresh PostgreSQL server and resolves once it accepts connections:
 * `{ socketDir, url(database), stop() }`. `url` is a `postgres://` URL of a database on it
 * (user `postgres`, no password: only this machine's processes can reach the socket, whose
 * folder is private). Durability settings are PostgreSQL's defaults except `fsync=off`:
 * a commit still waits for its write-ahead log to reach the operating system
 * (`synchronous_commit` on), so a SIGKILL of the server loses nothing acknowledged; only a
 * power loss would.
 */
export async function startPostgresCluster({ bin = findPostgresBin(), timeoutMs = 30_000 } = {}) {
  if (bin === undefined) throw new Error("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/postgres (Debian: apt-get install -y postgresql).");
  const account = clusterAccount();
  // Short: a Unix socket's path must fit in 107 bytes.
  const root = mkdtempSync("/tmp/bspg-");
  const dataDir = join(root, "data");
  if (account) chownSync(root, account.uid, account.gid);
  chmodSync(root, 0o700);
  const output = [];
  let server;
  const stop = async () => {
    if (server !== undefined && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      // SIGINT: PostgreSQL's fast shutdown (clients are disconnected, not waited for).
      server.kill("SIGINT");
      const timer = setTimeout(() => server.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await run(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"], account, output);
    server = spawn(
      join(bin, "postgres"),
      ["-D", dataDir, "-k", root, "-c", "listen_addresses=", "-c", "fsync=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB"],
      { stdio: ["ignore", "pipe", "pipe"], ...(account ?? {}) },
    );
    server.stdout.on("data", (chunk) => output.push(chunk));
    server.stderr.on("data", (chunk) => output.push(chunk));
    // The server's log stays bounded: only its last lines are kept for an error message.
    server.stderr.on("data", () => output.length > 200 && output.splice(0, output.length - 200));
    const socket = join(root, ".s.PGSQL.5432");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (server.exitCode !== null || server.signalCode !== null)
        throw new Error(`postgres exited at start:\n${Buffer.concat(output).toString().slice(-2000)}`);
      // The socket appears once the server accepts connections (after its recovery, if any).
      if (existsSync(socket) && /ready to accept connections/.test(Buffer.concat(output).toString())) break;
      if (Date.now() > deadline) throw new Error(`postgres did not start within ${timeoutMs} ms:\n${Buffer.concat(output).toString().slice(-2000)}`);
      await sleep(25);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    socketDir: root,
    url: (database = "postgres") => `postgres://postgres@localhost/${database}?host=${encodeURIComponent(root)}`,
    stop,
  };
}
