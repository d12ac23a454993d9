// The root package's scripts as steps, so that the release test runs the repository's
// own release commands rather than a copy of them that could drift.

/**
 * The commands of a package script, in order: `a && b` is `["a", "b"]`.
 * @param {Record<string, any>} manifest a package.json
 * @param {string} name the script's name
 * @returns {string[]}
 */
export function scriptSteps(manifest, name) {
  const script = manifest.scripts?.[name];
  if (typeof script !== "string") throw new Error(`package.json has no "${name}" script.`);
  if (/[;|`$]|\|\||\n/.test(script)) throw new Error(`The "${name}" script (${script}) is more than commands joined with &&.`);
  return script.split("&&").map((step) => step.trim());
}
