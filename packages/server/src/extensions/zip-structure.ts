import type { FileHandle } from "node:fs/promises";
import type { ArchiveProblem } from "./archive-rules.js";

// Record signatures of the zip format (APPNOTE.TXT 4.3), as little-endian uint32.
const SIGNATURE = {
  local: 0x04034b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64End: 0x06064b50,
  zip64Locator: 0x07064b50,
  descriptor: 0x08074b50,
} as const;

// The same signatures as bytes: an archive comment must hold none of them (see findEnd).
const SIGNATURE_BYTES = Object.values(SIGNATURE).map((value) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
});

const END_SIZE = 22;
const CENTRAL_SIZE = 46;
const LOCAL_SIZE = 30;
const MAX_COMMENT = 0xffff;
// Bit 3 of the general-purpose flags: sizes and CRC follow the data in a descriptor.
const FLAG_DESCRIPTOR = 0x0008;
// Extra field ids: ZIP64 sizes and offsets; Info-ZIP's Unicode path, which unzip prefers to the name.
const EXTRA_ZIP64 = 0x0001;
const EXTRA_UNICODE_PATH = 0x7075;

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

/** The extra fields of a header by id, or `undefined` when their lengths do not add up. */
function extraFields(extra: Buffer): Map<number, Buffer[]> | undefined {
  const fields = new Map<number, Buffer[]>();
  let at = 0;
  // Fewer than 4 trailing bytes are padding some aligners leave; no tool reads them.
  while (at + 4 <= extra.length) {
    const id = extra.readUInt16LE(at);
    const size = extra.readUInt16LE(at + 2);
    if (at + 4 + size > extra.length) return undefined;
    fields.set(id, [...(fields.get(id) ?? []), extra.subarray(at + 4, at + 4 + size)]);
    at += 4 + size;
  }
  return fields;
}

/** The end-of-central-directory record's offset, or a problem (data after it, a comment hiding records). */
async function findEnd(reader: WindowReader): Promise<{ offset: number } | { problem: ArchiveProblem; isZip: boolean }> {
  const tailLength = Math.min(reader.size, END_SIZE + MAX_COMMENT);
  const tailStart = reader.size - tailLength;
  const tail = await reader.read(tailStart, tailLength);
  let anySignature = false;
  for (let i = tailLength - END_SIZE; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== SIGNATURE.end) continue;
    anySignature = true;
    // The record must end the file exactly: bytes after it are a second archive or junk
    // that some tools (which search backward for the last signature) would read instead.
    if (i + END_SIZE + tail.readUInt16LE(i + 20) !== tailLength) continue;
    // An earlier record whose comment also reaches the end holds this one in its comment:
    // an archive hidden in another's comment, and readers pick different ones.
    for (let j = i - 1; j >= 0; j--) {
      if (tail.readUInt32LE(j) === SIGNATURE.end && j + END_SIZE <= tailLength && j + END_SIZE + tail.readUInt16LE(j + 20) === tailLength) {
        return { isZip: true, problem: inconsistent("The archive ends with two end-of-central-directory records: one archive is hidden in the comment of another, and tools read different ones.") };
      }
    }
    const comment = tail.subarray(i + END_SIZE);
    if (SIGNATURE_BYTES.some((signature) => comment.includes(signature))) {
      return { isZip: true, problem: inconsistent("The archive comment holds zip record signatures (a second archive hidden in it); tools that search for the last end record read that one instead.") };
    }
    return { offset: tailStart + i };
  }
  if (anySignature) return { isZip: true, problem: inconsistent("Bytes follow the end-of-central-directory record: the archive has appended data that some tools read as another archive.") };
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
    if (size < END_SIZE) return { isZip: false, entries, problems: [{ code: "not_a_zip", message: `The file is not a readable zip archive: ${size} bytes is too short for one.` }] };
    const end = await findEnd(reader);
    if ("problem" in end) return { isZip: end.isZip, entries, problems: [end.problem] };
    const record = await reader.read(end.offset, END_SIZE);
    const disk = record.readUInt16LE(4);
    const centralDisk = record.readUInt16LE(6);
    const onThisDisk = record.readUInt16LE(8);
    const count = record.readUInt16LE(10);
    const centralSize = record.readUInt32LE(12);
    const centralOffset = record.readUInt32LE(16);
    if (end.offset >= 20 && (await reader.read(end.offset - 20, 4)).readUInt32LE(0) === SIGNATURE.zip64Locator) return { isZip: true, entries, problems: [zip64("The archive")] };
    if (count === 0xffff || centralSize === 0xffffffff || centralOffset === 0xffffffff) return { isZip: true, entries, problems: [zip64("The end record")] };
    if (disk !== 0 || centralDisk !== 0 || onThisDisk !== count) {
      return { isZip: true, entries, problems: [{ code: "unsupported_zip_feature", message: "The archive spans several disks (a split or spanned zip); upload it as one ordinary zip file." }] };
    }
    if (count > maxEntries) return { isZip: true, entries, problems: [{ code: "too_many_entries", message: `The archive has ${count} entries; at most ${maxEntries} are allowed.` }] };
    const centralEnd = centralOffset + centralSize;
    if (centralEnd > end.offset) return { isZip: true, entries, problems: [inconsistent(`The central directory (bytes ${centralOffset}..${centralEnd}) overlaps the end record at byte ${end.offset}.`)] };
    if (centralEnd !== end.offset) problems.push(inconsistent(`${end.offset - centralEnd} bytes lie between the central directory and the end record, where no entry accounts for them.`));

    // Walk the central directory by its size, not by the end record's count: tools that
    // trust one or the other must find the same records, so both are read and compared.
    let at = centralOffset;
    while (at < centralEnd) {
      if (entries.length >= maxEntries) {
        problems.push({ code: "too_many_entries", message: `The central directory holds more than ${maxEntries} entries; at most ${maxEntries} are allowed.` });
        break;
      }
      if (at + CENTRAL_SIZE > centralEnd || (await reader.read(at, 4)).readUInt32LE(0) !== SIGNATURE.central) {
        problems.push(inconsistent(`The central directory has ${centralEnd - at} bytes at byte ${at} that are not a central directory record.`));
        break;
      }
      const header = Buffer.from(await reader.read(at, CENTRAL_SIZE));
      const nameLength = header.readUInt16LE(28);
      const extraLength = header.readUInt16LE(30);
      const commentLength = header.readUInt16LE(32);
      const recordEnd = at + CENTRAL_SIZE + nameLength + extraLength + commentLength;
      if (recordEnd > centralEnd) {
        problems.push(inconsistent(`The central directory record at byte ${at} runs past the directory's end.`));
        break;
      }
      const nameBytes = Buffer.from(await reader.read(at + CENTRAL_SIZE, nameLength));
      const extra = await reader.read(at + CENTRAL_SIZE + nameLength, extraLength);
      const entry: ZipEntryRecord = {
        nameBytes,
        versionMadeBy: header.readUInt16LE(4),
        flags: header.readUInt16LE(8),
        method: header.readUInt16LE(10),
        crc32: header.readUInt32LE(16),
        compressedSize: header.readUInt32LE(20),
        uncompressedSize: header.readUInt32LE(24),
        externalAttributes: header.readUInt32LE(38),
        localHeaderOffset: header.readUInt32LE(42),
        unicodePaths: [],
      };
      entries.push(entry);
      at = recordEnd;
      const name = displayName(nameBytes);
      const fields = extraFields(extra);
      if (fields === undefined) problems.push(inconsistent(`Entry ${name}: its central extra fields are malformed.`));
      else entry.unicodePaths.push(...(fields.get(EXTRA_UNICODE_PATH) ?? []).map((field) => Buffer.from(field)));
      if (fields?.has(EXTRA_ZIP64) || entry.compressedSize === 0xffffffff || entry.uncompressedSize === 0xffffffff || entry.localHeaderOffset === 0xffffffff) {
        problems.push(zip64(`Entry ${name}`));
      }
      if (header.readUInt16LE(34) !== 0) problems.push({ code: "unsupported_zip_feature", message: `Entry ${name} starts on another disk (a split or spanned zip); upload one ordinary zip file.` });
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
    if (problems.some((problem) => problem.code === "unsupported_zip_feature" || problem.code === "too_many_entries")) return { isZip: true, entries, problems };
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
    if (offset + LOCAL_SIZE > centralOffset || (await reader.read(offset, 4)).readUInt32LE(0) !== SIGNATURE.local) {
      problems.push(inconsistent(`Entry ${name}: no local header at byte ${offset}, where the central directory points.`));
      return problems;
    }
    const local = Buffer.from(await reader.read(offset, LOCAL_SIZE));
    const nameLength = local.readUInt16LE(26);
    const extraLength = local.readUInt16LE(28);
    const localName = await reader.read(offset + LOCAL_SIZE, nameLength);
    const mismatches: string[] = [];
    if (!localName.equals(entry.nameBytes)) mismatches.push(`name ${displayName(Buffer.from(localName))}`);
    const extra = await reader.read(offset + LOCAL_SIZE + nameLength, extraLength);
    const fields = extraFields(extra);
    if (fields === undefined) problems.push(inconsistent(`Entry ${name}: its local extra fields are malformed.`));
    else {
      if (fields.has(EXTRA_ZIP64)) {
        // Its sizes are then placeholders: comparing them would only add noise.
        problems.push(zip64(`Entry ${name}'s local header`));
        return problems;
      }
      // Copies: a view would keep the reader's whole window alive.
      entry.unicodePaths.push(...(fields.get(EXTRA_UNICODE_PATH) ?? []).map((field) => Buffer.from(field)));
    }
    // Bits 0 (encrypted), 3 (descriptor) and 11 (UTF-8 name) change how the entry is read.
    const flags = local.readUInt16LE(6);
    if ((flags & 0x0809) !== (entry.flags & 0x0809)) mismatches.push(`flags 0x${flags.toString(16)} (central 0x${entry.flags.toString(16)})`);
    const method = local.readUInt16LE(8);
    if (method !== entry.method) mismatches.push(`compression method ${method} (central ${entry.method})`);
    const values = { crc: local.readUInt32LE(14), compressed: local.readUInt32LE(18), uncompressed: local.readUInt32LE(22) };
    const central = { crc: entry.crc32, compressed: entry.compressedSize, uncompressed: entry.uncompressedSize };
    const deferred = (entry.flags & FLAG_DESCRIPTOR) !== 0;
    for (const key of ["crc", "compressed", "uncompressed"] as const) {
      // With a descriptor, the local header may leave these 0 until the data is written.
      if (values[key] !== central[key] && !(deferred && values[key] === 0)) mismatches.push(`${key === "crc" ? "CRC-32" : `${key} size`} ${values[key]} (central ${central[key]})`);
    }
    if (mismatches.length > 0) problems.push(inconsistent(`Entry ${name}: its local header disagrees with the central directory: ${mismatches.join(", ")}.`));

    let end = offset + LOCAL_SIZE + nameLength + extraLength + entry.compressedSize;
    if (end > centralOffset) {
      problems.push(inconsistent(`Entry ${name}: its data runs into the central directory.`));
      return problems;
    }
    if (deferred) {
      const head = await reader.read(end, Math.min(16, centralOffset - end));
      const signed = head.length >= 4 && head.readUInt32LE(0) === SIGNATURE.descriptor;
      const length = signed ? 16 : 12;
      if (head.length < length) {
        problems.push(inconsistent(`Entry ${name}: its data descriptor runs into the central directory.`));
        return problems;
      }
      const base = signed ? 4 : 0;
      const described = { crc: head.readUInt32LE(base), compressed: head.readUInt32LE(base + 4), uncompressed: head.readUInt32LE(base + 8) };
      if (described.crc !== central.crc || described.compressed !== central.compressed || described.uncompressed !== central.uncompressed) {
        problems.push(inconsistent(`Entry ${name}: its data descriptor disagrees with the central directory about its CRC-32 or sizes.`));
      }
      end += length;
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
