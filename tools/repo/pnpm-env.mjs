// How repo scripts run the pinned pnpm (package.json `packageManager`) through corepack,
// with only Node 20.19+ and npm installed.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { delimiter, join } from "node:path";

/** Telemetry and update checks off for every tool the scripts start. */
export const quietEnv = {
  ...process.env,
  COREPACK_ENABLE_DOWNLOAD_PROMPT: "0",
  TURBO_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
};

/**
 * The environment in which `pnpm` (and turbo, which looks pnpm up on PATH) runs the
 * pinned version. corepack's shims go into `<root>/.tools/bin`, so nothing outside the
 * clone changes. Throws an Error whose message says what failed.
 */
export function pnpmEnv(root) {
  let env = quietEnv;
  const probe = spawnSync("corepack", ["pnpm", "--version"], { cwd: root, env, encoding: "utf8" });
  if (probe.status !== 0) {
    if (!/signature/i.test(probe.stderr ?? "")) {
      throw new Error(`Could not run pnpm through corepack (bundled with Node 20+): ${probe.stderr || probe.error?.message}`);
    }
    // Registry mirrors that strip npm's signing metadata make corepack refuse every
    // download; corepack still checks the tarball's integrity hash.
    console.warn("corepack could not verify pnpm's npm signature; retrying with COREPACK_INTEGRITY_KEYS=0");
    env = { ...env, COREPACK_INTEGRITY_KEYS: "0" };
  }
  const shims = join(root, ".tools", "bin");
  mkdirSync(shims, { recursive: true });
  const enable = spawnSync("corepack", ["enable", "--install-directory", shims, "pnpm"], { cwd: root, env, encoding: "utf8" });
  if (enable.status !== 0) throw new Error(`corepack enable failed: ${enable.stderr || enable.error?.message}`);
  return { ...env, PATH: `${shims}${delimiter}${env.PATH ?? ""}` };
}
