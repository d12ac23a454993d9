// A throwaway copy of the repository, for commands that rewrite files (such as
// `changeset version`) and must never touch the working tree.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/**
 * Copies what a commit of the working tree would hold (tracked files plus untracked
 * ones git does not ignore, such as a changeset not committed yet) from `root` to `dest`.
 * @param {string} root
 * @param {string} dest
 * @returns {number} how many files were copied
 */
export function copyWorkingTree(root, dest) {
  const listed = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.error || listed.status !== 0) throw new Error(`git ls-files failed in ${root}: ${listed.error?.message ?? listed.stderr}`);
  // --cached still lists tracked files deleted in the working tree.
  const files = listed.stdout.split("\0").filter((file) => file !== "" && existsSync(join(root, file)));
  for (const file of files) {
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(root, file), join(dest, file));
  }
  return files.length;
}

/**
 * Links each package's workspace dependencies into its node_modules, as `pnpm install`
 * would: `pnpm pack` reads a dependency's version there to turn `workspace:^` into a range.
 * @param {{ dir: string, manifest: Record<string, any> }[]} packages every package of the workspace copy
 */
export function linkWorkspaceDependencies(packages) {
  const dirOf = new Map(packages.map((pkg) => [pkg.manifest.name, pkg.dir]));
  for (const pkg of packages) {
    const { dependencies = {}, devDependencies = {}, peerDependencies = {}, optionalDependencies = {} } = pkg.manifest;
    for (const [name, range] of Object.entries({ ...dependencies, ...devDependencies, ...peerDependencies, ...optionalDependencies })) {
      if (typeof range !== "string" || !range.startsWith("workspace:")) continue;
      const target = dirOf.get(name);
      if (target === undefined) throw new Error(`${pkg.manifest.name} depends on ${name} (${range}), which is not in the workspace.`);
      const link = join(pkg.dir, "node_modules", name);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(relative(dirname(link), target), link, "dir");
    }
  }
}

/**
 * Copies every entry of each public package's `files` (among them what `pnpm build`
 * wrote and git ignores, such as dist/) from the working tree at `root` into the copy
 * at `dest`, so that the copy can be published without building it again.
 * @param {string} root
 * @param {string} dest
 * @param {{ relativeDir: string, manifest: Record<string, any> }[]} packages the public packages
 */
export function copyBuildOutputs(root, dest, packages) {
  for (const pkg of packages) {
    for (const entry of pkg.manifest.files ?? []) {
      const from = join(root, pkg.relativeDir, entry);
      if (!existsSync(from)) throw new Error(`${pkg.manifest.name}: ${pkg.relativeDir}/${entry} (in "files") does not exist; run \`pnpm build\` first.`);
      cpSync(from, join(dest, pkg.relativeDir, entry), { recursive: true });
    }
  }
}
