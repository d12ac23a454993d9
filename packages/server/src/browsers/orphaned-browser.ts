import { readFileSync, rmSync } from "node:fs";

/**
 * Ends a browser left running by a server that died without closing it, and removes its
 * profile. The pid is trusted only while `/proc/<pid>/cmdline` still names the browser's
 * own profile directory, so a recycled pid of an unrelated process is never signalled.
 */
export function endOrphanedBrowser(pid: number | null, userDataDir: string | null): void {
  if (pid !== null && userDataDir !== null && commandLineOf(pid)?.includes(`--user-data-dir=${userDataDir}`)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    }
  }
  if (userDataDir !== null) rmSync(userDataDir, { recursive: true, force: true, maxRetries: 3 });
}

function commandLineOf(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch (error) {
    // No such process, or no /proc on this system: nothing to signal safely.
    if (["ENOENT", "ESRCH", "EACCES"].includes((error as NodeJS.ErrnoException).code ?? "")) return undefined;
    throw error;
  }
}
