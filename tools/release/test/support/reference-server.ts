// The reference server as a user starts it: the command of the installed
// @browser-service/server package, on a free port, with its own data directory.
import { spawn } from "node:child_process";

export interface RunningServer {
  /** Base URL, such as http://127.0.0.1:41234. */
  url: string;
  /** The org-wide API key that the first start printed. */
  apiKey: string;
  /** Everything the server printed so far, for failure messages. */
  output(): string;
  /** SIGTERM, then waits for the process to exit. */
  stop(): Promise<void>;
}

/** Starts `node <bin> --port 0 ...` and resolves once it printed its first key and its URL. */
export function startReferenceServer(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, "--port", "0", ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const onOutput = (chunk: string) => {
      output += chunk;
      const apiKey = /BROWSER_SERVICE_API_KEY=(\S+)/.exec(output)?.[1];
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      if (apiKey === undefined || url === undefined) return;
      resolve({
        url,
        apiKey,
        output: () => output,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    };
    child.stdout.setEncoding("utf8").on("data", onOutput);
    child.stderr.setEncoding("utf8").on("data", onOutput);
    child.once("error", reject);
    child.once("exit", (code, signal) => reject(new Error(`The reference server exited (${code ?? signal}) before it was ready:\n${output}`)));
  });
}
