// The reference server started as its README says, from a project that installed
// @browser-service/server by name (`npx browser-service-server`, `pnpm exec ...`), on a
// free port of 127.0.0.1, with a data folder of its own.
import { startInGroup } from "../../src/process-group.mjs";

export interface InstalledServer {
  /** Base URL, such as http://127.0.0.1:41234. */
  url: string;
  /** The org-wide API key that the first start printed. */
  apiKey: string;
  /** Everything the server printed so far, for failure messages. */
  output(): string;
  /** SIGTERM to the command and the server it started; waits until they are gone. */
  stop(): Promise<void>;
}

/**
 * Runs `command ...prefix --port 0 --data-dir <dataDir> ...args` in `cwd` and resolves
 * once the server printed its first key and its URL. `--warm-browsers 0`: browsers start
 * only when an example asks for one, on a machine whose cores the other tests share.
 */
export async function startInstalledServer(
  command: string,
  prefix: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; dataDir: string },
): Promise<InstalledServer> {
  const args = [...prefix, "--port", "0", "--data-dir", options.dataDir, "--allow-private-network", "--warm-browsers", "0"];
  const started = await startInGroup(command, args, {
    cwd: options.cwd,
    env: { ...options.env, LOG_LEVEL: "warn" },
    timeoutMs: 60_000,
    ready: /BROWSER_SERVICE_API_KEY=(\S+)[\s\S]*listening on (http:\/\/\S+)/,
  });
  return { apiKey: started.ready[1]!, url: started.ready[2]!, output: started.output, stop: started.stop };
}
