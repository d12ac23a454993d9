import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { testDatabaseFor } from "./postgres.js";

/** The server's command line, built. */
export const SERVER_BIN = fileURLToPath(new URL("../../bin/browser-service-server.mjs", import.meta.url));

// Servers started by the current test and still running. A test that fails between its
// start and its stop (a wait that never ends, an assertion) must not leave the server, or
// the browsers it launched, running: they are stopped after every test (SIGTERM, which
// closes its browsers; SIGKILL if it has not exited within 5 s).
const running = new Map<ChildProcess, Promise<unknown>>();
afterEach(async () => {
  await Promise.all(
    [...running].map(async ([child, exited]) => {
      child.kill("SIGTERM");
      const late = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(late);
    }),
  );
});

/** The server running as a child process, as a user runs it. */
export interface ChildServer {
  child: ChildProcess;
  url: string;
  /** The key the first start printed, if this start was the first. */
  printedKey: string | undefined;
  /** Everything printed to stdout so far. */
  stdout(): string;
  /** Everything printed to stderr so far. */
  stderr(): string;
  /** SIGKILL: no cleanup of any kind. */
  kill(): Promise<void>;
  /** SIGTERM, and the exit code once it has exited. */
  stop(): Promise<number | null>;
}

/**
 * Starts `browser-service-server` (the built bin) on `dataDir` and an ephemeral port of
 * 127.0.0.1, without warm browsers unless `args` asks for them (a later flag wins); under
 * `ON_POSTGRES`, on the data directory's PostgreSQL database.
 */
export async function spawnServer(dataDir: string, args: string[] = []): Promise<ChildServer> {
  const database = await testDatabaseFor(dataDir);
  const child = spawn(
    process.execPath,
    [
      SERVER_BIN,
      "--data-dir",
      dataDir,
      ...(database === undefined ? [] : ["--database", database]),
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--warm-browsers",
      "0",
      "--allow-private-network",
      ...args,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LOG_LEVEL: "warn" },
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = once(child, "exit");
  running.set(child, exited);
  void exited.then(() => running.delete(child));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        child.stdout.off("data", onData);
        resolve(match[1] as string);
      }
    };
    child.stdout.on("data", onData);
    void exited.then(([code]) => reject(new Error(`The server exited (code ${code}) before listening.\nstdout: ${stdout}\nstderr: ${stderr}`)));
  });
  return {
    child,
    url,
    printedKey: /BROWSER_SERVICE_API_KEY=(bsk_\w+)/.exec(stdout)?.[1],
    stdout: () => stdout,
    stderr: () => stderr,
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      child.kill("SIGTERM");
      const [code] = await exited;
      return code as number | null;
    },
  };
}
