import { describe, expect, it } from "vitest";
import { schemaCases } from "../../../spec/test/cases/index.js";
import { loadBundled } from "../../../spec/test/load-document.js";
import type { ValidationResult } from "../src/index.js";
import * as validators from "../src/index.js";

const document = loadBundled();

type Check = (value: unknown) => ValidationResult<unknown>;
const exported = validators as unknown as Record<string, Check | undefined>;

/** A component parameter's schema, checked through the first operation that uses the parameter. */
function parameterCheck(name: string): Check {
  const ref = `#/components/parameters/${name}`;
  for (const item of Object.values<any>(document.paths)) {
    for (const operation of Object.values<any>(item)) {
      const parameters = [...(item.parameters ?? []), ...(operation?.parameters ?? [])];
      if (!operation?.operationId || !parameters.some((p: { $ref?: string }) => p.$ref === ref)) continue;
      const { in: location, name: key } = document.components.parameters[name];
      const entries = validators.operationValidators as unknown as Record<string, Record<string, Check>>;
      const entry = entries[operation.operationId]!;
      const check = entry[location === "header" ? "headers" : location]!;
      return (value) => check({ [location === "header" ? key.toLowerCase() : key]: value });
    }
  }
  throw new Error(`no operation uses ${ref}`);
}

/** The package's validator for a row's schema pointer. */
function checkFor(pointer: string): Check {
  const component = /^#\/components\/schemas\/([^/]+)$/.exec(pointer);
  if (component) {
    const check = exported[`validate${component[1]}`];
    if (!check) throw new Error(`no validate${component[1]}`);
    return check;
  }
  const parameter = /^#\/components\/parameters\/([^/]+)\/schema$/.exec(pointer);
  if (parameter) return parameterCheck(parameter[1]!);
  throw new Error(`no validator for ${pointer}`);
}

describe("the spec's rule table through the generated validators", () => {
  it.each(schemaCases.map((row) => [`${row.schema} ${row.valid ? "accepts" : "rejects"}: ${row.rule}`, row] as const))("%s", (_title, row) => {
    const result = checkFor(row.schema)(row.value);
    expect(result.ok, JSON.stringify(result)).toBe(row.valid);
    if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
  });

  it("has the type guard agree with the validator on every component row", () => {
    const disagreements = schemaCases
      .filter((row) => row.schema.startsWith("#/components/schemas/"))
      .filter((row) => {
        const name = row.schema.split("/").at(-1);
        const guard = (validators as unknown as Record<string, (value: unknown) => boolean>)[`is${name}`]!;
        return guard(row.value) !== row.valid;
      });
    expect(disagreements).toEqual([]);
  });
});
