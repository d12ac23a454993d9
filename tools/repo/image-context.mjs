#!/usr/bin/env node
// Makes the build context of the container image (deploy/image/Dockerfile) from the built
// workspace: `pnpm deploy --prod` of @browser-service/server into <dir>/app (its dist, bin,
// migrations and assets, and only its production dependencies, from the lockfile and pnpm's
// store, offline), with the Dockerfile and .dockerignore beside it. The image then compiles
// nothing, so its base needs only `node`, and no build tool, test or .git reaches it.
//
//   pnpm build                                  # once; `npm test` and `npm start` do it
//   node tools/repo/image-context.mjs /tmp/ctx  # a new or empty folder
//   podman build -t browser-service /tmp/ctx    # or docker build
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmEnv } from "./pnpm-env.mjs";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const IMAGE_DIR = join(ROOT, "deploy", "image");

/** What `pnpm build` makes and the image needs; a context made without them would not start. */
const BUILT = ["packages/server/dist/app/cli.js", "packages/types/dist", "packages/validators/dist"];

/**
 * Makes the context in `dir` (created, or empty). Returns `dir`; throws an Error saying what
 * to do when the workspace is not built or pnpm fails.
 */
export function makeImageContext(dir, { root = ROOT, env = pnpmEnv(root), timeoutMs = 120_000 } = {}) {
  const target = resolve(dir);
  const unbuilt = BUILT.filter((path) => !existsSync(join(root, path)));
  if (unbuilt.length > 0) throw new Error(`The workspace is not built (${unbuilt.join(", ")} missing): run pnpm build first.`);
  if (existsSync(target) && readdirSync(target).length > 0) throw new Error(`${target} is not empty: give image-context.mjs a new or empty folder.`);
  mkdirSync(target, { recursive: true });
  // pnpm 10 deploys from the workspace's lockfile only with injected workspace packages;
  // set for this command alone, it changes neither the workspace nor its lockfile.
  const args = ["--config.inject-workspace-packages=true", "--filter", "@browser-service/server", "deploy", "--prod", "--offline", join(target, "app")];
  const result = spawnSync("pnpm", args, { cwd: root, env, encoding: "utf8", timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.trim().split("\n").slice(-15).join("\n");
    throw new Error(`pnpm ${args.join(" ")} failed (${result.error?.message ?? `exit code ${result.status}`}):\n${output}`);
  }
  for (const file of ["Dockerfile", ".dockerignore"]) copyFileSync(join(IMAGE_DIR, file), join(target, file));
  return target;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  if (dir === undefined) {
    console.error("usage: node tools/repo/image-context.mjs <new or empty folder>");
    process.exit(2);
  }
  try {
    const target = makeImageContext(dir);
    console.log(`Image context in ${target}. Build it with:\n  podman build -t browser-service ${target}\n(or docker build); see deploy/image/README.md.`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
