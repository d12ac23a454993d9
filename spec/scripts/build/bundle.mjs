// Step 2, bundle: `redocly bundle` to <out>/openapi.json and openapi.yaml, one
// self-contained document (no external `$ref` left, no component renamed).
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fail, size } from "./output.mjs";
import { configPath, redocly, specDir } from "./redocly.mjs";

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"];

/** The `$ref`s of a bundled document that point outside it, as `pointer: ref`. */
function externalRefs(bundled) {
  const external = [];
  (function findRefs(node, path) {
    if (Array.isArray(node)) node.forEach((item, i) => findRefs(item, `${path}/${i}`));
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && !value.startsWith("#")) external.push(`${path}: ${value}`);
        else findRefs(value, `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`);
      }
    }
  })(bundled, "#");
  return external;
}

/** Bundles `root` into `outDir`; returns the JSON bundle's path and the step's summary. */
export function bundle(root, outDir) {
  const outputs = [];
  for (const ext of ["json", "yaml"]) {
    const output = join(outDir, `openapi.${ext}`);
    const run = redocly([
      "bundle",
      root,
      "--config",
      configPath,
      "--output",
      output,
      "--ext",
      ext,
      "--lint-config",
      "error",
      "--component-renaming-conflicts-severity",
      "error",
    ]);
    if (run.status !== 0 || !existsSync(output)) fail(`redocly bundle to ${relative(specDir, output)} failed (exit ${run.status}):`, run.output);
    if (/Renamed \S+ to /.test(run.output)) fail(`redocly bundle renamed a component (two schemas share a name); give them distinct names:`, run.output);
    outputs.push(output);
  }
  const bundled = JSON.parse(readFileSync(outputs[0], "utf8"));
  const external = externalRefs(bundled);
  if (external.length > 0) fail("the bundle still has external $refs:", external.join("\n"));
  const operations = Object.values(bundled.paths ?? {}).flatMap((item) => Object.keys(item ?? {}).filter((k) => HTTP_METHODS.includes(k))).length;
  const summary = `${outputs.map((o) => `${relative(specDir, o)} (${size(statSync(o).size)})`).join(", ")}; ${operations} operations`;
  return { bundledJson: outputs[0], summary };
}
