import type { FileHandle } from "node:fs/promises";
import type { ArchiveProblem } from "./archive-rules.js";
import { EXTRA_FIELD_ID, GENERAL_PURPOSE_FLAGS, MATCHING_FLAGS, ZIP64_SENTINEL } from "./zip-format.js";
import {
  decodeCentralFileHeader,
  decodeDataDescriptor,
  decodeEndOfCentralDirectory,
  decodeExtraFields,
  decodeLocalFileHeader,
  decodeZip64EndLocator,
  type EndOfCentralDirectory,
  RECORD_SIZE,
  SIGNATURE,
} from "./zip-records.js";

// The signatures as bytes: an archive comment must hold none of them (see findEnd).
const SIGNATURE_BYTES = Object.values(SIGNATURE).map((value) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
});

const END_SIZE = RECORD_SIZE.end;
const CENTRAL_SIZE = RECORD_SIZE.central;
const LOCAL_SIZE = RECORD_SIZE.local;
// The largest comment the end record's 16-bit length can announce.
const MAX_COMMENT = 0xffff;

/** One entry as the central directory records it, checked against its local header. */
export interface ZipEntryRecord {
  nameBytes: Buffer;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  versionMadeBy: number;
  externalAttributes: number;
  localHeaderOffset: number;
  /** Info-ZIP Unicode path extra fields (central, then local), which some tools extract under instead of the name. */
  unicodePaths: Buffer[];
}

/** What {@link readZipStructure} found: the central directory's entries and every disagreement. */
export interface ZipStructure {
  /** `false` when no end record was found: the file is not a zip at all. */
  isZip: boolean;
  /** Every record the central directory holds (whatever the end record's count says). */
  entries: ZipEntryRecord[];
  /** Structural problems; when there are any, offsets are not to be trusted for reading data. */
  problems: ArchiveProblem[];
}

class Truncated extends Error {}

/**
 * Reads a file by offsets through one small window, so that walking thousands of
 * consecutive headers costs few reads and the memory held stays bounded whatever the
 * archive's size.
 */
class WindowReader {
  readonly #file: FileHandle;
  readonly size: number;
  #start = 0;
  #window = Buffer.alloc(0);

  constructor(file: FileHandle, size: number) {
    this.#file = file;
    this.size = size;
  }

  /** `length` bytes at `offset`; throws {@link Truncated} past the end of the file. */
  async read(offset: number, length: number): Promise<Buffer> {
    if (offset < 0 || offset + length > this.size) throw new Truncated(`needs bytes ${offset}..${offset + length} of a ${this.size}-byte file`);
    if (offset < this.#start || offset + length > this.#start + this.#window.length) {
      const want = Math.min(Math.max(length, 64 * 1024), this.size - offset);
      const buffer = Buffer.alloc(want);
      const { bytesRead } = await this.#file.read(buffer, 0, want, offset);
      if (bytesRead < length) throw new Truncated(`the file ended at ${offset + bytesRead}`);
      this.#start = offset;
      this.#window = buffer.subarray(0, bytesRead);
    }
    return this.#window.subarray(offset - this.#start, offset - this.#start + length);
  }
}

/** A name for messages: the raw bytes as Latin-1 (every byte shows), quoted, cut to 200 characters. */
export function displayName(nameBytes: Buffer): string {
  const text = nameBytes.toString("latin1");
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}

const inconsistent = (message: string): ArchiveProblem => ({ code: "inconsistent_structure", message });
const zip64 = (where: string): ArchiveProblem => ({
  code: "unsupported_zip_feature",
  message: `${where} uses ZIP64 records, which an archive within these bounds never needs and which tools read differently; re-create the archive without ZIP64 (Info-ZIP: zip -fz-).`,
});

/**
 * The end record at `at` of the file's tail, if one starts there. The scan passes up to
 * 64 Ki positions: it compares the signature first, since a view made at each one would
 * hold the event loop ten times as long.
 */
const endRecordAt = (tail: Buffer, at: number): EndOfCentralDirectory | undefined =>
  tail.readUInt32LE(at) === SIGNATURE.end ? decodeEndOfCentralDirectory(tail.subarray(at)) : undefined;

/** Whether the end record at `at` of the file's tail, with its comment, ends the file. */
const endsFile = (tail: Buffer, at: number, record: EndOfCentralDirectory): boolean => at + END_SIZE + record.commentLength === tail.length;

/** The end-of-central-directory record and its offset, or a problem (data after it, a comment hiding records). */
async function findEnd(reader: WindowReader): Promise<{ offset: number; record: EndOfCentralDirectory } | { problem: ArchiveProblem; isZip: boolean }> {
  const tailLength = Math.min(reader.size, END_SIZE + MAX_COMMENT);
  const tailStart = reader.size - tailLength;
  const tail = await reader.read(tailStart, tailLength);
  let anySignature = false;
  for (let i = tailLength - END_SIZE; i >= 0; i--) {
    const record = endRecordAt(tail, i);
    if (record === undefined) continue;
    anySignature = true;
    // The record must end the file exactly: bytes after it are a second archive or junk
    // that some tools (which search backward for the last signature) would read instead.
    if (!endsFile(tail, i, record)) continue;
    // An earlier record whose comment also reaches the end holds this one in its comment:
    // an archive hidden in another's comment, and readers pick different ones.
    for (let j = i - 1; j >= 0; j--) {
      const earlier = endRecordAt(tail, j);
      if (earlier !== undefined && endsFile(tail, j, earlier)) {
        return {
          isZip: true,
          problem: inconsistent(
            "The archive ends with two end-of-central-directory records: one archive is hidden in the comment of another, and tools read different ones.",
          ),
        };
      }
    }
    const comment = tail.subarray(i + END_SIZE);
    if (SIGNATURE_BYTES.some((signature) => comment.includes(signature))) {
      return {
        isZip: true,
        problem: inconsistent(
          "The archive comment holds zip record signatures (a second archive hidden in it); tools that search for the last end record read that one instead.",
        ),
      };
    }
    return { offset: tailStart + i, record };
  }
  if (anySignature)
    return {
      isZip: true,
      problem: inconsistent("Bytes follow the end-of-central-directory record: the archive has appended data that some tools read as another archive."),
    };
  return { isZip: false, problem: { code: "not_a_zip", message: "The file is not a readable zip archive: no end-of-central-directory record." } };
}

/**
 * Reads the container of a zip archive by offsets, without inflating anything, and
 * checks that its three descriptions of the entries agree, as every common unzip tool
 * (each trusting a different one) must see the same entries:
 *
 * - the end record ends the file (no appended data; its comment holds no zip records),
 *   names one disk, and its entry count equals the records the central directory holds;
 * - the central directory ends where the end record starts;
 * - the local headers and their data (and data descriptors) tile the bytes before the
 *   central directory exactly: nothing before the first entry, between two entries or
 *   after the last, no two entries sharing bytes; so no entry exists only in local
 *   headers, which streaming readers would extract;
 * - each local header repeats its central record's name, flags, method, CRC and sizes;
 * - no ZIP64 records (nothing within the upload bounds needs them).
 *
 * `maxEntries` bounds the central directory walk; memory stays bounded by the window.
 */
export async function readZipStructure(file: FileHandle, size: number, maxEntries: number): Promise<ZipStructure> {
  const reader = new WindowReader(file, size);
  const problems: ArchiveProblem[] = [];
  const entries: ZipEntryRecord[] = [];
  try {
    if (size < END_SIZE)
      return {
        isZip: false,
        entries,
        problems: [{ code: "not_a_zip", message: `The file is not a readable zip archive: ${size} bytes is too short for one.` }],
      };
    const end = await findEnd(reader);
    if ("problem" in end) return { isZip: end.isZip, entries, problems: [end.problem] };
    const { entryCount: count, centralDirectorySize: centralSize, centralDirectoryOffset: centralOffset } = end.record;
    const locatorAt = end.offset - RECORD_SIZE.zip64Locator;
    if (locatorAt >= 0 && decodeZip64EndLocator(await reader.read(locatorAt, RECORD_SIZE.zip64Locator)) !== undefined)
      return { isZip: true, entries, problems: [zip64("The archive")] };
    if (count === ZIP64_SENTINEL.u16 || centralSize === ZIP64_SENTINEL.u32 || centralOffset === ZIP64_SENTINEL.u32)
      return { isZip: true, entries, problems: [zip64("The end record")] };
    if (end.record.diskNumber !== 0 || end.record.centralDirectoryDisk !== 0 || end.record.entriesOnThisDisk !== count) {
      return {
        isZip: true,
        entries,
        problems: [
          { code: "unsupported_zip_feature", message: "The archive spans several disks (a split or spanned zip); upload it as one ordinary zip file." },
        ],
      };
    }
    if (count > maxEntries)
      return {
        isZip: true,
        entries,
        problems: [{ code: "too_many_entries", message: `The archive has ${count} entries; at most ${maxEntries} are allowed.` }],
      };
    const centralEnd = centralOffset + centralSize;
    if (centralEnd > end.offset)
      return {
        isZip: true,
        entries,
        problems: [inconsistent(`The central directory (bytes ${centralOffset}..${centralEnd}) overlaps the end record at byte ${end.offset}.`)],
      };
    if (centralEnd !== end.offset)
      problems.push(inconsistent(`${end.offset - centralEnd} bytes lie between the central directory and the end record, where no entry accounts for them.`));

    // Walk the central directory by its size, not by the end record's count: tools that
    // trust one or the other must find the same records, so both are read and compared.
    let at = centralOffset;
    while (at < centralEnd) {
      if (entries.length >= maxEntries) {
        problems.push({ code: "too_many_entries", message: `The central directory holds more than ${maxEntries} entries; at most ${maxEntries} are allowed.` });
        break;
      }
      const header = at + CENTRAL_SIZE > centralEnd ? undefined : decodeCentralFileHeader(await reader.read(at, CENTRAL_SIZE));
      if (header === undefined) {
        problems.push(inconsistent(`The central directory has ${centralEnd - at} bytes at byte ${at} that are not a central directory record.`));
        break;
      }
      const { nameLength, extraLength, commentLength } = header;
      const recordEnd = at + CENTRAL_SIZE + nameLength + extraLength + commentLength;
      if (recordEnd > centralEnd) {
        problems.push(inconsistent(`The central directory record at byte ${at} runs past the directory's end.`));
        break;
      }
      const nameBytes = Buffer.from(await reader.read(at + CENTRAL_SIZE, nameLength));
      const extra = await reader.read(at + CENTRAL_SIZE + nameLength, extraLength);
      const entry: ZipEntryRecord = {
        nameBytes,
        versionMadeBy: header.versionMadeBy,
        flags: header.flags,
        method: header.method,
        crc32: header.crc32,
        compressedSize: header.compressedSize,
        uncompressedSize: header.uncompressedSize,
        externalAttributes: header.externalAttributes,
        localHeaderOffset: header.localHeaderOffset,
        unicodePaths: [],
      };
      entries.push(entry);
      at = recordEnd;
      const name = displayName(nameBytes);
      const fields = decodeExtraFields(extra);
      if (fields === undefined) problems.push(inconsistent(`Entry ${name}: its central extra fields are malformed.`));
      else entry.unicodePaths.push(...(fields.get(EXTRA_FIELD_ID.unicodePath) ?? []).map((field) => Buffer.from(field)));
      if (
        fields?.has(EXTRA_FIELD_ID.zip64) ||
        entry.compressedSize === ZIP64_SENTINEL.u32 ||
        entry.uncompressedSize === ZIP64_SENTINEL.u32 ||
        entry.localHeaderOffset === ZIP64_SENTINEL.u32
      ) {
        problems.push(zip64(`Entry ${name}`));
      }
      if (header.diskNumberStart !== 0)
        problems.push({
          code: "unsupported_zip_feature",
          message: `Entry ${name} starts on another disk (a split or spanned zip); upload one ordinary zip file.`,
        });
    }
    if (entries.length !== count) {
      const names = entries.slice(count, count + 5).map((entry) => displayName(entry.nameBytes));
      problems.push(
        inconsistent(
          `The end-of-central-directory record counts ${count} ${count === 1 ? "entry" : "entries"}, but the central directory holds ${entries.length}${names.length > 0 ? ` (beyond the count: ${names.join(", ")})` : ""}; tools disagree about which entries the archive has.`,
        ),
      );
    }
    // Past these, offsets are not to be trusted or not all read: the tiling would only add noise.
    if (problems.some((problem) => problem.code === "unsupported_zip_feature" || problem.code === "too_many_entries"))
      return { isZip: true, entries, problems };
    problems.push(...(await checkLocalHeaders(reader, entries, centralOffset)));
    return { isZip: true, entries, problems };
  } catch (error) {
    if (!(error instanceof Truncated)) throw error;
    return { isZip: true, entries, problems: [...problems, inconsistent(`The archive is truncated: a record ${error.message}.`)] };
  }
}

/**
 * Checks that local headers, data and descriptors tile `[0, centralOffset)` exactly, in
 * central-directory offset order, and that each local header repeats its central record.
 */
async function checkLocalHeaders(reader: WindowReader, entries: ZipEntryRecord[], centralOffset: number): Promise<ArchiveProblem[]> {
  const problems: ArchiveProblem[] = [];
  const byOffset = [...entries].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  let expected = 0;
  let previous: ZipEntryRecord | undefined;
  for (const entry of byOffset) {
    const name = displayName(entry.nameBytes);
    const offset = entry.localHeaderOffset;
    if (offset > expected) {
      problems.push(
        inconsistent(
          previous === undefined
            ? `${offset} bytes precede the first entry ${name}: data prepended to the archive, which tools that read from the start would treat differently.`
            : `${offset - expected} bytes between entries ${displayName(previous.nameBytes)} and ${name} belong to no entry of the central directory (an entry hidden from it?).`,
        ),
      );
    } else if (offset < expected) {
      problems.push(inconsistent(`Entry ${name} starts inside the bytes of entry ${displayName(previous?.nameBytes ?? Buffer.alloc(0))}: entries overlap.`));
      // Overlapping entries make the rest of the tiling meaningless; one problem says it.
      return problems;
    }
    const local = offset + LOCAL_SIZE > centralOffset ? undefined : decodeLocalFileHeader(await reader.read(offset, LOCAL_SIZE));
    if (local === undefined) {
      problems.push(inconsistent(`Entry ${name}: no local header at byte ${offset}, where the central directory points.`));
      return problems;
    }
    const { nameLength, extraLength } = local;
    const localName = await reader.read(offset + LOCAL_SIZE, nameLength);
    const mismatches: string[] = [];
    if (!localName.equals(entry.nameBytes)) mismatches.push(`name ${displayName(Buffer.from(localName))}`);
    const extra = await reader.read(offset + LOCAL_SIZE + nameLength, extraLength);
    const fields = decodeExtraFields(extra);
    if (fields === undefined) problems.push(inconsistent(`Entry ${name}: its local extra fields are malformed.`));
    else {
      if (fields.has(EXTRA_FIELD_ID.zip64)) {
        // Its sizes are then placeholders: comparing them would only add noise.
        problems.push(zip64(`Entry ${name}'s local header`));
        return problems;
      }
      // Copies: a view would keep the reader's whole window alive.
      entry.unicodePaths.push(...(fields.get(EXTRA_FIELD_ID.unicodePath) ?? []).map((field) => Buffer.from(field)));
    }
    const { flags, method } = local;
    if ((flags & MATCHING_FLAGS) !== (entry.flags & MATCHING_FLAGS)) mismatches.push(`flags 0x${flags.toString(16)} (central 0x${entry.flags.toString(16)})`);
    if (method !== entry.method) mismatches.push(`compression method ${method} (central ${entry.method})`);
    const values = { crc: local.crc32, compressed: local.compressedSize, uncompressed: local.uncompressedSize };
    const central = { crc: entry.crc32, compressed: entry.compressedSize, uncompressed: entry.uncompressedSize };
    const deferred = (entry.flags & GENERAL_PURPOSE_FLAGS.dataDescriptor.bit) !== 0;
    for (const key of ["crc", "compressed", "uncompressed"] as const) {
      // With a descriptor, the local header may leave these 0 until the data is written.
      if (values[key] !== central[key] && !(deferred && values[key] === 0))
        mismatches.push(`${key === "crc" ? "CRC-32" : `${key} size`} ${values[key]} (central ${central[key]})`);
    }
    if (mismatches.length > 0) problems.push(inconsistent(`Entry ${name}: its local header disagrees with the central directory: ${mismatches.join(", ")}.`));

    let end = offset + LOCAL_SIZE + nameLength + extraLength + entry.compressedSize;
    if (end > centralOffset) {
      problems.push(inconsistent(`Entry ${name}: its data runs into the central directory.`));
      return problems;
    }
    if (deferred) {
      const descriptor = decodeDataDescriptor(await reader.read(end, Math.min(RECORD_SIZE.signedDescriptor, centralOffset - end)));
      if (descriptor === undefined) {
        problems.push(inconsistent(`Entry ${name}: its data descriptor runs into the central directory.`));
        return problems;
      }
      if (descriptor.crc32 !== central.crc || descriptor.compressedSize !== central.compressed || descriptor.uncompressedSize !== central.uncompressed) {
        problems.push(inconsistent(`Entry ${name}: its data descriptor disagrees with the central directory about its CRC-32 or sizes.`));
      }
      end += descriptor.byteLength;
    }
    expected = end;
    previous = entry;
  }
  if (expected < centralOffset) {
    problems.push(
      inconsistent(
        previous === undefined
          ? `${centralOffset} bytes precede the central directory, but it lists no entries.`
          : `${centralOffset - expected} bytes between the last entry ${displayName(previous.nameBytes)} and the central directory belong to no entry (an entry hidden from the central directory?).`,
      ),
    );
  }
  return problems;
}
