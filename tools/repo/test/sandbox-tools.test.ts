import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { decideSandboxTools, ensureSandboxTools, missingSandboxTools, SANDBOX_TOOLS } from "../sandbox-tools.mjs";

type System = { platform: string; distro: string; distroName: string; isRoot: boolean; hasAptGet: boolean; hasSudo: boolean };
type Tool = { command: string; pkg: string };

const debianRoot: System = { platform: "linux", distro: "debian", distroName: "Debian GNU/Linux 12 (bookworm)", isRoot: true, hasAptGet: true, hasSudo: false };
const [bwrap, socat] = SANDBOX_TOOLS as Tool[];

const scratch = mkdtempSync(join(tmpdir(), "repo-sandbox-tools-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("missingSandboxTools", () => {
  it("looks for bwrap and socat on PATH", () => {
    expect(missingSandboxTools({ PATH: scratch })).toEqual([bwrap, socat]);
    const bin = join(scratch, "bwrap");
    writeFileSync(bin, "#!/bin/sh\n");
    chmodSync(bin, 0o755);
    expect(missingSandboxTools({ PATH: scratch })).toEqual([socat]);
  });
});

describe("decideSandboxTools", () => {
  it("goes on when both are there", () => {
    expect(decideSandboxTools({ missing: [], system: debianRoot, task: "test" }).action).toBe("ok");
  });

  it("installs only the missing Debian packages as root, after apt-get update", () => {
    expect(decideSandboxTools({ missing: [bwrap], system: debianRoot, task: "test" })).toMatchObject({
      action: "install",
      commands: [
        ["apt-get", ["update"]],
        ["apt-get", ["install", "-y", "bubblewrap"]],
      ],
    });
  });

  it("stops with the command to run where it cannot install", () => {
    const user = { ...debianRoot, isRoot: false, hasSudo: true };
    const stop = decideSandboxTools({ missing: [bwrap, socat], system: user, task: "start" });
    expect(stop.action).toBe("stop");
    expect(stop.message).toContain("sudo apt-get install -y bubblewrap socat");
    expect(stop.message).toContain("npm start again");
    const mac = decideSandboxTools({ missing: [bwrap], system: { ...user, platform: "darwin", distro: "unknown", distroName: "macOS" }, task: "start" });
    expect(mac.message).toContain("--unsafe-no-sandbox");
  });
});

describe("ensureSandboxTools", () => {
  it("runs the install commands and checks again", () => {
    const ran: string[] = [];
    let installed = false;
    const line = ensureSandboxTools({
      task: "test",
      system: debianRoot,
      missing: () => (installed ? [] : [socat]),
      run: (command: string, args: string[]) => {
        ran.push([command, ...args].join(" "));
        if (args[0] === "install") installed = true;
        return 0;
      },
      log: () => undefined,
    });
    expect(ran).toEqual(["apt-get update", "apt-get install -y socat"]);
    expect(line).toMatch(/installed just now/);
  });

  it("throws what failed when an install command fails", () => {
    expect(() => ensureSandboxTools({ task: "test", system: debianRoot, missing: () => [socat], run: () => 100, log: () => undefined })).toThrow(
      /apt-get update` failed \(exit code 100\)/,
    );
  });
});
