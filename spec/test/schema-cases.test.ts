import { describe, expect, it } from "vitest";
import { schemaCases } from "./cases/index.js";
import { createDocumentAjv, loadBundled } from "./load-document.js";

const document = loadBundled();
const ajv = createDocumentAjv(document);

describe("rule table against the bundled schemas", () => {
  it.each(schemaCases.map((c) => [`${c.schema} ${c.valid ? "accepts" : "rejects"}: ${c.rule}`, c] as const))("%s", (_title, row) => {
    const validate = ajv.getSchema(`openapi.json${row.schema}`);
    expect(validate, `no schema at ${row.schema}`).toBeDefined();
    const accepted = validate!(row.value);
    expect(accepted, JSON.stringify(validate!.errors)).toBe(row.valid);
  });

  it("has at least one accepted and one rejected value for every component schema", () => {
    const names = Object.keys(document.components.schemas);
    const missing = names.filter((name) => {
      const rows = schemaCases.filter((c) => c.schema === `#/components/schemas/${name}`);
      return !rows.some((c) => c.valid) || !rows.some((c) => !c.valid);
    });
    expect(missing).toEqual([]);
  });
});
