import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { decidePostgres, ensurePostgres } from "../postgres.mjs";
// @ts-expect-error: a plain .mjs script of the repo, without type declarations.
import { findPostgresBin } from "../postgres-cluster.mjs";

const debianRoot = { platform: "linux", distro: "debian", distroName: "Debian GNU/Linux 12 (bookworm)", isRoot: true, hasAptGet: true, hasSudo: false };

describe("decidePostgres", () => {
  it("goes on when the binaries are there", () => {
    expect(decidePostgres({ bin: "/usr/lib/postgresql/15/bin", system: debianRoot, task: "test" })).toMatchObject({ action: "ok" });
  });

  it("installs Debian's package as root, after telling it not to create a system cluster", () => {
    const decision = decidePostgres({ bin: undefined, system: debianRoot, task: "test" });
    expect(decision.action).toBe("install");
    expect(decision.commands[0][1][1]).toContain("create_main_cluster = false");
    expect(decision.commands.slice(1)).toEqual([
      ["apt-get", ["update"]],
      ["apt-get", ["install", "-y", "-o", "Dpkg::Options::=--force-confold", "postgresql"]],
    ]);
  });

  it("stops with the command to run where it cannot install", () => {
    const stop = decidePostgres({ bin: undefined, system: { ...debianRoot, isRoot: false, hasSudo: true }, task: "test" });
    expect(stop.action).toBe("stop");
    expect(stop.message).toContain("sudo apt-get install -y postgresql");
    expect(stop.message).toContain("npm test again");
  });
});

describe("ensurePostgres", () => {
  it("installs, then finds the binaries", () => {
    const ran: string[] = [];
    let installed = false;
    const line = ensurePostgres({
      task: "test",
      system: debianRoot,
      find: () => (installed ? "/usr/lib/postgresql/15/bin" : undefined),
      run: (command: string, args: string[]) => {
        ran.push(command);
        if (args[0] === "install") installed = true;
        return 0;
      },
      log: () => undefined,
    });
    expect(ran).toEqual(["sh", "apt-get", "apt-get"]);
    expect(line).toMatch(/installed just now/);
  });
});

describe("findPostgresBin", () => {
  it("takes PG_BIN only when it holds postgres", () => {
    expect(findPostgresBin({ PG_BIN: "/nonexistent" })).toBeUndefined();
  });
});
