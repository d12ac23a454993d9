// Runs the installed @redocly/cli (its own bin, as a subprocess) with telemetry, update
// checks and colours off, so it needs no network and its output can be read.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fail } from "./output.mjs";

/** The spec package's folder: every path the CLI sees is relative to it. */
export const specDir = fileURLToPath(new URL("../..", import.meta.url));

/** The lint, bundle and docs configuration (recommended-strict plus the house rules). */
export const configPath = join(specDir, "redocly.yaml");

const require = createRequire(join(specDir, "package.json"));
let cliDir;
try {
  cliDir = dirname(require.resolve("@redocly/cli/package.json"));
} catch {
  fail("@redocly/cli is not installed in spec/node_modules.", "Run `corepack pnpm install` at the repository root.");
}
const cliBin = join(cliDir, "bin", "cli.js");

/** The Redoc bundle that ships with the CLI; the docs page loads a copy of it. */
export const redocBundle = join(cliDir, "lib", "chunks", "redoc.standalone.js");

const cliEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  REDOCLY_SUPPRESS_NOTIFICATIONS: "true",
  NO_COLOR: "1",
};
delete cliEnv.FORCE_COLOR;

/** Drops the CLI's banners (the boxed Node 20 deprecation notice) and blank runs. */
function cleanOutput(text) {
  return text
    .split("\n")
    .filter((line) => !/[║╔╚═]/.test(line))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Runs `redocly <args>` in the spec folder; `output` is stdout and stderr, cleaned for people. */
export function redocly(args) {
  const result = spawnSync(process.execPath, [cliBin, ...args], {
    cwd: specDir,
    env: cliEnv,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error) fail(`could not run redocly ${args[0]}: ${result.error.message}`);
  return {
    status: result.status,
    stdout: result.stdout ?? "",
    stderr: result.stderr ?? "",
    output: cleanOutput(`${result.stdout ?? ""}\n${result.stderr ?? ""}`),
  };
}
