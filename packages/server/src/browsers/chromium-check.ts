import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";

/** Whether browsers can start with a Chromium executable, and why not. */
export type ChromiumCheck =
  | { usable: true; executablePath: string /** First line of `--version`, such as `Chromium 140.0.7339.80`. */; version: string }
  | { usable: false; executablePath: string /** What is wrong, as the end of a sentence naming the path. */; problem: string };

/** The one line the server prints at start about {@link ChromiumCheck}. */
export function chromiumCheckLine(check: ChromiumCheck): string {
  if (check.usable) return `Browsers can start: ${check.version} at ${check.executablePath}.`;
  return (
    `Browsers cannot start: ${check.executablePath} ${check.problem}. POST /browsers answers 503 browser_unavailable until ` +
    "Chromium is installed (Debian: apt-get install -y chromium) or CHROMIUM_PATH names a working one, and the server restarts."
  );
}

/**
 * Checks, quickly, that `executablePath` is an executable file that answers `--version`
 * within `timeoutMs`. It does not start a browser: a Chromium that passes can still fail
 * to launch (POST /browsers then says so), but a missing or broken one is caught at start
 * instead of at the first request.
 */
export async function checkChromium(executablePath: string, timeoutMs = 5_000): Promise<ChromiumCheck> {
  const unusable = (problem: string): ChromiumCheck => ({ usable: false, executablePath, problem });
  try {
    if (!(await stat(executablePath)).isFile()) return unusable("is not a file");
    await access(executablePath, constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return unusable(code === "ENOENT" ? "does not exist" : code === "EACCES" ? "is not executable" : `cannot be read (${code ?? (error as Error).message})`);
  }
  return new Promise((resolve) => {
    execFile(executablePath, ["--version"], { timeout: timeoutMs, killSignal: "SIGKILL", encoding: "utf8" }, (error, stdout, stderr) => {
      const firstLine = (text: string) =>
        text
          .split("\n")
          .find((line) => line.trim() !== "")
          ?.trim() ?? "";
      if (error === null) resolve({ usable: true, executablePath, version: firstLine(stdout) || "Chromium (version not printed)" });
      else if (error.killed) resolve(unusable(`did not answer --version within ${timeoutMs} ms`));
      else resolve(unusable(`failed on --version (exit code ${error.code ?? "none"}${firstLine(stderr || stdout) ? `: ${firstLine(stderr || stdout)}` : ""})`));
    });
  });
}
