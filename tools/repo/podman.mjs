// The check that `npm test` runs for the container image's test (tools/repo/test/image.test.ts):
// it builds deploy/image/Dockerfile with Podman on a base it makes itself (mmdebstrap) and
// runs it with runc, offline from any image registry. Where the machine can install Debian's
// packages itself it does, and says so, as for the sandbox's tools. Unlike Chromium or the
// sandbox, nothing else needs these, so where they cannot be installed `npm test` goes on and
// that one test is skipped with a note saying what to run. The decision (`decidePodman`) is
// pure and tested on every case (in tools/repo/test/image.test.ts).
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { readSystem } from "./chromium.mjs";
import { actOnDecision, runCommand } from "./install-step.mjs";

/** What the image test runs, and the Debian package of each. */
export const PODMAN_TOOLS = [
  { command: "podman", pkg: "podman" },
  // crun, Podman's default, refuses hybrid cgroup hosts (v1 controllers beside a v2 mount).
  { command: "runc", pkg: "runc" },
  // The container's network without netavark's bridge, firewall rules and IP forwarding on the host.
  { command: "slirp4netns", pkg: "slirp4netns" },
  // Makes the stand-in for node:20-bookworm-slim from Debian's mirror.
  { command: "mmdebstrap", pkg: "mmdebstrap" },
];

/** Where Debian puts the tools when PATH (a non-login root shell, CI) leaves sbin out. */
const SYSTEM_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/** Which of {@link PODMAN_TOOLS} are missing. */
export function missingPodmanTools(env = process.env) {
  const dirs = [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...SYSTEM_DIRS];
  return PODMAN_TOOLS.filter((tool) => !dirs.some((dir) => existsSync(join(dir, tool.command))));
}

/**
 * What to do: `{ action: "ok", message }`, `{ action: "install", message, commands }` (Debian,
 * root, apt-get) or `{ action: "stop", message }`. The image test runs Podman as root (its
 * own storage in a temporary folder), so it needs root even when the tools are there.
 */
export function decidePodman({ missing, system }) {
  const skipped = "the container image's test (tools/repo/test/image.test.ts) is skipped";
  if (!system.isRoot) {
    return {
      action: "stop",
      message: `The image test builds and runs the image with Podman as root, and this is not root: ${skipped}. Run npm test as root on Debian to include it.`,
    };
  }
  if (missing.length === 0) return { action: "ok", message: `Image test: ${PODMAN_TOOLS.map((tool) => tool.command).join(", ")} found` };
  const packages = missing.map((tool) => tool.pkg);
  const what = `${missing.map((tool) => tool.command).join(", ")} (Debian: ${packages.join(" ")})`;
  if (system.distro === "debian" && system.hasAptGet) {
    return {
      action: "install",
      message: `The container image's test builds and runs it with ${what}: installing (apt-get update && apt-get install -y ${packages.join(" ")}).`,
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", ...packages]],
      ],
    };
  }
  const how =
    system.distro === "debian" || system.distro === "ubuntu"
      ? `apt-get install -y ${packages.join(" ")}`
      : `install ${packages.join(", ")} with the package manager of ${system.distroName}`;
  return { action: "stop", message: `The container image's test needs ${what}, which cannot be installed here: ${skipped}. To include it, run: ${how}` };
}

/**
 * Makes sure the image test's tools are there, installing them where it can. Never throws:
 * resolves to `{ ready, message }`, `ready` false with the reason the test is skipped.
 */
export function ensurePodman({ env = process.env, system = readSystem(env), missing = missingPodmanTools, run = runCommand, log = console.log } = {}) {
  try {
    const message = actOnDecision(() => decidePodman({ missing: missing(env), system }), { task: "test", what: "Podman", run, log });
    return { ready: true, message };
  } catch (error) {
    const message = error.message;
    return {
      ready: false,
      message: /skipped/.test(message) ? message : `${message}\nUntil then the container image's test (tools/repo/test/image.test.ts) is skipped.`,
    };
  }
}
