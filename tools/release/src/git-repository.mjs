// A scratch copy as a git repository of its own, because `changeset publish` tags each
// release it publishes. Git runs without the user's or the system's configuration (no
// signing, no hooks), with a fixed identity.
import { spawnSync } from "node:child_process";

/** The environment for git in a scratch repository. */
export const scratchGitEnv = {
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Release Test",
  GIT_AUTHOR_EMAIL: "release-test@127.0.0.1",
  GIT_COMMITTER_NAME: "Release Test",
  GIT_COMMITTER_EMAIL: "release-test@127.0.0.1",
};

/**
 * Runs git in `dir` and returns its stdout; throws with its output on failure.
 * @param {string} dir
 * @param {string[]} args
 */
export function git(dir, args) {
  const result = spawnSync("git", args, { cwd: dir, encoding: "utf8", timeout: 60_000, env: { ...process.env, ...scratchGitEnv } });
  if (result.error || result.status !== 0)
    throw new Error(`git ${args.join(" ")} failed in ${dir}: ${result.error?.message ?? ""}${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * Commits everything in `dir` (a new repository if it is not one yet), as a release
 * commit would after `pnpm version-packages` and a review.
 * @param {string} dir
 * @param {string} message
 */
export function commitAll(dir, message) {
  git(dir, ["init", "--quiet", "--initial-branch", "main"]);
  git(dir, ["add", "--all"]);
  git(dir, ["commit", "--quiet", "--allow-empty", "--no-verify", "--message", message]);
}
