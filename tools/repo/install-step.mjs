// What `npm start` and `npm test` do with a decision about a system package (Chromium,
// the sandbox's tools): go on, stop with the command to run, or install and look again.
import { spawnSync } from "node:child_process";

/**
 * Acts on `decideNow()` (`{ action: "ok" | "install" | "stop", message, commands? }`):
 * returns the line to print, or throws an Error whose message says what to run. An
 * install runs its commands with `run` and decides again; `what` names the packages in
 * the error when they still do not work after it.
 */
export function actOnDecision(decideNow, { task, what, run = runCommand, log = console.log }) {
  const first = decideNow();
  if (first.action === "ok") return first.message;
  if (first.action === "stop") throw new Error(first.message);
  log(first.message);
  for (const [command, args] of first.commands) {
    const status = run(command, args);
    if (status !== 0) throw new Error(`\`${command} ${args.join(" ")}\` failed (exit code ${status}); fix that and run npm ${task} again.`);
  }
  const after = decideNow();
  if (after.action !== "ok") throw new Error(`After installing ${what}: ${after.message}`);
  return `${after.message}, installed just now`;
}

/** Runs a command as the user watches (apt-get without questions). */
export function runCommand(command, args) {
  console.log(`$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return result.status ?? 1;
}
