import { describe, expect, it } from "vitest";
import { assertManagedAuth, assertRegion, isRegion, ValidationError, validateManagedAuth, validateRegion } from "../src/index.js";

const connection = {
  id: "conn_1",
  profile_name: "acme-admin",
  domain: "app.acme.example.com",
  status: "AUTHENTICATED",
  save_credentials: true,
  record_session: false,
};

describe("validateX", () => {
  it("returns the value itself, typed, when it is valid", () => {
    const result = validateManagedAuth(connection);
    expect(result).toEqual({ ok: true, value: connection });
    if (result.ok) expect(result.value).toBe(connection);
  });

  it("returns a fresh list of issues on every call", () => {
    const first = validateRegion("mars");
    const second = validateRegion(1);
    expect(first.ok || first.errors.map((i) => i.rule)).toEqual(["enum"]);
    expect(second.ok || second.errors.map((i) => i.rule)).toEqual(["type", "enum"]);
  });
});

describe("isX", () => {
  it("tells whether a value is valid", () => {
    expect(isRegion("eu-west")).toBe(true);
    expect(isRegion("mars")).toBe(false);
  });
});

describe("assertX", () => {
  it("returns quietly for a valid value", () => {
    expect(() => assertManagedAuth(connection)).not.toThrow();
  });

  it("throws a ValidationError carrying every issue", () => {
    const error = (() => {
      try {
        assertManagedAuth({ ...connection, id: 1, status: "x", extra: true });
      } catch (thrown) {
        return thrown;
      }
      throw new Error("assertManagedAuth did not throw");
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(Error);
    const { name, code, issues, message } = error as ValidationError;
    expect({ name, code }).toEqual({ name: "ValidationError", code: "validation_failed" });
    expect(issues).toEqual([
      { pointer: "/extra", rule: "additionalProperties", message: "/extra is not an allowed property." },
      { pointer: "/id", rule: "type", message: "/id must be a string." },
      { pointer: "/status", rule: "enum", message: '/status must be one of "AUTHENTICATED" or "NEEDS_AUTH".' },
    ]);
    expect(message).toBe(
      'Validation failed with 3 issues: /extra is not an allowed property. /id must be a string. /status must be one of "AUTHENTICATED" or "NEEDS_AUTH".',
    );
  });

  it("summarises one issue, and only the first few of many", () => {
    expect(() => assertRegion("mars")).toThrow('Validation failed: The value must be one of "us-east", "eu-west" or "ap-southeast".');
    const many = new ValidationError(["/a", "/b", "/c", "/d", "/e"].map((pointer) => ({ pointer, rule: "required", message: `${pointer} is required.` })));
    expect(many.message).toBe("Validation failed with 5 issues: /a is required. /b is required. /c is required. (and 2 more)");
  });
});
