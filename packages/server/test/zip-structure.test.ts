import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crc32, deflateRawSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { inspectExtensionArchive } from "../src/extensions/archive-inspection.js";
import { type ArchiveProblem, decodeEntryName } from "../src/extensions/archive-rules.js";
import { ENCRYPTION_FLAGS, MATCHING_FLAGS } from "../src/extensions/zip-format.js";
import {
  decodeCentralFileHeader,
  decodeDataDescriptor,
  decodeEndOfCentralDirectory,
  decodeExtraFields,
  decodeLocalFileHeader,
  decodeUnicodePathField,
  decodeZip64EndLocator,
} from "../src/extensions/zip-records.js";
import { displayName, readZipStructure, type ZipStructure } from "../src/extensions/zip-structure.js";
import { buildZip, extraField } from "./support/zip-writer.js";

// The zip container reader on its own: archives built here byte by byte (with
// support/zip-writer.ts, then single fields rewritten), read from a file as uploads are.
// extensions.test.ts holds the same reader to the upload API's answers; this file checks
// what it decodes and each disagreement it finds, including those an upload cannot tell apart.

const scratch = mkdtempSync(join(tmpdir(), "zip-structure-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let files = 0;

async function read(zip: Buffer, maxEntries = 10_000): Promise<ZipStructure> {
  const path = join(scratch, `${files++}.zip`);
  writeFileSync(path, zip);
  const file = await open(path, "r");
  try {
    return await readZipStructure(file, zip.length, maxEntries);
  } finally {
    await file.close();
  }
}

/** The problems as `code: message` lines, so that a failure shows them all. */
async function problems(zip: Buffer, maxEntries?: number): Promise<string[]> {
  return (await read(zip, maxEntries)).problems.map((problem) => `${problem.code}: ${problem.message}`);
}

/** What the upload check as a whole finds in `zip`. */
async function inspect(zip: Buffer): Promise<ArchiveProblem[]> {
  const path = join(scratch, `${files++}.zip`);
  writeFileSync(path, zip);
  return inspectExtensionArchive(path, zip.length);
}

// Offsets of fields inside each record (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.16).
const LOCAL = {
  versionNeeded: 4,
  flags: 6,
  method: 8,
  time: 10,
  date: 12,
  crc: 14,
  compressed: 18,
  uncompressed: 22,
  nameLength: 26,
  extraLength: 28,
} as const;
const CENTRAL = {
  madeBy: 4,
  versionNeeded: 6,
  flags: 8,
  method: 10,
  time: 12,
  date: 14,
  crc: 16,
  compressed: 20,
  uncompressed: 24,
  nameLength: 28,
  extraLength: 30,
  commentLength: 32,
  diskStart: 34,
  internal: 36,
  external: 38,
  localOffset: 42,
} as const;
const END = { disk: 4, centralDisk: 6, onThisDisk: 8, count: 10, centralSize: 12, centralOffset: 16, commentLength: 20 } as const;

/** Where the records of an archive without a comment are. */
function layout(zip: Buffer): { end: number; central: number } {
  const end = zip.length - 22;
  expect(zip.readUInt32LE(end)).toBe(0x06054b50);
  return { end, central: zip.readUInt32LE(end + END.centralOffset) };
}

/** A copy of `zip` with little-endian fields rewritten: each edit is [offset, bytes, value]. */
function patched(zip: Buffer, ...edits: [offset: number, bytes: 2 | 4, value: number][]): Buffer {
  const copy = Buffer.from(zip);
  for (const [offset, bytes, value] of edits) {
    if (bytes === 2) copy.writeUInt16LE(value, offset);
    else copy.writeUInt32LE(value >>> 0, offset);
  }
  return copy;
}

/** A record of `size` zero bytes with `signature` first and `edits` applied (see {@link patched}). */
function record(size: number, signature: number, ...edits: [offset: number, bytes: 2 | 4, value: number][]): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.writeUInt32LE(signature);
  return patched(bytes, ...edits);
}

const manifest = { name: "manifest.json", data: '{"manifest_version":3}' };
const script = { name: "bg.js", data: "console.log(1);\n".repeat(4), deflate: true };

describe("a well-formed archive", () => {
  it("decodes every central record's fields, in directory order, and finds nothing wrong", async () => {
    const text = Buffer.from(script.data);
    const deflated = deflateRawSync(text).length;
    const zip = buildZip([{ ...manifest, unixMode: 0o100644 }, script, { name: "icons/", data: "", unixMode: 0o040755 }, { name: "caf\u00e9.js", data: "1" }]);
    const { isZip, entries, problems: found } = await read(zip);
    expect({ isZip, found }).toEqual({ isZip: true, found: [] });
    expect(entries.map((entry) => ({ ...entry, nameBytes: entry.nameBytes.toString("utf8") }))).toEqual([
      {
        nameBytes: "manifest.json",
        flags: 0x0800,
        method: 0,
        crc32: crc32(manifest.data),
        compressedSize: 22,
        uncompressedSize: 22,
        versionMadeBy: (3 << 8) | 20,
        externalAttributes: 0o100644 * 0x10000,
        localHeaderOffset: 0,
        unicodePaths: [],
      },
      {
        nameBytes: "bg.js",
        flags: 0x0800,
        method: 8,
        crc32: crc32(text),
        compressedSize: deflated,
        uncompressedSize: text.length,
        versionMadeBy: 20,
        externalAttributes: 0,
        localHeaderOffset: 30 + 13 + 22,
        unicodePaths: [],
      },
      {
        nameBytes: "icons/",
        flags: 0x0800,
        method: 0,
        crc32: 0,
        compressedSize: 0,
        uncompressedSize: 0,
        versionMadeBy: (3 << 8) | 20,
        externalAttributes: 0o040755 * 0x10000,
        localHeaderOffset: 30 + 13 + 22 + 30 + 5 + deflated,
        unicodePaths: [],
      },
      expect.objectContaining({ nameBytes: "caf\u00e9.js", uncompressedSize: 1 }),
    ]);
  });

  it("reads an archive of only an end record as a zip without entries", async () => {
    expect(await read(buildZip([]))).toEqual({ isZip: true, entries: [], problems: [] });
  });

  it("keeps each flag bit as the central directory records it; refusing encryption is not the container's business", async () => {
    const zip = buildZip([
      { ...manifest, flags: 0x0801 },
      { ...script, dataDescriptor: true },
      { name: "a.js", data: "", flags: 0 },
    ]);
    const { entries, problems: found } = await read(zip);
    expect(found).toEqual([]);
    expect(entries.map((entry) => entry.flags)).toEqual([0x0801, 0x0808, 0]);
  });

  it("collects Info-ZIP Unicode path fields of both headers, central first, among other extra fields", async () => {
    const central = Buffer.concat([Buffer.from([1]), Buffer.alloc(4), Buffer.from("bg.js")]);
    const extra = Buffer.concat([extraField(0x5455, Buffer.alloc(5)), extraField(0x7075, central)]);
    const { entries, problems: found } = await read(buildZip([{ ...script, extra }]));
    expect(found).toEqual([]);
    expect(entries[0]?.unicodePaths).toEqual([central, central]);
  });

  it("ignores fewer than four trailing bytes of an extra field area (padding some aligners leave)", async () => {
    expect(await problems(buildZip([{ ...script, extra: Buffer.concat([extraField(0x5455, Buffer.alloc(5)), Buffer.alloc(3)]) }]))).toEqual([]);
  });

  it("reads an archive many times its read window: large data and a central directory of thousands of records", async () => {
    const large = Buffer.alloc(300_000, "x");
    const small = Array.from({ length: 3000 }, (_, i) => ({ name: `f/${i}.js`, data: `${i}` }));
    const zip = buildZip([{ name: "a.bin", data: large }, ...small, { name: "z.bin", data: large }]);
    const { entries, problems: found } = await read(zip);
    expect(found).toEqual([]);
    expect(entries).toHaveLength(3002);
    expect(entries.at(-1)).toMatchObject({ uncompressedSize: 300_000, crc32: crc32(large) });
    expect(entries.at(-2)?.nameBytes.toString()).toBe("f/2999.js");
  });

  it("accepts data descriptors with or without their signature, with zeros in the local header", async () => {
    const signed = buildZip([{ ...script, dataDescriptor: true }]);
    expect(await problems(signed)).toEqual([]);
    // The same archive with the descriptor's optional signature cut out, the end record moved along.
    const at = 30 + 5 + deflateRawSync(script.data).length;
    expect(signed.readUInt32LE(at)).toBe(0x08074b50);
    const cut = Buffer.concat([signed.subarray(0, at), signed.subarray(at + 4)]);
    const end = cut.length - 22;
    expect(await problems(patched(cut, [end + END.centralOffset, 4, cut.readUInt32LE(end + END.centralOffset) - 4]))).toEqual([]);
  });
});

describe("the end record", () => {
  it("a file too short for one, or without one, is not a zip", async () => {
    expect(await read(Buffer.from("PK\x05\x06"))).toEqual({
      isZip: false,
      entries: [],
      problems: [{ code: "not_a_zip", message: "The file is not a readable zip archive: 4 bytes is too short for one." }],
    });
    expect(await read(Buffer.alloc(5000, "a"))).toEqual({
      isZip: false,
      entries: [],
      problems: [{ code: "not_a_zip", message: "The file is not a readable zip archive: no end-of-central-directory record." }],
    });
  });

  it("refuses an archive spanning disks", async () => {
    const zip = buildZip([manifest]);
    const { end } = layout(zip);
    for (const field of [END.disk, END.centralDisk, END.onThisDisk]) {
      expect(await problems(patched(zip, [end + field, 2, 3]))).toEqual([expect.stringMatching(/^unsupported_zip_feature: The archive spans several disks/)]);
    }
  });

  it("refuses ZIP64 sentinels in the end record, which say the real values are elsewhere", async () => {
    const zip = buildZip([manifest]);
    const { end } = layout(zip);
    const zip64 = [
      patched(zip, [end + END.count, 2, 0xffff]),
      patched(zip, [end + END.centralSize, 4, 0xffffffff]),
      patched(zip, [end + END.centralOffset, 4, 0xffffffff]),
    ];
    for (const each of zip64) expect(await problems(each)).toEqual([expect.stringMatching(/^unsupported_zip_feature: The end record uses ZIP64 records/)]);
  });

  it("counts entries against maxEntries, both the end record's count and the records walked", async () => {
    const entries = Array.from({ length: 5 }, (_, i) => ({ name: `${i}.js`, data: "x" }));
    expect(await problems(buildZip(entries), 4)).toEqual(["too_many_entries: The archive has 5 entries; at most 4 are allowed."]);
    const understated = await read(buildZip(entries, { endCount: 2 }), 3);
    expect(understated.entries).toHaveLength(3);
    expect(understated.problems.map((problem) => `${problem.code}: ${problem.message}`)).toEqual([
      "too_many_entries: The central directory holds more than 3 entries; at most 3 are allowed.",
      "inconsistent_structure: The end-of-central-directory record counts 2 entries, but the central directory holds 3" +
        ' (beyond the count: "2.js"); tools disagree about which entries the archive has.',
    ]);
  });

  it("refuses a central directory overlapping the end record, and bytes between them", async () => {
    const zip = buildZip([manifest]);
    const { end, central } = layout(zip);
    expect(await problems(patched(zip, [end + END.centralSize, 4, end - central + 1]))).toEqual([
      `inconsistent_structure: The central directory (bytes ${central}..${end + 1}) overlaps the end record at byte ${end}.`,
    ]);
    const gap = Buffer.concat([zip.subarray(0, end), Buffer.from("junk!"), zip.subarray(end)]);
    expect(await problems(gap)).toEqual([
      "inconsistent_structure: 5 bytes lie between the central directory and the end record, where no entry accounts for them.",
    ]);
  });
});

describe("central directory records", () => {
  it("refuses bytes in the directory that are not a record, and a record running past the directory's end", async () => {
    const zip = buildZip([manifest, script]);
    const { central } = layout(zip);
    const second = central + 46 + manifest.name.length;
    const notRecord = await read(patched(zip, [second, 4, 0x12345678]));
    expect(notRecord.entries).toHaveLength(1);
    expect(notRecord.problems.map((problem) => problem.message)).toContain(
      `The central directory has ${46 + 5} bytes at byte ${second} that are not a central directory record.`,
    );
    const overlong = await problems(patched(zip, [second + CENTRAL.nameLength, 2, 6]));
    expect(overlong).toContain(`inconsistent_structure: The central directory record at byte ${second} runs past the directory's end.`);
  });

  it("refuses malformed extra fields, in the central or the local header", async () => {
    // An extra field claiming 200 bytes of data where 4 follow.
    const broken = Buffer.concat([Buffer.from([0x55, 0x54, 200, 0]), Buffer.alloc(4)]);
    expect(await problems(buildZip([{ ...script, extra: broken }]))).toEqual([
      'inconsistent_structure: Entry "bg.js": its central extra fields are malformed.',
      'inconsistent_structure: Entry "bg.js": its local extra fields are malformed.',
    ]);
  });

  it("refuses ZIP64 sentinels in an entry's sizes or offset", async () => {
    const zip = buildZip([manifest]);
    const { central } = layout(zip);
    for (const field of [CENTRAL.compressed, CENTRAL.uncompressed, CENTRAL.localOffset]) {
      expect(await problems(patched(zip, [central + field, 4, 0xffffffff]))).toEqual([
        'unsupported_zip_feature: Entry "manifest.json" uses ZIP64 records, which an archive within these bounds never needs' +
          " and which tools read differently; re-create the archive without ZIP64 (Info-ZIP: zip -fz-).",
      ]);
    }
  });

  it("refuses an entry starting on another disk", async () => {
    const zip = buildZip([manifest]);
    const { central } = layout(zip);
    expect(await problems(patched(zip, [central + CENTRAL.diskStart, 2, 1]))).toEqual([
      expect.stringMatching(/^unsupported_zip_feature: Entry "manifest\.json" starts on another disk/),
    ]);
  });
});

describe("local headers", () => {
  it("refuses a central record pointing where there is no local header", async () => {
    const zip = buildZip([manifest, script]);
    expect(await problems(patched(zip, [0, 4, 0]))).toEqual([
      'inconsistent_structure: Entry "manifest.json": no local header at byte 0, where the central directory points.',
    ]);
  });

  it("compares the flag bits that change how an entry is read (encryption, descriptor, UTF-8 name), and only those", async () => {
    const zip = buildZip([manifest]);
    for (const bit of [0x0001, 0x0008, 0x0800]) {
      const flags = 0x0800 ^ bit;
      expect(await problems(patched(zip, [LOCAL.flags, 2, flags]))).toEqual([
        `inconsistent_structure: Entry "manifest.json": its local header disagrees with the central directory: flags 0x${flags.toString(16)} (central 0x800).`,
      ]);
    }
    // Bit 1 (a deflate option) and bit 2 tell nothing a reader needs.
    expect(await problems(patched(zip, [LOCAL.flags, 2, 0x0806]))).toEqual([]);
  });

  it("lists every field the local header disagrees on in one problem", async () => {
    const zip = buildZip([manifest]);
    const lying = patched(zip, [LOCAL.method, 2, 8], [LOCAL.crc, 4, 7], [LOCAL.uncompressed, 4, 99]);
    expect(await problems(lying)).toEqual([
      'inconsistent_structure: Entry "manifest.json": its local header disagrees with the central directory:' +
        ` compression method 8 (central 0), CRC-32 7 (central ${crc32(manifest.data)}), uncompressed size 99 (central 22).`,
    ]);
  });

  it("refuses zeros in a local header without a data descriptor", async () => {
    const zip = buildZip([manifest]);
    expect(await problems(patched(zip, [LOCAL.compressed, 4, 0]))).toEqual([
      'inconsistent_structure: Entry "manifest.json": its local header disagrees with the central directory: compressed size 0 (central 22).',
    ]);
  });

  it("refuses a ZIP64 field in the local header only", async () => {
    // Same sizes in both headers; the local one also carries a ZIP64 field, which some readers then prefer.
    const zip = buildZip([{ ...manifest, extra: extraField(0x5455, Buffer.alloc(16)) }]);
    const local = patched(zip, [30 + manifest.name.length, 2, 0x0001]);
    expect(await problems(local)).toEqual([expect.stringMatching(/^unsupported_zip_feature: Entry "manifest\.json"'s local header uses ZIP64 records/)]);
  });

  it("refuses data running into the central directory", async () => {
    const zip = buildZip([manifest]);
    const { central } = layout(zip);
    const long = patched(
      zip,
      [LOCAL.compressed, 4, 1000],
      [LOCAL.uncompressed, 4, 1000],
      [central + CENTRAL.compressed, 4, 1000],
      [central + CENTRAL.uncompressed, 4, 1000],
    );
    expect(await problems(long)).toEqual(['inconsistent_structure: Entry "manifest.json": its data runs into the central directory.']);
  });

  it("refuses a data descriptor that disagrees with the central directory, or runs into it", async () => {
    const zip = buildZip([{ ...manifest, dataDescriptor: true }]);
    const descriptor = 30 + manifest.name.length + manifest.data.length;
    expect(zip.readUInt32LE(descriptor)).toBe(0x08074b50);
    expect(await problems(patched(zip, [descriptor + 4, 4, 1]))).toEqual([
      'inconsistent_structure: Entry "manifest.json": its data descriptor disagrees with the central directory about its CRC-32 or sizes.',
    ]);
    // Sizes that leave fewer than 12 bytes for the descriptor before the directory.
    const { central } = layout(zip);
    const size = manifest.data.length + 8;
    const cramped = patched(zip, [central + CENTRAL.compressed, 4, size], [central + CENTRAL.uncompressed, 4, size]);
    expect(await problems(cramped)).toEqual(['inconsistent_structure: Entry "manifest.json": its data descriptor runs into the central directory.']);
  });

  it("reports a record that points past the end of the file as a truncated archive", async () => {
    const zip = buildZip([manifest]);
    expect(await problems(patched(zip, [LOCAL.nameLength, 2, 0xffff]))).toEqual([
      `inconsistent_structure: The archive is truncated: a record needs bytes 30..65565 of a ${zip.length}-byte file.`,
    ]);
  });

  it("refuses bytes before a central directory that lists no entries", async () => {
    expect(await problems(buildZip([], { prefix: Buffer.from("MZ stub") }))).toEqual([
      "inconsistent_structure: 7 bytes precede the central directory, but it lists no entries.",
    ]);
  });
});

describe("names", () => {
  it("shows a name's raw bytes in messages, each byte one character, quoted, cut at 200 characters", () => {
    expect(displayName(Buffer.from([0x61, 0xe9, 0x22, 0x0a]))).toBe('"a\u00e9\\"\\n"');
    expect(displayName(Buffer.alloc(300, "n"))).toBe(`"${"n".repeat(200)}…"`);
  });

  it("decodes a name as UTF-8 under the UTF-8 flag, and as ASCII without it; anything else is a problem", () => {
    expect(decodeEntryName(Buffer.from("caf\u00e9/\u4e2d.js"), 0x0800)).toEqual({ name: "caf\u00e9/\u4e2d.js" });
    expect(decodeEntryName(Buffer.from("plain/a.js"), 0)).toEqual({ name: "plain/a.js" });
    expect(decodeEntryName(Buffer.from([0x61, 0xc3]), 0x0800)).toEqual({ problem: "is not valid UTF-8 although its UTF-8 flag is set" });
    expect(decodeEntryName(Buffer.from("caf\u00e9"), 0)).toMatchObject({ problem: expect.stringMatching(/^has non-ASCII bytes without the UTF-8 flag/) });
  });
});

// Each decoder is given a record whose every field holds a value of its own, so that a
// field read at another's offset shows; and the bytes of something else.
describe("record decoders", () => {
  it("decode a local file header's fields, reading its fixed part only; not one cut short or of another signature", () => {
    const local = record(
      30,
      0x04034b50,
      [LOCAL.versionNeeded, 2, 20],
      [LOCAL.flags, 2, 0x0808],
      [LOCAL.method, 2, 8],
      [LOCAL.time, 2, 0x1111],
      [LOCAL.date, 2, 0x2222],
      [LOCAL.crc, 4, 0xdeadbeef],
      [LOCAL.compressed, 4, 1000],
      [LOCAL.uncompressed, 4, 3000],
      [LOCAL.nameLength, 2, 13],
      [LOCAL.extraLength, 2, 9],
    );
    const decoded = {
      versionNeeded: 20,
      flags: 0x0808,
      method: 8,
      modifiedTime: 0x1111,
      modifiedDate: 0x2222,
      crc32: 0xdeadbeef,
      compressedSize: 1000,
      uncompressedSize: 3000,
      nameLength: 13,
      extraLength: 9,
    };
    expect(decodeLocalFileHeader(local)).toEqual(decoded);
    expect(decodeLocalFileHeader(Buffer.concat([local, Buffer.from("manifest.json")]))).toEqual(decoded);
    expect(decodeLocalFileHeader(local.subarray(0, 29))).toBeUndefined();
    expect(decodeLocalFileHeader(patched(local, [0, 4, 0x02014b50]))).toBeUndefined();
  });

  it("decode a central directory file header's fields, as the archive writer wrote them; not one cut short or of another signature", () => {
    const central = record(
      46,
      0x02014b50,
      [CENTRAL.madeBy, 2, (3 << 8) | 20],
      [CENTRAL.versionNeeded, 2, 10],
      [CENTRAL.flags, 2, 0x0801],
      [CENTRAL.method, 2, 8],
      [CENTRAL.time, 2, 0x1111],
      [CENTRAL.date, 2, 0x2222],
      [CENTRAL.crc, 4, 0xcafef00d],
      [CENTRAL.compressed, 4, 1000],
      [CENTRAL.uncompressed, 4, 3000],
      [CENTRAL.nameLength, 2, 5],
      [CENTRAL.extraLength, 2, 9],
      [CENTRAL.commentLength, 2, 7],
      [CENTRAL.diskStart, 2, 2],
      [CENTRAL.internal, 2, 1],
      [CENTRAL.external, 4, 0o100644 * 0x10000],
      [CENTRAL.localOffset, 4, 0x01020304],
    );
    expect(decodeCentralFileHeader(central)).toEqual({
      versionMadeBy: (3 << 8) | 20,
      versionNeeded: 10,
      flags: 0x0801,
      method: 8,
      modifiedTime: 0x1111,
      modifiedDate: 0x2222,
      crc32: 0xcafef00d,
      compressedSize: 1000,
      uncompressedSize: 3000,
      nameLength: 5,
      extraLength: 9,
      commentLength: 7,
      diskNumberStart: 2,
      internalAttributes: 1,
      externalAttributes: 0o100644 * 0x10000,
      localHeaderOffset: 0x01020304,
    });
    // The second record of a real directory: its local header follows the first entry's.
    const zip = buildZip([manifest, script]);
    const second = layout(zip).central + 46 + manifest.name.length;
    expect(decodeCentralFileHeader(zip.subarray(second))).toMatchObject({ method: 8, nameLength: 5, localHeaderOffset: 30 + 13 + 22 });
    expect(decodeCentralFileHeader(central.subarray(0, 45))).toBeUndefined();
    expect(decodeCentralFileHeader(zip)).toBeUndefined();
  });

  it("decode an end of central directory record's fields; not one cut short or of another signature", () => {
    const end = record(
      22,
      0x06054b50,
      [END.disk, 2, 1],
      [END.centralDisk, 2, 2],
      [END.onThisDisk, 2, 3],
      [END.count, 2, 4],
      [END.centralSize, 4, 0x05060708],
      [END.centralOffset, 4, 0x090a0b0c],
      [END.commentLength, 2, 13],
    );
    expect(decodeEndOfCentralDirectory(end)).toEqual({
      diskNumber: 1,
      centralDirectoryDisk: 2,
      entriesOnThisDisk: 3,
      entryCount: 4,
      centralDirectorySize: 0x05060708,
      centralDirectoryOffset: 0x090a0b0c,
      commentLength: 13,
    });
    expect(decodeEndOfCentralDirectory(end.subarray(0, 21))).toBeUndefined();
    expect(decodeEndOfCentralDirectory(patched(end, [0, 4, 0x06064b50]))).toBeUndefined();
  });

  it("decode the ZIP64 locator before an end record, pointing at the ZIP64 end record; 64-bit offsets whole; not one cut short or of another signature", () => {
    const zip = buildZip([manifest], { zip64: true });
    const locator = decodeZip64EndLocator(zip.subarray(zip.length - 22 - 20));
    expect(locator).toMatchObject({ zip64EndDisk: 0, totalDisks: 1 });
    expect(zip.readUInt32LE(Number(locator?.zip64EndOffset))).toBe(0x06064b50);

    const far = record(20, 0x07064b50, [4, 4, 3], [16, 4, 4]);
    far.writeBigUInt64LE(2n ** 40n + 5n, 8);
    expect(decodeZip64EndLocator(far)).toEqual({ zip64EndDisk: 3, zip64EndOffset: 2n ** 40n + 5n, totalDisks: 4 });
    expect(decodeZip64EndLocator(far.subarray(0, 19))).toBeUndefined();
    expect(decodeZip64EndLocator(zip.subarray(zip.length - 22))).toBeUndefined();
  });

  it("decode a data descriptor with its signature (16 bytes) or without (12); not one the bytes left cannot hold", () => {
    const signed = record(16, 0x08074b50, [4, 4, 0xdeadbeef], [8, 4, 100], [12, 4, 300]);
    const values = { crc32: 0xdeadbeef, compressedSize: 100, uncompressedSize: 300 };
    expect(decodeDataDescriptor(signed)).toEqual({ signed: true, byteLength: 16, ...values });
    const unsigned = signed.subarray(4);
    // Followed by the next local header, of which nothing is read.
    expect(decodeDataDescriptor(Buffer.concat([unsigned, record(30, 0x04034b50)]))).toEqual({ signed: false, byteLength: 12, ...values });
    expect(decodeDataDescriptor(unsigned)).toEqual({ signed: false, byteLength: 12, ...values });
    // A signature announces 16 bytes: 12 of them are not a descriptor.
    expect(decodeDataDescriptor(signed.subarray(0, 15))).toBeUndefined();
    expect(decodeDataDescriptor(signed.subarray(0, 12))).toBeUndefined();
    expect(decodeDataDescriptor(unsigned.subarray(0, 11))).toBeUndefined();
    expect(decodeDataDescriptor(Buffer.alloc(0))).toBeUndefined();
  });

  it("decode extra fields by id, an id given twice kept twice, trailing padding ignored; not fields whose sizes overrun", () => {
    const [a, b, c] = [Buffer.from("aaaaa"), Buffer.from("bb"), Buffer.alloc(0)];
    const extra = Buffer.concat([extraField(0x5455, a), extraField(0x7075, b), extraField(0x5455, c), Buffer.alloc(3)]);
    expect(decodeExtraFields(extra)).toEqual(
      new Map([
        [0x5455, [a, c]],
        [0x7075, [b]],
      ]),
    );
    expect(decodeExtraFields(Buffer.alloc(0))).toEqual(new Map());
    expect(decodeExtraFields(Buffer.concat([extraField(0x5455, a), Buffer.from([0x75, 0x70, 3, 0, 1, 2])]))).toBeUndefined();
  });

  it("decode an Info-ZIP Unicode path field of version 1; not another version, a field too short, or a path that is not UTF-8", () => {
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(crc32("bg.js"));
    const field = (version: number, path: Buffer) => Buffer.concat([Buffer.from([version]), crc, path]);
    expect(decodeUnicodePathField(field(1, Buffer.from("caf\u00e9/x.js")))).toEqual({ nameCrc32: crc32("bg.js"), name: "caf\u00e9/x.js" });
    expect(decodeUnicodePathField(field(1, Buffer.alloc(0)))).toEqual({ nameCrc32: crc32("bg.js"), name: "" });
    expect(decodeUnicodePathField(field(2, Buffer.from("x.js")))).toBeUndefined();
    expect(decodeUnicodePathField(field(1, Buffer.alloc(0)).subarray(0, 4))).toBeUndefined();
    expect(decodeUnicodePathField(field(1, Buffer.from([0x61, 0xc3])))).toBeUndefined();
  });
});

// Every one of the 16 bits, each against what APPNOTE.TXT 4.4.4 says it means: the flag
// table names those the checks read, and no other bit is refused.
describe("the general-purpose flag bits", () => {
  const bits = Array.from({ length: 16 }, (_, i) => ({ bit: 1 << i, hex: `0x${(1 << i).toString(16).padStart(4, "0")}` }));
  // Encrypted, data descriptor, UTF-8 name: each changes how a tool reads the entry.
  const mustMatch = [0x0001, 0x0008, 0x0800];
  // Encrypted, strong encryption, encrypted central directory.
  const encryption = [0x0001, 0x0040, 0x2000];

  it("are masked as the table says", () => {
    expect(MATCHING_FLAGS).toBe(mustMatch.reduce((mask, bit) => mask | bit, 0));
    expect(ENCRYPTION_FLAGS).toBe(encryption.reduce((mask, bit) => mask | bit, 0));
  });

  it.each(bits)("a local header alone flipping bit $hex is refused only when tools read the entry by it", async ({ bit }) => {
    const flags = 0x0800 ^ bit;
    const found = await problems(patched(buildZip([manifest]), [LOCAL.flags, 2, flags]));
    expect(found).toEqual(
      mustMatch.includes(bit)
        ? [
            `inconsistent_structure: Entry "manifest.json": its local header disagrees with the central directory: flags 0x${flags.toString(16)} (central 0x800).`,
          ]
        : [],
    );
  });

  it.each(bits)("an entry setting bit $hex in both headers is refused as encrypted only when the bit means encryption", async ({ bit }) => {
    const found = (await inspect(buildZip([manifest, { ...script, flags: 0x0800 | bit }]))).filter((problem) => problem.code === "encrypted_entry");
    expect(found).toEqual(
      encryption.includes(bit) ? [{ code: "encrypted_entry", message: 'Entry "bg.js" is encrypted; upload an archive without a password.' }] : [],
    );
  });
});
