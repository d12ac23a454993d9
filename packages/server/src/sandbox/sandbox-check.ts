import { execFile } from "node:child_process";

/** Whether browsers can be sandboxed here, and why not. */
export type SandboxCheck =
  | { usable: true /** Such as `bubblewrap 0.8.0`. */; version: string }
  | { usable: false /** One sentence: the cause and the fix. */; problem: string };

/** What to install, said once wherever the sandbox's tools are missing. */
export const SANDBOX_PACKAGES = "bubblewrap socat";

/**
 * Checks, quickly and without starting a browser, that a browser's sandbox can be set up:
 * Linux, `bwrap` (bubblewrap) that can create user and network namespaces as the account
 * browsers run as (`runAs`, when the server is root), and `socat` for the egress relay.
 */
export async function checkSandbox(runAs?: { uid: number; gid: number }, timeoutMs = 5_000): Promise<SandboxCheck> {
  if (process.platform !== "linux") {
    return {
      usable: false,
      problem: `browsers are sandboxed with Linux namespaces, and this is ${process.platform}; run the server on Linux, or pass --unsafe-no-sandbox on your own machine`,
    };
  }
  const install = `install ${SANDBOX_PACKAGES} (Debian: apt-get install -y ${SANDBOX_PACKAGES}), or pass --unsafe-no-sandbox on your own machine`;
  const version = await run("bwrap", ["--version"], timeoutMs);
  if (!version.ok) return { usable: false, problem: `bubblewrap (bwrap) is not installed or does not run (${version.output}); ${install}` };
  const socat = await run("socat", ["-V"], timeoutMs);
  if (!socat.ok) return { usable: false, problem: `socat is not installed or does not run (${socat.output}); ${install}` };
  // What each browser's sandbox does first: its own namespaces, host name, /proc and /dev.
  // A container's default seccomp profile refuses the host name, a masked /proc the mount.
  const probe = await run(
    "bwrap",
    [
      "--unshare-all",
      "--unshare-user",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      "--hostname",
      "sandbox-check",
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      "/bin/true",
    ],
    timeoutMs,
    runAs,
  );
  if (!probe.ok) {
    return {
      usable: false,
      problem:
        `bubblewrap cannot set up a sandbox here (${probe.output}); allow unprivileged user namespaces ` +
        "(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0; " +
        "in a container, run it with --security-opt seccomp=unconfined and --security-opt unmask=/proc/*, or as privileged), or pass --unsafe-no-sandbox on your own machine",
    };
  }
  return { usable: true, version: version.output.split("\n")[0]?.trim() || "bubblewrap" };
}

function run(file: string, args: string[], timeoutMs: number, runAs?: { uid: number; gid: number }): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, killSignal: "SIGKILL", encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }, ...(runAs ?? {}) },
      (error, stdout, stderr) => {
        const output = (stderr || stdout).trim().split("\n").slice(-1)[0] ?? "";
        if (error === null) resolve({ ok: true, output: stdout.trim() });
        else resolve({ ok: false, output: (error as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : output || error.message });
      },
    );
  });
}

/** What the server says at start about browsers' sandbox and network, in one line. */
export function sandboxCheckLine(check: SandboxCheck, launcher: { sandboxed: boolean; allowPrivateNetwork: boolean }): string {
  const network = launcher.allowPrivateNetwork
    ? "they may reach loopback, private and link-local addresses and this host (--allow-private-network)"
    : "they reach only public addresses (--allow-private-network to let them reach this host and its private network)";
  if (!launcher.sandboxed) {
    return `WARNING: browsers run WITHOUT a sandbox (--unsafe-no-sandbox): whoever holds a browser's token or a key of its project can read what this server's account reads; ${network}. For a developer's own machine only.`;
  }
  if (!check.usable)
    return `Browsers cannot start: ${check.problem}. POST /browsers answers 503 browser_unavailable until this is fixed and the server restarts.`;
  return `Browsers run sandboxed, each in namespaces and an account of its own (${check.version}); ${network}.`;
}
