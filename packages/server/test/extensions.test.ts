import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unsafePathReason } from "../src/extensions/archive-rules.js";
import { multipartBody } from "./support/multipart.js";
import { startTestServer, type TestServer } from "./support/test-server.js";
import { buildZip, goodExtensionZip } from "./support/zip-writer.js";

let t: TestServer;
const MiB = 1024 * 1024;
const manifest = { name: "manifest.json", data: '{"manifest_version":3,"name":"t","version":"1"}' };

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  expect(t.mismatches).toEqual([]);
  await t.close();
});

/** The details of the 400 an upload of `zip` gets. */
async function rejection(zip: Buffer): Promise<{ code: string; message: string }[]> {
  const error = await t.client().extensions.upload({ file: zip }).catch((caught: unknown) => caught);
  expect(error).toMatchObject({ status: 400, code: "bad_request" });
  return (error as { details: { code: string; message: string }[] }).details;
}

function storedFiles(): { extensions: string[]; uploads: string[] } {
  return { extensions: readdirSync(join(t.dataDir, "extensions")), uploads: readdirSync(join(t.dataDir, "uploads")) };
}

describe("extension upload", () => {
  it("stores a good zip (201): checksum is the SHA-256 of the exact bytes, size their length", async () => {
    const zip = goodExtensionZip();
    const extension = await t.client().extensions.upload({ file: zip, name: "good-one" });
    expect(extension).toEqual({
      id: expect.stringMatching(/^ext_[a-z2-7]{24}$/),
      name: "good-one",
      created_at: expect.any(String),
      last_used_at: null,
      size_bytes: zip.length,
      checksum: createHash("sha256").update(zip).digest("hex"),
    });
    expect(readFileSync(join(t.dataDir, "extensions", `${extension.id}.zip`)).equals(zip)).toBe(true);
    expect(storedFiles().uploads).toEqual([]);
  });

  it("accepts an upload without a name (name null)", async () => {
    expect((await t.client().extensions.upload({ file: goodExtensionZip() })).name).toBeNull();
  });

  it("refuses a duplicate name in the project with 409 name_conflict and keeps nothing", async () => {
    const client = t.client();
    await client.extensions.upload({ file: goodExtensionZip(), name: "twice" });
    const before = storedFiles();
    await expect(client.extensions.upload({ file: goodExtensionZip(), name: "twice" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    expect(storedFiles()).toEqual(before);
  });

  it("refuses a file that is not a zip: not_a_zip", async () => {
    const before = storedFiles();
    expect(await rejection(Buffer.from("this is plain text, not an archive"))).toEqual([{ code: "not_a_zip", message: expect.stringContaining("not a readable zip") }]);
    expect(storedFiles()).toEqual(before);
  });

  it("refuses a zip without manifest.json at its root: manifest_missing", async () => {
    expect(await rejection(buildZip([{ name: "ext/manifest.json", data: "{}" }]))).toEqual([{ code: "manifest_missing", message: expect.any(String) }]);
  });

  it("refuses entries escaping the root, one detail per entry: unsafe_entry_path", async () => {
    const details = await rejection(
      buildZip([manifest, { name: "../evil.js", data: "x" }, { name: "/etc/cron.d/x", data: "x" }, { name: "a\\..\\..\\b.js", data: "x" }, { name: "C:/x.js", data: "x" }, { name: "ok/../../up.js", data: "x" }]),
    );
    expect(details.map((detail) => detail.code)).toEqual(Array(5).fill("unsafe_entry_path"));
    expect(details.map((detail) => detail.message).join(" ")).toContain("../evil.js");
  });

  it("refuses more than 10,000 entries: too_many_entries", async () => {
    const entries = [manifest, ...Array.from({ length: 10_000 }, (_, i) => ({ name: `f/${i}`, data: "" }))];
    expect(await rejection(buildZip(entries))).toEqual([{ code: "too_many_entries", message: expect.stringContaining("10001 entries") }]);
  });

  it("refuses a decompression bomb by its declared ratio: compression_ratio_exceeded", async () => {
    const bomb = buildZip([manifest, { name: "zeros.bin", data: Buffer.alloc(20 * MiB), deflate: true }]);
    expect(await rejection(bomb)).toEqual([{ code: "compression_ratio_exceeded", message: expect.stringContaining("at most 100 times") }]);
  });

  it("refuses an archive declaring more than 200 MiB uncompressed: uncompressed_size_exceeded", async () => {
    const declaresHuge = buildZip([manifest, { name: "big.bin", data: Buffer.alloc(4 * MiB), deflate: true, declaredSize: 201 * MiB }]);
    expect(await rejection(declaresHuge)).toEqual([{ code: "uncompressed_size_exceeded", message: expect.stringContaining("200 MiB") }]);
  });

  it("stops inflating a bomb whose headers lie about its size", async () => {
    // Declares 10 bytes, inflates to 30 MiB: only inflating reveals it, and inflation stops early.
    const liar = buildZip([manifest, { name: "liar.bin", data: Buffer.alloc(30 * MiB), deflate: true, declaredSize: 10 }]);
    expect(await rejection(liar)).toEqual([{ code: "uncompressed_size_exceeded", message: expect.stringContaining("declared size of 10 bytes") }]);
  });

  it("refuses an archive over 50 MiB with 413 payload_too_large and keeps nothing", async () => {
    const before = storedFiles();
    await expect(t.client().extensions.upload({ file: Buffer.alloc(50 * MiB + 1) })).rejects.toMatchObject({ status: 413, code: "payload_too_large" });
    expect(storedFiles()).toEqual(before);
  });

  it("checks the form: a missing file part, an extra field and a bad name are 400 details", async () => {
    const headers = { authorization: `Bearer ${t.orgKey}` };
    const noFile = multipartBody({ name: "lonely" });
    const response = await t.server.app.inject({ method: "POST", url: "/extensions", headers: { ...headers, ...noFile.headers }, payload: noFile.payload });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "required", message: "/file is required." }]);
    const extra = multipartBody({ name: "bad name", color: "blue" }, { file: goodExtensionZip() });
    const extraResponse = await t.server.app.inject({ method: "POST", url: "/extensions", headers: { ...headers, ...extra.headers }, payload: extra.payload });
    expect(extraResponse.statusCode).toBe(400);
    expect(extraResponse.json().details.map((detail: { code: string }) => detail.code).sort()).toEqual(["additionalProperties", "pattern"]);
  });

  it("answers a JSON body with 415 unsupported_media_type", async () => {
    const response = await t.server.app.inject({ method: "POST", url: "/extensions", headers: { authorization: `Bearer ${t.orgKey}` }, payload: { file: "x" } });
    expect(response.statusCode).toBe(415);
    expect(response.json().code).toBe("unsupported_media_type");
  });
});

describe("unsafe entry names", () => {
  it("allows plain relative names and refuses every escape", () => {
    for (const safe of ["manifest.json", "a/b/c.js", "dir/", "..hidden", "a/..b/c"]) expect(unsafePathReason(safe)).toBeUndefined();
    for (const unsafe of ["../x", "a/../../x", "/abs", "C:x", "a\\b", "..", "a/.."]) expect(unsafePathReason(unsafe)).toBeDefined();
  });
});
