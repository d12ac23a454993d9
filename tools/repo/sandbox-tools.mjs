// The sandbox check that `npm start` and `npm test` run after the Chromium check: the server
// runs every browser inside bubblewrap (`bwrap`), with `socat` relaying its only way out,
// and refuses to start browsers without them. Where the machine can install Debian's
// packages itself it does, and says so; otherwise it stops at once with the command to run.
// The decision (`decideSandboxTools`) is pure and tested on every case
// (tools/repo/test/sandbox-tools.test.ts).
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { readSystem } from "./chromium.mjs";
import { actOnDecision, runCommand } from "./install-step.mjs";

/** The commands a browser's sandbox runs, and the Debian package of each. */
export const SANDBOX_TOOLS = [
  { command: "bwrap", pkg: "bubblewrap" },
  { command: "socat", pkg: "socat" },
];

/** Which of {@link SANDBOX_TOOLS} are missing from PATH. */
export function missingSandboxTools(env = process.env) {
  const onPath = (name) => (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, name)));
  return SANDBOX_TOOLS.filter((tool) => !onPath(tool.command));
}

/**
 * What to do about the sandbox's tools: `{ action: "ok" }`, `{ action: "install", message,
 * commands }` (Debian, root, apt-get) or `{ action: "stop", message }`.
 */
export function decideSandboxTools({ missing, system, task }) {
  if (missing.length === 0) return { action: "ok", message: `Sandbox: ${SANDBOX_TOOLS.map((tool) => tool.command).join(" and ")} found` };
  const packages = missing.map((tool) => tool.pkg);
  const what = `${missing.map((tool) => tool.command).join(" and ")} (Debian: ${packages.join(" ")})`;
  if (system.distro === "debian" && system.isRoot && system.hasAptGet) {
    return {
      action: "install",
      message: `The server runs every browser in a sandbox and needs ${what}: installing (apt-get update && apt-get install -y ${packages.join(" ")}).`,
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", ...packages]],
      ],
    };
  }
  const sudo = system.isRoot ? "" : "sudo ";
  const how =
    system.distro === "debian" || system.distro === "ubuntu"
      ? `${sudo}apt-get install -y ${packages.join(" ")}`
      : system.distro === "fedora"
        ? `${sudo}dnf install -y ${packages.join(" ")}`
        : `install ${packages.join(" and ")} with the package manager of ${system.distroName}`;
  return {
    action: "stop",
    message: [
      `The server runs every browser in a sandbox and needs ${what}, which ${missing.length === 1 ? "is" : "are"} not installed.`,
      `Run: ${how}`,
      `then run npm ${task} again.${system.platform === "linux" ? "" : " Browsers are sandboxed with Linux namespaces: on other systems start the server with --unsafe-no-sandbox (your own machine only)."}`,
    ].join("\n"),
  };
}

/** Makes sure the sandbox's tools are there; returns a line to print, or throws an Error saying what to run. */
export function ensureSandboxTools({
  task,
  env = process.env,
  system = readSystem(env),
  missing = missingSandboxTools,
  run = runCommand,
  log = console.log,
} = {}) {
  return actOnDecision(() => decideSandboxTools({ missing: missing(env), system, task }), { task, what: "the sandbox's packages", run, log });
}
