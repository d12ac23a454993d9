// The Chromium check that `npm start` and `npm test` run before anything else: the server
// starts Chromium for every browser and most tests drive it, so without it `npm test` ran
// for minutes into failures and `npm start` served nothing but 500s. Where the machine can
// install Debian's package itself it does, and says so; otherwise it stops at once with the
// exact command to run. The decision (`decide`) is pure, so it is tested on every case
// without touching the machine (tools/repo/test/chromium.test.ts).
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { actOnDecision, runCommand } from "./install-step.mjs";

/** Where Debian's `chromium` package puts it, and what the server starts without CHROMIUM_PATH. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";

const APT_INSTALL = ["apt-get update", "apt-get install -y chromium"];

/** How long `--version` may take before the executable counts as not working. */
const VERSION_TIMEOUT_MS = 10_000;

/**
 * Whether `path` runs: `{ state: "ok", version }`, or `missing`, `not-executable`,
 * `snap-stub` (Ubuntu's `chromium`/`chromium-browser` packages only hand over to a snap,
 * which does not run without snapd, as in containers) or `broken` (with `detail`).
 */
export function probeChromium(path, { timeoutMs = VERSION_TIMEOUT_MS } = {}) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return { state: "missing" };
  }
  try {
    if (!stat.isFile()) throw new Error("not a file");
    accessSync(path, constants.X_OK);
  } catch {
    return { state: "not-executable" };
  }
  const result = spawnSync(path, ["--version"], { encoding: "utf8", timeout: timeoutMs, killSignal: "SIGKILL" });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.trim();
  if (result.status === 0 && !result.error) return { state: "ok", version: output.split("\n")[0] || "Chromium" };
  if (isSnapStub(path, output)) return { state: "snap-stub" };
  const why =
    result.error?.code === "ETIMEDOUT"
      ? `did not answer --version within ${timeoutMs / 1000} s`
      : `--version failed (exit code ${result.status ?? result.signal})`;
  return { state: "broken", detail: `${why}${output ? `: ${output.split("\n")[0]}` : ""}` };
}

/** Ubuntu's stub: a link into /snap, or a small script that runs or asks for the snap. */
function isSnapStub(path, output) {
  try {
    if (realpathSync(path).startsWith("/snap/")) return true;
  } catch {
    // Unreadable: not something to recognize.
  }
  if (/\bsnap\b/i.test(output)) return true;
  try {
    const head = readFileSync(path, { encoding: "latin1" }).slice(0, 4096);
    return head.startsWith("#!") && /\bsnap\b/.test(head);
  } catch {
    return false;
  }
}

/** The facts about this machine that decide how Chromium can be installed. */
export function readSystem(env = process.env) {
  const osRelease = {};
  try {
    for (const line of readFileSync("/etc/os-release", "utf8").split("\n")) {
      const match = /^([A-Z_]+)=(?:"(.*)"|(.*))$/.exec(line.trim());
      if (match) osRelease[match[1]] = match[2] ?? match[3] ?? "";
    }
  } catch {
    // Not Linux, or no os-release: the distribution stays unknown.
  }
  const ids = [osRelease.ID ?? "", ...(osRelease.ID_LIKE ?? "").split(/\s+/)].filter(Boolean);
  const onPath = (name) => (env.PATH ?? "").split(delimiter).some((dir) => dir !== "" && existsSync(join(dir, name)));
  return {
    platform: process.platform,
    // Ubuntu first: its derivatives (Mint, Pop!_OS) name both, and get the snap stub too.
    distro: ids.includes("ubuntu")
      ? "ubuntu"
      : ids.includes("debian")
        ? "debian"
        : ids.includes("fedora") || ids.includes("rhel")
          ? "fedora"
          : (osRelease.ID ?? "unknown"),
    distroName: osRelease.PRETTY_NAME ?? osRelease.NAME ?? process.platform,
    isRoot: process.getuid?.() === 0,
    hasAptGet: onPath("apt-get"),
    hasSudo: onPath("sudo"),
  };
}

function describe(path, probe) {
  switch (probe.state) {
    case "missing":
      return `${path} does not exist`;
    case "not-executable":
      return `${path} is not an executable file`;
    case "snap-stub":
      return `${path} is Ubuntu's stub that only hands over to the chromium snap, and the snap does not run here`;
    default:
      return `${path} does not run (${probe.detail})`;
  }
}

/** Lines telling how to get a working Chromium on this system, ending with the command to run again. */
function howToInstall(system, probe, task) {
  const again = `npm ${task}`;
  const sudo = system.isRoot ? "" : "sudo ";
  if (system.distro === "debian") {
    const commands = probe.state === "missing" ? APT_INSTALL : ["apt-get update", "apt-get install --reinstall -y chromium"];
    const how = system.isRoot ? "" : system.hasSudo ? "" : " as root";
    const line = commands.map((command) => (!system.isRoot && system.hasSudo ? sudo : "") + command).join(" && ");
    return [`${probe.state === "missing" ? "Install" : "Reinstall"} Debian's chromium package${how}: ${line}`, `then run ${again} again.`];
  }
  if (system.distro === "ubuntu") {
    return [
      "On Ubuntu the chromium package installs only a stub that hands over to the chromium snap, which does not run without",
      "snapd (as in containers), so it is not installed here. Install Google Chrome (amd64) instead:",
      `  ${sudo}sh -c 'apt-get update && apt-get install -y curl && curl -fsSLo /tmp/chrome.deb https://dl.google.com/linux/direct/google-chrome-stable_current_amd64.deb && apt-get install -y /tmp/chrome.deb'`,
      `then run CHROMIUM_PATH=/usr/bin/google-chrome-stable ${again}`,
    ];
  }
  if (system.distro === "fedora") return [`Install it: ${sudo}dnf install -y chromium`, `then run CHROMIUM_PATH=/usr/bin/chromium-browser ${again}`];
  if (system.platform === "darwin")
    return ["Install it: brew install --cask chromium", `then run CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium ${again}`];
  return [`Install Chromium with the package manager of ${system.distroName},`, `then run CHROMIUM_PATH=/path/to/chromium ${again}`];
}

/**
 * What to do about Chromium, from the probe of the executable in use and the system:
 * `{ action: "ok", message }`, `{ action: "install", message, commands }` (Debian, root,
 * apt-get available, the default path in use) or `{ action: "stop", message }`.
 * `envPath` is CHROMIUM_PATH (undefined or empty: the default path); `task` is `start` or `test`.
 */
export function decide({ envPath, probe, system, task }) {
  const path = envPath || DEFAULT_CHROMIUM_PATH;
  if (probe.state === "ok") return { action: "ok", message: `Chromium: ${probe.version} (${path})` };
  const problem = describe(path, probe);
  if (envPath) {
    // The user chose this executable; installing another would not change what is used.
    return {
      action: "stop",
      message: [`CHROMIUM_PATH=${envPath}, but ${problem}.`, `Point CHROMIUM_PATH at a working Chromium, or unset it to use ${DEFAULT_CHROMIUM_PATH}.`].join(
        "\n",
      ),
    };
  }
  if (system.distro === "debian" && system.isRoot && system.hasAptGet && probe.state === "missing") {
    return {
      action: "install",
      message: `${problem}: installing Debian's chromium package (${APT_INSTALL.join(" && ")}); the server and the tests start it.`,
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", "chromium"]],
      ],
    };
  }
  return { action: "stop", message: [`The server and the tests need Chromium, but ${problem}.`, ...howToInstall(system, probe, task)].join("\n") };
}

/**
 * Makes sure a working Chromium is there before `task` (`start` or `test`) goes on:
 * returns its description, or throws an Error whose message says what to run. Every
 * dependency can be replaced (tests do).
 */
export function ensureChromium({ task, env = process.env, system = readSystem(env), probe = probeChromium, run = runCommand, log = console.log } = {}) {
  const envPath = env.CHROMIUM_PATH;
  const path = envPath || DEFAULT_CHROMIUM_PATH;
  return actOnDecision(() => decide({ envPath, probe: probe(path), system, task }), { task, what: "the chromium package", run, log });
}
