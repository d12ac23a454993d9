// A real npm registry for the release test, bounded: Verdaccio in a child process of its
// own (verdaccio-server.mjs), on 127.0.0.1, with one user whose token can publish.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const entry = fileURLToPath(new URL("./verdaccio-server.mjs", import.meta.url));

/**
 * @typedef {object} LocalRegistry
 * @property {string} url base URL with its final slash, such as `http://127.0.0.1:41234/`
 * @property {string} token auth token of the registry's one user, allowed to publish
 * @property {() => string} output everything the registry printed, for failure messages
 * @property {() => Promise<void>} stop SIGTERM, SIGKILL after `graceMs`, then waits for the exit
 */

/**
 * Starts Verdaccio with its storage in `dir` and creates a user. Rejects (and kills the
 * registry) if it is not ready within `readyTimeoutMs`.
 * @param {string} dir an empty folder the registry may own
 * @param {{ readyTimeoutMs?: number, graceMs?: number }} [options]
 * @returns {Promise<LocalRegistry>}
 */
export async function startLocalRegistry(dir, { readyTimeoutMs = 60_000, graceMs = 5_000 } = {}) {
  // stdin stays a pipe: the registry exits when it closes, so it cannot outlive this process.
  const child = spawn(process.execPath, [entry, dir], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    }
  };

  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`The registry was not ready within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
      const onOutput = (/** @type {string} */ chunk) => {
        output += chunk;
        const listening = /verdaccio listening on (http:\/\/\S+\/)/.exec(output);
        if (listening) {
          clearTimeout(timer);
          resolve(listening[1]);
        }
      };
      child.stdout.setEncoding("utf8").on("data", onOutput);
      child.stderr.setEncoding("utf8").on("data", onOutput);
      child.once("error", (error) => reject(new Error(`Could not start the registry: ${error.message}`)));
      child.once("exit", (code, signal) => reject(new Error(`The registry exited (${code ?? signal}) before it was ready:\n${output}`)));
    });
    const token = await createUser(String(url));
    return { url: String(url), token, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Registers a user as `npm adduser` does and returns the token the registry issued.
 * @param {string} url
 */
async function createUser(url) {
  const name = "release-test";
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ _id: `org.couchdb.user:${name}`, name, password: randomBytes(18).toString("base64url"), type: "user", roles: [] }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = await response.json();
  if (response.status !== 201 || typeof body.token !== "string")
    throw new Error(`Creating a registry user answered ${response.status}: ${JSON.stringify(body)}`);
  return body.token;
}
