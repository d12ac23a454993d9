// Starting a server the benches measure as a child process, as users run it: the
// reference server's bin, or any script that prints "listening on http://…".
import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../packages/server/bin/browser-service-server.mjs", import.meta.url));

/**
 * Runs `node <args>` and resolves once it prints its URL: `{ child, url, out, exited }`,
 * `out()` being everything it printed so far. `stdin`, when given, is written and closed.
 */
export async function startListening(args, { stdin, env = {} } = {}) {
  const child = spawn(process.execPath, args, {
    stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "inherit"],
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
  });
  if (stdin !== undefined) child.stdin.end(stdin);
  let out = "";
  child.stdout.setEncoding("utf8");
  const exited = once(child, "exit");
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    exited.then(([code]) => reject(new Error(`${args.join(" ")} exited with ${code} before listening:\n${out}`)));
  });
  return { child, url, out: () => out, exited };
}

/**
 * Starts `browser-service-server` on a fresh `dataDir` and an ephemeral port of
 * 127.0.0.1 with `flags`; resolves with `{ child, url, key, exited }`, `key` being the
 * org-wide API key its first start printed, and `out()`, everything it printed so far.
 */
export async function startServerProcess(dataDir, flags = [], env = {}) {
  const started = await startListening([bin, "--data-dir", dataDir, "--port", "0", "--host", "127.0.0.1", ...flags], { env });
  const key = /BROWSER_SERVICE_API_KEY=(bsk_\w+)/.exec(started.out())?.[1];
  if (!key) throw new Error("the server's first start printed no API key");
  return { child: started.child, url: started.url, key, exited: started.exited, out: started.out };
}
