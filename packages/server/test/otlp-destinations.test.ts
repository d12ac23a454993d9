import { describe, expect, it } from "vitest";
import { OtlpDestinationsError, parseOtlpDestinations } from "../src/telemetry/otlp-destinations.js";

const parse = (value: unknown) => parseOtlpDestinations(JSON.stringify(value), "destinations.json");
const refusal = (value: unknown) => {
  try {
    parse(value);
  } catch (error) {
    expect(error).toBeInstanceOf(OtlpDestinationsError);
    expect((error as OtlpDestinationsError).code).toBe("invalid_otlp_destinations");
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
};

describe("the OTLP destinations file", () => {
  it("reads destinations with their ids (otlpdst_<name> by default), endpoints and headers", () => {
    expect(
      parse([
        { name: "local", endpoint: "http://127.0.0.1:4318/v1/logs", headers: { authorization: "Bearer k", __proto__: "kept" } },
        { id: "dst_2", name: "other", endpoint: "https://collector.example/v1/logs" },
      ]),
    ).toEqual([
      { id: "otlpdst_local", name: "local", endpoint: "http://127.0.0.1:4318/v1/logs", headers: { authorization: "Bearer k" } },
      { id: "dst_2", name: "other", endpoint: "https://collector.example/v1/logs", headers: {} },
    ]);
    // A header named __proto__ is a header, not the map's prototype.
    const [first] = parseOtlpDestinations('[{"name":"p","endpoint":"http://127.0.0.1:1/","headers":{"__proto__":"x"}}]', "f");
    expect(Object.getPrototypeOf(first?.headers)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(first?.headers, "__proto__")?.value).toBe("x");
  });

  it("refuses what would make every export fail, or send what the operator did not mean, listing each problem", () => {
    const endpoint = "http://127.0.0.1:4318/v1/logs";
    for (const [headers, problem] of [
      [{ "x-key": "a\u0001b" }, "visible ASCII"],
      [{ "x-key": "caf\u00e9 \u20ac" }, "visible ASCII"],
      [{ "x-key": "a\r\nx-injected: 1" }, "visible ASCII"],
      [{ Host: "evil.example" }, "set by the exporter"],
      [{ "Content-Length": "0" }, "set by the exporter"],
      [{ "transfer-encoding": "chunked" }, "set by the exporter"],
      [{ Authorization: "a", authorization: "b" }, "given twice"],
      [{ "bad name": "x" }, "a header name"],
      [{ "x-long": "v".repeat(8193) }, "at most 8192"],
    ] as const) {
      expect(refusal([{ name: "d", endpoint, headers }]), JSON.stringify(headers)).toContain(problem);
    }
    expect(refusal([{ name: "d", endpoint: "http://user:secret@127.0.0.1:4318/v1/logs" }])).toContain("no user or password");
    expect(refusal([{ name: "d", endpoint: "file:///etc/passwd" }])).toContain("an http or https URL");
    expect(
      refusal([
        { name: "d", endpoint },
        { name: "d", endpoint },
      ]),
    ).toContain("a second destination with the name d");
    expect(refusal([{ name: "n".repeat(256), endpoint }])).toContain("1 to 255");
    const many = refusal([{ name: "d", endpoint: "ftp://x", headers: { Host: "h" }, extra: 1 }]);
    expect(many).toContain("3 problems");
    expect(() => parseOtlpDestinations("{", "f")).toThrow(OtlpDestinationsError);
    expect(refusal({ name: "d", endpoint })).toContain("JSON array");
  });
});
