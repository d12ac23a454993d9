// How the build reports: one line per step, and a failure that stops the build with
// what to do about it.

/** Prints `spec build FAILED: <message>` and the details, and exits 1. */
export function fail(message, details) {
  console.error(`\nspec build FAILED: ${message}`);
  if (details) console.error(details.replace(/\s+$/, ""));
  process.exit(1);
}

/** Seconds since `since` (a `performance.now()`), as `1.2s`. */
export function seconds(since) {
  return `${((performance.now() - since) / 1000).toFixed(1)}s`;
}

/** A file size for people: `12 KiB`, `1.4 MiB`. */
export function size(bytes) {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** Prints one step's line: its name, what it did, and how long it took. */
export function step(name, detail, since) {
  console.log(`  ${name.padEnd(7)} ${detail}${since === undefined ? "" : `  (${seconds(since)})`}`);
}
