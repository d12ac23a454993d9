import { describe, expect, it } from "vitest";
import { equal } from "../src/runtime/equal.js";
import { dateTime, uri } from "../src/runtime/formats.js";
import { ucs2length } from "../src/runtime/ucs2length.js";

describe("date-time", () => {
  it.each([
    "2026-11-02T10:15:00Z",
    "2026-11-02t10:15:00z",
    "2026-11-02T09:58:12.120+01:00",
    "2024-02-29T00:00:00-23:59",
    "2016-12-31T23:59:60Z",
    "2016-12-31T18:59:60-05:00",
  ])("accepts %s", (value) => expect(dateTime(value)).toBe(true));

  it.each([
    "yesterday",
    "2026-11-02",
    "2026-11-02 10:15:00Z",
    "2026-11-02T10:15Z",
    "2026-11-02T10:15:00",
    "2026-13-45T99:00:00Z",
    "2025-02-29T00:00:00Z",
    "2026-04-31T00:00:00Z",
    "2026-11-02T24:00:00Z",
    "2026-11-02T10:60:00Z",
    "2026-11-02T10:15:00+24:00",
    "2026-11-02T10:15:60Z",
    "2026-11-02T10:15:00.Z",
    "2026-11-02T10:15:00Z\n",
    "2026-11-02T10:15:00+0100",
    "2026-11-02T10:15:00+01:00x",
    "2026-11-02T10:15:00+01:60",
    "+026-11-02T10:15:00Z",
    "２026-11-02T10:15:00Z",
    "",
  ])("rejects %j", (value) => expect(dateTime(value)).toBe(false));
});

describe("uri", () => {
  it.each([
    "https://app.acme.example.com/login",
    "ws://127.0.0.1:8787/browsers/brw_1/cdp",
    "https://user:pa%20ss@example.com:8443/a/b?q=1&r=a/b?#frag/x?y",
    "file:///etc/passwd",
    "urn:isbn:0451450523",
    "mailto:someone@example.com",
    "http://[2001:db8::7]/c=GB?objectClass?one",
    "http://[::ffff:192.0.2.1]:80/",
    "http://[v7.fe80::1]/",
    "HTTP://EXAMPLE.COM",
    "foo:",
  ])("accepts %s", (value) => expect(uri(value)).toBe(true));

  it.each([
    "/login",
    "not a url",
    "auth page",
    "nope",
    "//example.com/path",
    "1http://example.com",
    "https://exa mple.com",
    "https://example.com/a b",
    "https://example.com/%zz",
    "https://example.com:80a/",
    "https://[2001:db8::7/",
    "https://[2001:db8:::7]/",
    "https://[1:2:3:4:5:6:7:8:9]/",
    "https://[::1.2.3.256]/",
    "https://example.com/#a#b",
    "https://ex[ample.com/",
    "https://bücher.example/",
    "https://example.com/\n",
  ])("rejects %j", (value) => expect(uri(value)).toBe(false));
});

describe("ucs2length", () => {
  it("counts code points, a surrogate pair as one", () => {
    expect(ucs2length("")).toBe(0);
    expect(ucs2length("abc")).toBe(3);
    expect(ucs2length("é😀x")).toBe(3);
    expect(ucs2length("\ud83d")).toBe(1);
  });
});

describe("equal", () => {
  it("compares JSON values deeply, object keys in any order", () => {
    expect(equal({ a: [1, { b: null }], c: "x" }, { c: "x", a: [1, { b: null }] })).toBe(true);
    expect(equal([1, 2], [2, 1])).toBe(false);
    expect(equal({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(equal({ a: 1 }, { b: 1 })).toBe(false);
    expect(equal([], {})).toBe(false);
    expect(equal(null, {})).toBe(false);
    expect(equal("1", 1)).toBe(false);
  });
});
