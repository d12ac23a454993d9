// Child processes with a bound on their life, for commands that start processes of their
// own (npm, pnpm, npx, the reference server and its Chromium): each runs in a process group
// of its own, and a timeout or a stop ends the whole group, not only the command.
import { spawn } from "node:child_process";

/**
 * @typedef {object} GroupOptions
 * @property {string} cwd
 * @property {NodeJS.ProcessEnv} env
 * @property {number} timeoutMs the group is killed (SIGKILL) once this passes
 */

/**
 * @typedef {{ status: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, timedOut: boolean }} GroupResult
 */

/**
 * Runs a command to its end, or until `timeoutMs`; resolves whatever its exit status.
 * @param {string} command
 * @param {string[]} args
 * @param {GroupOptions} options
 * @returns {Promise<GroupResult>}
 */
export function runInGroup(command, args, { cwd, env, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, "SIGKILL");
    }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not start ${command}: ${error.message}`));
    });
    child.once("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr, timedOut });
    });
  });
}

/**
 * Runs a command and rejects unless it exits with 0 within `timeoutMs`; the error says
 * which command, where, and what it printed.
 * @param {string} command
 * @param {string[]} args
 * @param {GroupOptions} options
 * @returns {Promise<GroupResult>}
 */
export async function mustRunInGroup(command, args, options) {
  const result = await runInGroup(command, args, options);
  if (result.status !== 0) {
    const how = result.timedOut ? `timed out after ${options.timeoutMs} ms` : `exit ${result.status ?? result.signal}`;
    throw new Error(`\`${[command, ...args].join(" ")}\` failed (${how}) in ${options.cwd}:\n${result.stdout}${result.stderr}`);
  }
  return result;
}

/**
 * @typedef {object} StartedGroup
 * @property {RegExpExecArray} ready the match of `ready` in the output
 * @property {() => string} output everything printed so far (stdout and stderr)
 * @property {() => Promise<void>} stop SIGTERM to the group; SIGKILL after `graceMs` if any process is left
 */

/**
 * Starts a long-running command and resolves once its output matches `ready`. Rejects,
 * and kills the group, if the command exits first or `timeoutMs` passes.
 * @param {string} command
 * @param {string[]} args
 * @param {GroupOptions & { ready: RegExp, graceMs?: number }} options
 * @returns {Promise<StartedGroup>}
 */
export function startInGroup(command, args, { cwd, env, timeoutMs, ready, graceMs = 15_000 }) {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pid = child.pid;
  let output = "";
  const stop = async () => {
    if (pid === undefined || !groupAlive(pid)) return;
    killGroup(pid, "SIGTERM");
    // The command may exit before the processes it started (npx before the server it ran).
    const deadline = Date.now() + graceMs;
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    if (groupAlive(pid)) killGroup(pid, "SIGKILL");
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    // Once ready, the command's exit (a crash, or stop() itself) is for stop() to handle.
    const fail = (/** @type {Error} */ error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop().then(() => reject(error));
    };
    const timer = setTimeout(() => fail(new Error(`\`${[command, ...args].join(" ")}\` was not ready within ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onOutput = (/** @type {string} */ chunk) => {
      output += chunk;
      const match = ready.exec(output);
      if (match && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({ ready: match, output: () => output, stop });
      }
    };
    child.stdout.setEncoding("utf8").on("data", onOutput);
    child.stderr.setEncoding("utf8").on("data", onOutput);
    child.once("error", (error) => fail(new Error(`Could not start ${command}: ${error.message}`)));
    child.once("exit", (code, signal) => fail(new Error(`\`${[command, ...args].join(" ")}\` exited (${code ?? signal}) before it was ready:\n${output}`)));
  });
}

/**
 * @param {number | undefined} pid the group leader's pid, which is the group's id
 * @param {NodeJS.Signals} signal
 */
function killGroup(pid, signal) {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ESRCH") throw error;
  }
}

/** @param {number} pid */
function groupAlive(pid) {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}
