// Child processes for the release checks: started without a shell, output collected, and
// a failure that says which command failed and what it printed.
import { spawn } from "node:child_process";

/**
 * @typedef {{ status: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }} RunResult
 */

/**
 * Runs a command to its end; resolves whatever its exit status.
 * @param {string} command
 * @param {string[]} args
 * @param {import("node:child_process").SpawnOptions} [options]
 * @returns {Promise<RunResult>}
 */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr?.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    child.once("error", (error) => reject(new Error(`Could not start ${command}: ${error.message}`)));
    child.once("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

/**
 * Runs a command and rejects unless it exits with 0.
 * @param {string} command
 * @param {string[]} args
 * @param {import("node:child_process").SpawnOptions} [options]
 * @returns {Promise<RunResult>}
 */
export async function mustRun(command, args, options = {}) {
  const result = await run(command, args, options);
  if (result.status !== 0) {
    throw new Error(
      `\`${[command, ...args].join(" ")}\` failed (exit ${result.status ?? result.signal}) in ${options.cwd ?? process.cwd()}:\n${result.stdout}${result.stderr}`,
    );
  }
  return result;
}

/**
 * The environment of a user's shell, for npm run on behalf of a consumer: without the
 * `npm_*` variables that pnpm sets for scripts (they carry the workspace's .npmrc, such as
 * engine-strict, and would make npm behave differently from a user's).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {NodeJS.ProcessEnv}
 */
export function userEnv(env = process.env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/^npm_/i.test(name)));
}
