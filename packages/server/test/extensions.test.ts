import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unsafePathReason } from "../src/extensions/archive-rules.js";
import { multipartBody } from "./support/multipart.js";
import { useTestServer } from "./support/test-server.js";
import { buildZip, extraField, goodExtensionZip, type ZipEntryInput } from "./support/zip-writer.js";

const t = useTestServer();
const MiB = 1024 * 1024;
const manifest = { name: "manifest.json", data: '{"manifest_version":3,"name":"t","version":"1"}' };

/** The details of the 400 an upload of `zip` gets. */
async function rejection(zip: Buffer): Promise<{ code: string; message: string }[]> {
  const error = await t
    .client()
    .extensions.upload({ file: zip })
    .catch((caught: unknown) => caught);
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
    expect(await rejection(Buffer.from("this is plain text, not an archive"))).toEqual([
      { code: "not_a_zip", message: expect.stringContaining("not a readable zip") },
    ]);
    expect(storedFiles()).toEqual(before);
  });

  it("refuses a zip without manifest.json at its root: manifest_missing", async () => {
    expect(await rejection(buildZip([{ name: "ext/manifest.json", data: "{}" }]))).toEqual([{ code: "manifest_missing", message: expect.any(String) }]);
  });

  it("refuses entries escaping the root, one detail per entry: unsafe_entry_path", async () => {
    const details = await rejection(
      buildZip([
        manifest,
        { name: "../evil.js", data: "x" },
        { name: "/etc/cron.d/x", data: "x" },
        { name: "a\\..\\..\\b.js", data: "x" },
        { name: "C:/x.js", data: "x" },
        { name: "ok/../../up.js", data: "x" },
      ]),
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
    expect(
      extraResponse
        .json()
        .details.map((detail: { code: string }) => detail.code)
        .sort(),
    ).toEqual(["additionalProperties", "pattern"]);
  });

  it("refuses a name given twice, which the schema's one string cannot hold, and keeps nothing", async () => {
    const boundary = "twice";
    const part = (name: string, value: string | Buffer, filename = "") =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename && `; filename="${filename}"`}\r\n\r\n`),
        Buffer.from(value),
        Buffer.from("\r\n"),
      ]);
    const payload = Buffer.concat([
      part("name", "first"),
      part("file", goodExtensionZip(), "a.zip"),
      part("name", "second"),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    const response = await t.server.app.inject({
      method: "POST",
      url: "/extensions",
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "type", message: "/name must be given once; the form has it more than once." }]);
    expect(readdirSync(join(t.dataDir, "uploads"))).toEqual([]);
  });

  it("answers a JSON body with 415 unsupported_media_type", async () => {
    const response = await t.server.app.inject({
      method: "POST",
      url: "/extensions",
      headers: { authorization: `Bearer ${t.orgKey}` },
      payload: { file: "x" },
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().code).toBe("unsupported_media_type");
  });
});

describe("strict archives: every entry any unzip tool would extract is checked", () => {
  const script = { name: "bg.js", data: "console.log(1);\n", deflate: true };
  /** The 400's details for `zip`, as `code: message` lines, so a failure shows them all. */
  const problems = async (zip: Buffer): Promise<string[]> => (await rejection(zip)).map((detail) => `${detail.code}: ${detail.message}`);
  const accepted = async (zip: Buffer): Promise<void> => {
    await expect(t.client().extensions.upload({ file: zip })).resolves.toMatchObject({ size_bytes: zip.length });
  };

  it("refuses an end record that counts fewer entries than the central directory holds, and checks the uncounted ones", async () => {
    // The issue's archive: the end record says 1 entry, while `unzip -l` and Python's zipfile list both.
    const lying = buildZip([manifest, { name: "../../evil.sh", data: "rm -rf ~\n" }], { endCount: 1 });
    const found = await problems(lying);
    expect(found).toContainEqual(
      expect.stringMatching(
        /^inconsistent_structure: The end-of-central-directory record counts 1 entry, but the central directory holds 2 \(beyond the count: "\.\.\/\.\.\/evil\.sh"\)/,
      ),
    );
    expect(found).toContainEqual(expect.stringMatching(/^unsafe_entry_path: Entry "\.\.\/\.\.\/evil\.sh" has a '\.\.' segment/));
  });

  it("counts the central directory's records, not the end record's claim, against the 10,000 entries", async () => {
    const entries = [manifest, ...Array.from({ length: 10_000 }, (_, i) => ({ name: `f/${i}`, data: "" }))];
    const codes = (await rejection(buildZip(entries, { endCount: 1 }))).map((detail) => detail.code);
    expect(codes).toContain("too_many_entries");
    expect(codes).toContain("inconsistent_structure");
  });

  it("refuses an end record that counts more entries than the central directory holds", async () => {
    expect(await problems(buildZip([manifest, script], { endCount: 3 }))).toEqual([
      expect.stringMatching(/^inconsistent_structure: .*counts 3 entries, but the central directory holds 2;/),
    ]);
  });

  it("refuses an entry that only a local header has (streaming readers would extract it)", async () => {
    const hidden = buildZip([manifest, { name: "hidden.js", data: "evil()", localOnly: true }, script]);
    expect(await problems(hidden)).toEqual([
      expect.stringMatching(/^inconsistent_structure: \d+ bytes between entries "manifest\.json" and "bg\.js" belong to no entry/),
    ]);
    const hiddenLast = buildZip([manifest, { name: "../hidden.js", data: "evil()", localOnly: true }]);
    expect(await problems(hiddenLast)).toEqual([
      expect.stringMatching(/^inconsistent_structure: \d+ bytes between the last entry "manifest\.json" and the central directory/),
    ]);
  });

  it("refuses data before the first entry and after the end record", async () => {
    expect(await problems(buildZip([manifest], { prefix: Buffer.from("#!/bin/sh\nexit 0\n") }))).toEqual([
      expect.stringMatching(/^inconsistent_structure: 17 bytes precede the first entry "manifest\.json"/),
    ]);
    // A whole archive before another one, its offsets adjusted as `zip -A` does for self-extractors.
    const first = goodExtensionZip();
    expect(await problems(buildZip([manifest], { prefix: first }))).toEqual([
      expect.stringMatching(new RegExp(`^inconsistent_structure: ${first.length} bytes precede the first entry`)),
    ]);
    expect(await problems(buildZip([manifest], { suffix: Buffer.from("trailing") }))).toEqual([
      expect.stringMatching(/^inconsistent_structure: Bytes follow the end-of-central-directory record/),
    ]);
  });

  it("refuses an archive comment that hides a second archive, and accepts a plain comment", async () => {
    const inner = buildZip([{ name: "../evil.sh", data: "x" }]);
    expect(await problems(buildZip([manifest], { comment: inner }))).toEqual([
      expect.stringMatching(/^inconsistent_structure: The archive ends with two end-of-central-directory records/),
    ]);
    const innerEntry = buildZip([{ name: "../evil.sh", data: "x" }], { endCount: 0 }).subarray(0, 40);
    expect(await problems(buildZip([manifest], { comment: innerEntry }))).toEqual([
      expect.stringMatching(/^inconsistent_structure: The archive comment holds zip record signatures/),
    ]);
    await accepted(buildZip([manifest], { comment: Buffer.from("built by the test suite") }));
  });

  it("refuses entries sharing bytes (overlapping local headers)", async () => {
    const overlapping = buildZip([manifest, script, { name: "copy.js", data: "", sharesLocalOf: 1 }]);
    expect(await problems(overlapping)).toEqual([
      expect.stringMatching(/^inconsistent_structure: Entry "(bg|copy)\.js" starts inside the bytes of entry "(bg|copy)\.js": entries overlap/),
    ]);
  });

  it("refuses ZIP64 records, which nothing within the bounds needs", async () => {
    expect(await problems(buildZip([manifest], { zip64: true }))).toEqual([expect.stringMatching(/^unsupported_zip_feature: The archive uses ZIP64 records/)]);
    const zip64Extra = buildZip([manifest, { ...script, extra: extraField(0x0001, Buffer.alloc(16)) }]);
    expect(await problems(zip64Extra)).toEqual([expect.stringMatching(/^unsupported_zip_feature: Entry "bg\.js" uses ZIP64 records/)]);
  });

  it("refuses a local header that disagrees with the central directory", async () => {
    const renamed = buildZip([manifest, { ...script, localName: "../bg.js" }]);
    expect(await problems(renamed)).toEqual([
      expect.stringMatching(/^inconsistent_structure: Entry "bg\.js": its local header disagrees with the central directory: name "\.\.\/bg\.js"/),
    ]);
  });

  it("refuses duplicate names, names differing only by case or Unicode normalization, and a file used as a folder", async () => {
    const twice = await problems(buildZip([manifest, script, script]));
    expect(twice).toEqual(['duplicate_entry: Entry "bg.js" appears more than once; tools keep different copies.']);
    expect(await problems(buildZip([manifest, script, { ...script, name: "BG.js" }]))).toEqual([
      expect.stringMatching(/^duplicate_entry: Entry "BG\.js" collides with entry "bg\.js"/),
    ]);
    const nfc = "caf\u00e9.js";
    const nfd = "cafe\u0301.js";
    expect(await problems(buildZip([manifest, { name: nfc, data: "1" }, { name: nfd, data: "2" }]))).toEqual([
      expect.stringMatching(/^duplicate_entry: Entry ".*" collides with entry ".*": names must differ by more than letter case or Unicode normalization/),
    ]);
    expect(await problems(buildZip([manifest, { name: "lib", data: "x" }, { name: "lib/x.js", data: "y" }]))).toEqual([
      'duplicate_entry: Entry "lib" is a file, but entry "lib/x.js" uses it as a folder.',
    ]);
    expect(await problems(buildZip([manifest, { name: "lib", data: "x" }, { name: "lib/", data: "" }]))).toEqual([
      expect.stringMatching(/^duplicate_entry: Entry "lib\/" collides with entry "lib"/),
    ]);
  });

  it("refuses names tools read differently: non-ASCII without the UTF-8 flag, invalid UTF-8, '.' and empty segments, control characters, colons", async () => {
    const latin1 = { name: "", nameBytes: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x6a, 0x73]), data: "x", flags: 0 };
    const badUtf8 = { name: "", nameBytes: Buffer.from([0x61, 0xff, 0x2e, 0x6a, 0x73]), data: "x" };
    const found = await problems(
      buildZip([
        manifest,
        latin1,
        badUtf8,
        { name: "./manifest.json", data: "{}" },
        { name: "a//b.js", data: "x" },
        { name: "a\tb.js", data: "x" },
        { name: "x/evil.js:stream", data: "x" },
      ]),
    );
    expect(found).toEqual([
      expect.stringMatching(/^invalid_entry_name: Entry "café\.js" has non-ASCII bytes without the UTF-8 flag/),
      expect.stringMatching(/^invalid_entry_name: Entry "a.\.js" is not valid UTF-8/),
      expect.stringMatching(/^invalid_entry_name: Entry "\.\/manifest\.json" has an empty or '\.' segment/),
      expect.stringMatching(/^invalid_entry_name: Entry "a\/\/b\.js" has an empty or '\.' segment/),
      expect.stringMatching(/^invalid_entry_name: Entry "a\\tb\.js" contains a control character/),
      expect.stringMatching(/^unsafe_entry_path: Entry "x\/evil\.js:stream" contains a colon/),
    ]);
  });

  it("refuses an entry name over 1,024 bytes of UTF-8 (not characters): invalid_entry_name", async () => {
    // "é" is 2 bytes in UTF-8: 2 + 511 × 2 = 1,024 bytes in 513 characters.
    const longest = `d/${"é".repeat(511)}`;
    await accepted(buildZip([manifest, { name: longest, data: "x" }]));
    expect(await problems(buildZip([manifest, { name: `${longest}x`, data: "x" }]))).toEqual([
      expect.stringMatching(/^invalid_entry_name: Entry "d\/.*" is 1025 bytes long; at most 1024 are allowed/),
    ]);
  });

  it("refuses a Unicode path extra field that names another path (unzip extracts under it)", async () => {
    const other = Buffer.concat([Buffer.from([1]), Buffer.alloc(4), Buffer.from("../evil.js")]);
    expect(await problems(buildZip([manifest, { ...script, extra: extraField(0x7075, other) }]))).toEqual([
      expect.stringMatching(/^inconsistent_structure: Entry "bg\.js" has a Unicode path extra field naming "\.\.\/evil\.js"/),
    ]);
  });

  it("refuses symbolic links and other special files by their Unix mode, and accepts plain files and folders", async () => {
    const link = { name: "passwd", data: "/etc/passwd", unixMode: 0o120777 };
    const fifo = { name: "pipe", data: "", unixMode: 0o010644 };
    expect(await problems(buildZip([manifest, link, fifo]))).toEqual([
      expect.stringMatching(/^unsupported_entry_type: Entry "passwd" is a symbolic link/),
      expect.stringMatching(/^unsupported_entry_type: Entry "pipe" is a FIFO/),
    ]);
    await accepted(
      buildZip([
        { ...manifest, unixMode: 0o100644 },
        { name: "icons/", data: "", unixMode: 0o040755 },
        { ...script, unixMode: 0o100755 },
      ]),
    );
  });

  it("refuses encrypted entries and compression methods other than stored and deflate", async () => {
    expect(await problems(buildZip([manifest, { ...script, flags: 0x0801 }]))).toEqual([
      expect.stringMatching(/^encrypted_entry: Entry "bg\.js" is encrypted/),
    ]);
    expect(await problems(buildZip([manifest, { ...script, method: 12 }]))).toEqual([
      expect.stringMatching(/^unsupported_compression: Entry "bg\.js" is compressed with bzip2/),
    ]);
  });

  it("refuses sizes and CRCs that do not match the data, and accepts data descriptors that do", async () => {
    const stored: ZipEntryInput = { name: "bg.js", data: "console.log(1);\n", declaredSize: 4 };
    expect(await problems(buildZip([manifest, stored]))).toEqual([
      expect.stringMatching(/^inconsistent_structure: Entry "bg\.js" is stored \(not compressed\) but declares 16 bytes stored and 4 uncompressed/),
    ]);
    expect(await problems(buildZip([manifest, { ...script, declaredSize: 100 }]))).toEqual([
      expect.stringMatching(/^corrupt_entry: Entry "bg\.js" cannot be inflated/),
    ]);
    expect(await problems(buildZip([manifest, { ...script, crc: 1234 }]))).toEqual([
      expect.stringMatching(/^corrupt_entry: Entry "bg\.js" inflates to data whose CRC-32 is not the declared one/),
    ]);
    expect(await problems(buildZip([manifest, { name: "icons/", data: "x" }]))).toEqual([
      expect.stringMatching(/^inconsistent_structure: Entry "icons\/" is a folder .* but holds 1 bytes/),
    ]);
    await accepted(buildZip([manifest, { ...script, dataDescriptor: true }]));
  });

  it("reports at most 20 problems, the last one counting the rest", async () => {
    const details = await rejection(buildZip([manifest, ...Array.from({ length: 30 }, (_, i) => ({ name: `../${i}.js`, data: "x" }))]));
    expect(details).toHaveLength(20);
    expect(details.at(-1)).toEqual({ code: "unsafe_entry_path", message: "11 more problems (unsafe_entry_path) are not listed." });
  });
});

describe("unsafe entry names", () => {
  it("allows plain relative names and refuses every escape", () => {
    for (const safe of ["manifest.json", "a/b/c.js", "dir/", "..hidden", "a/..b/c"]) expect(unsafePathReason(safe)).toBeUndefined();
    for (const unsafe of ["../x", "a/../../x", "/abs", "C:x", "a\\b", "..", "a/.."]) expect(unsafePathReason(unsafe)).toBeDefined();
  });
});
