import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { DEFAULT_CHROMIUM_PATH, decide, ensureChromium, probeChromium } from "../chromium.mjs";

type System = { platform: string; distro: string; distroName: string; isRoot: boolean; hasAptGet: boolean; hasSudo: boolean };
type Probe = { state: string; version?: string; detail?: string };

const debianRoot: System = { platform: "linux", distro: "debian", distroName: "Debian GNU/Linux 12 (bookworm)", isRoot: true, hasAptGet: true, hasSudo: false };
const missing: Probe = { state: "missing" };
const working: Probe = { state: "ok", version: "Chromium 140.0.7339.80 built on Debian" };

const scratch = mkdtempSync(join(tmpdir(), "repo-chromium-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** An executable shell script standing in for Chromium. */
function script(name: string, body: string, mode = 0o755): string {
  const path = join(scratch, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, mode);
  return path;
}

describe("probeChromium", () => {
  it("reads the version of an executable that answers --version", () => {
    expect(probeChromium(script("chromium-ok", 'echo "Chromium 140.0.7339.80 built on Debian"'))).toEqual({
      state: "ok",
      version: "Chromium 140.0.7339.80 built on Debian",
    });
  });

  it("tells a missing path, a file that is not executable and a directory apart", () => {
    expect(probeChromium(join(scratch, "nothing-here"))).toEqual({ state: "missing" });
    expect(probeChromium(script("not-executable", "echo hi", 0o644))).toEqual({ state: "not-executable" });
    expect(probeChromium(scratch)).toEqual({ state: "not-executable" });
  });

  it("recognizes Ubuntu's snap stub by what it says, or by its script naming snap", () => {
    const stub = script("chromium-browser", "echo \"Command '/usr/bin/chromium-browser' requires the chromium snap to be installed.\" >&2\nexit 1");
    expect(probeChromium(stub)).toEqual({ state: "snap-stub" });
    expect(probeChromium(script("chromium-wrapper", "exit 1 # runs: snap run chromium"))).toEqual({ state: "snap-stub" });
  });

  it("reports an executable that fails on --version, with its first line of output", () => {
    expect(probeChromium(script("chromium-broken", 'echo "error while loading shared libraries: libnss3.so" >&2\nexit 127'))).toEqual({
      state: "broken",
      detail: "--version failed (exit code 127): error while loading shared libraries: libnss3.so",
    });
  });

  it("gives up on an executable that never answers --version", () => {
    expect(probeChromium(script("chromium-stuck", "exec sleep 60"), { timeoutMs: 500 })).toEqual({
      state: "broken",
      detail: "did not answer --version within 0.5 s",
    });
  });
});

describe("decide", () => {
  it("goes on with a working Chromium", () => {
    expect(decide({ envPath: undefined, probe: working, system: debianRoot, task: "test" })).toEqual({
      action: "ok",
      message: `Chromium: ${working.version} (${DEFAULT_CHROMIUM_PATH})`,
    });
  });

  it("installs Debian's package as root with apt-get, saying so", () => {
    const decision = decide({ envPath: undefined, probe: missing, system: debianRoot, task: "test" });
    expect(decision).toMatchObject({
      action: "install",
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", "chromium"]],
      ],
    });
    expect(decision.message).toContain("installing Debian's chromium package");
  });

  it("stops with the exact command where it cannot install: not root, no apt-get", () => {
    const withSudo = decide({ envPath: undefined, probe: missing, system: { ...debianRoot, isRoot: false, hasSudo: true }, task: "test" });
    expect(withSudo.action).toBe("stop");
    expect(withSudo.message).toContain("sudo apt-get update && sudo apt-get install -y chromium\nthen run npm test again.");
    const noSudo = decide({ envPath: undefined, probe: missing, system: { ...debianRoot, isRoot: false }, task: "start" });
    expect(noSudo.message).toContain("Install Debian's chromium package as root: apt-get update && apt-get install -y chromium\nthen run npm start again.");
    expect(decide({ envPath: undefined, probe: missing, system: { ...debianRoot, hasAptGet: false }, task: "test" }).action).toBe("stop");
  });

  it("does not reinstall over a broken Chromium, and says how", () => {
    const decision = decide({ envPath: undefined, probe: { state: "broken", detail: "--version failed (exit code 127)" }, system: debianRoot, task: "test" });
    expect(decision.action).toBe("stop");
    expect(decision.message).toContain("/usr/bin/chromium does not run (--version failed (exit code 127))");
    expect(decision.message).toContain("apt-get install --reinstall -y chromium");
  });

  it("does not install Ubuntu's snap stub, says why, and gives a command that installs a real Chromium", () => {
    for (const probe of [missing, { state: "snap-stub" }]) {
      const decision = decide({ envPath: undefined, probe, system: { ...debianRoot, distro: "ubuntu", distroName: "Ubuntu 24.04 LTS" }, task: "test" });
      expect(decision.action).toBe("stop");
      expect(decision.message).toContain("hands over to the chromium snap");
      expect(decision.message).toContain("then run CHROMIUM_PATH=/usr/bin/google-chrome-stable npm test");
    }
  });

  it("never installs over a CHROMIUM_PATH the user chose", () => {
    const decision = decide({ envPath: "/opt/chrome/chrome", probe: missing, system: debianRoot, task: "test" });
    expect(decision).toEqual({
      action: "stop",
      message:
        "CHROMIUM_PATH=/opt/chrome/chrome, but /opt/chrome/chrome does not exist.\nPoint CHROMIUM_PATH at a working Chromium, or unset it to use /usr/bin/chromium.",
    });
  });

  it("names the package manager's command on other systems", () => {
    const system = { ...debianRoot, isRoot: false, hasAptGet: false };
    expect(decide({ envPath: undefined, probe: missing, system: { ...system, distro: "fedora" }, task: "test" }).message).toContain(
      "sudo dnf install -y chromium",
    );
    expect(decide({ envPath: undefined, probe: missing, system: { ...system, platform: "darwin", distro: "unknown" }, task: "test" }).message).toContain(
      "brew install --cask chromium",
    );
    expect(decide({ envPath: undefined, probe: missing, system: { ...system, distro: "arch", distroName: "Arch Linux" }, task: "test" }).message).toContain(
      "package manager of Arch Linux",
    );
  });
});

describe("ensureChromium", () => {
  const quiet = () => undefined;

  it("runs apt-get update and install, then checks again", () => {
    const probes = [missing, working];
    const ran: string[] = [];
    const result = ensureChromium({
      task: "test",
      env: {},
      system: debianRoot,
      probe: () => probes.shift(),
      run: (command: string, args: string[]) => (ran.push([command, ...args].join(" ")), 0),
      log: quiet,
    });
    expect(ran).toEqual(["apt-get update", "apt-get install -y chromium"]);
    expect(result).toBe(`Chromium: ${working.version} (${DEFAULT_CHROMIUM_PATH}), installed just now`);
  });

  it("stops when apt-get fails, or when the installed Chromium still does not run", () => {
    expect(() => ensureChromium({ task: "test", env: {}, system: debianRoot, probe: () => missing, run: () => 100, log: quiet })).toThrow(
      "`apt-get update` failed (exit code 100); fix that and run npm test again.",
    );
    expect(() => ensureChromium({ task: "test", env: {}, system: debianRoot, probe: () => missing, run: () => 0, log: quiet })).toThrow(
      /^After installing the chromium package: /,
    );
  });

  it("uses CHROMIUM_PATH, and an empty one as unset", () => {
    const seen: string[] = [];
    const probe = (path: string) => (seen.push(path), working);
    ensureChromium({ task: "start", env: { CHROMIUM_PATH: "/opt/chromium" }, system: debianRoot, probe, log: quiet });
    ensureChromium({ task: "start", env: { CHROMIUM_PATH: "" }, system: debianRoot, probe, log: quiet });
    expect(seen).toEqual(["/opt/chromium", DEFAULT_CHROMIUM_PATH]);
  });
});
