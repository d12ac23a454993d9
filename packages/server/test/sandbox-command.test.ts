import { describe, expect, it } from "vitest";
import { readSystemLayout, type SandboxSpec, sandboxCommand } from "../src/sandbox/sandbox-command.js";
import { SandboxUids, SandboxUidsExhaustedError } from "../src/sandbox/sandbox-uids.js";

const spec: SandboxSpec = {
  layout: {
    links: [
      ["bin", "usr/bin"],
      ["lib", "usr/lib"],
    ],
    directories: ["/lib64"],
    readOnly: ["/etc/fonts", "/var/cache/fontconfig"],
  },
  browserDir: "/tmp/browser-service-chromium-abc123",
  profileBytes: 4096,
  shmBytes: 8192,
  downloadDir: "/tmp/browser-service-chromium-abc123/downloads",
  downloadBytes: 1024,
  extensionsDir: "/tmp/browser-service-chromium-abc123/extensions",
  proxySocket: "/tmp/browser-service-chromium-abc123/egress.sock",
  executablePath: "/usr/bin/chromium",
  flags: ["--headless", "--user-data-dir=/tmp/browser-service-chromium-abc123"],
};

/** The arguments that follow `flag` in a bwrap command line, for every time it appears. */
function after(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((arg, index) => (arg === flag ? [args.slice(index + 1, index + 1 + count)] : []));
}

describe("sandboxCommand", () => {
  const { file, args } = sandboxCommand(spec);
  const command = args.slice(args.indexOf("--") + 1);
  const options = args.slice(0, args.indexOf("--"));

  it("unshares every namespace, clears the environment and dies with the server", () => {
    expect(file).toBe("bwrap");
    for (const flag of ["--unshare-all", "--unshare-user", "--die-with-parent", "--clearenv"]) expect(options).toContain(flag);
    // --share-net would give the browser the host's network.
    expect(options).not.toContain("--share-net");
    expect(
      after(options, "--setenv", 2)
        .map(([name]) => name)
        .sort(),
    ).toEqual(["HOME", "PATH", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"]);
    // Temporary files (trace streams among them) count against the profile's cap.
    expect(after(options, "--setenv", 2)).toContainEqual(["TMPDIR", `${spec.browserDir}/.tmp`]);
    expect(after(options, "--remount-ro")).toEqual([["/dev"], ["/"]]);
  });

  it("binds nothing of the host writable: the profile and its download folder are capped tmpfs, everything else read-only", () => {
    expect(after(options, "--bind", 2)).toEqual([]);
    expect(after(options, "--ro-bind", 2)).toEqual([
      ["/usr", "/usr"],
      ["/lib64", "/lib64"],
      ["/etc/fonts", "/etc/fonts"],
      ["/var/cache/fontconfig", "/var/cache/fontconfig"],
      [spec.extensionsDir, spec.extensionsDir],
      [spec.proxySocket, "/run/egress.sock"],
    ]);
    // The extensions folder is bound over the profile's tmpfs, so it must come after it.
    const profile = options.findIndex((arg, index) => arg === spec.browserDir && options[index - 1] === "--tmpfs");
    const extensions = options.findIndex((arg, index) => arg === spec.extensionsDir && options[index - 1] === "--ro-bind");
    expect(extensions).toBeGreaterThan(profile);
    expect(after(options, "--symlink", 2)).toEqual([
      ["usr/bin", "/bin"],
      ["usr/lib", "/lib"],
    ]);
    expect(after(options, "--tmpfs")).toEqual([["/dev/shm"], ["/tmp"], [spec.browserDir], [spec.downloadDir]]);
    // Each tmpfs has its cap, and what bwrap builds itself (its root, /dev) is read-only.
    for (const [path, size] of [
      ["/dev/shm", "8192"],
      ["/tmp", String(16 * 1024 * 1024)],
      [spec.browserDir, "4096"],
      [spec.downloadDir, "1024"],
    ] as const) {
      const at = options.findIndex((arg, index) => arg === path && options[index - 1] === "--tmpfs");
      expect(options.slice(at - 3, at)).toEqual(["--size", size, "--tmpfs"]);
    }
  });

  it("binds a Chromium outside /usr read-only with its directory", () => {
    const outside = sandboxCommand({ ...spec, executablePath: "/opt/chrome/chrome" });
    expect(after(outside.args, "--ro-bind", 2)).toContainEqual(["/opt/chrome", "/opt/chrome"]);
  });

  it("starts the relay to the egress proxy without the DevTools pipe, then runs Chromium with its flags", () => {
    expect(command.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(command[2]).toContain('socat TCP-LISTEN:1080,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"$1"');
    expect(command[2]).toContain("3>&- 4>&-");
    expect(command.slice(3)).toEqual(["sandbox", "/run/egress.sock", spec.executablePath, ...spec.flags]);
  });

  it("refuses a path socat or the shell could misread", () => {
    expect(() => sandboxCommand({ ...spec, browserDir: "/tmp/a,b" })).toThrow(RangeError);
    expect(() => sandboxCommand({ ...spec, proxySocket: "/tmp/x:y/egress.sock" })).toThrow(/TMPDIR/);
    expect(() => sandboxCommand({ ...spec, extensionsDir: "/tmp/x y/extensions" })).toThrow(RangeError);
  });

  it("reads this machine's layout: merged /usr links and the read-only paths that exist", () => {
    const layout = readSystemLayout();
    expect(layout.readOnly.every((path) => path.startsWith("/etc/") || path === "/var/cache/fontconfig")).toBe(true);
    expect([...layout.links.map(([name]) => `/${name}`), ...layout.directories]).toContain("/bin");
  });
});

describe("SandboxUids", () => {
  it("hands out each id to one browser at a time, in turn through the range, skipping real accounts", () => {
    const uids = new SandboxUids(5000, 4, new Set([5001]));
    const first = [uids.acquire(), uids.acquire(), uids.acquire()];
    expect(first).toEqual([5000, 5002, 5003]);
    expect(() => uids.acquire()).toThrow(SandboxUidsExhaustedError);
    uids.release(5002);
    // The id given back comes back only after the ids after it were offered.
    expect(uids.acquire()).toBe(5002);
    uids.release(5000);
    uids.release(5003);
    expect(uids.acquire()).toBe(5003);
    expect(uids.acquire()).toBe(5000);
  });

  it("never hands out root or an id past the largest account id", () => {
    expect(() => new SandboxUids(0, 10)).toThrow(RangeError);
    expect(() => new SandboxUids(4_294_967_290, 10)).toThrow(RangeError);
  });

  it("skips every id of /etc/passwd and /etc/group by default", () => {
    const uids = new SandboxUids(0 + 1, 1, undefined);
    // uid 1 is daemon on Debian (and bin on others); either way an account: no id is left.
    expect(() => uids.acquire()).toThrow(SandboxUidsExhaustedError);
  });
});
