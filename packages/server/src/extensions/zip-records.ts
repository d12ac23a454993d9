// Each decoder reads the fixed part of one record (APPNOTE.TXT 4.3): every offset of the
// format is written once, here, beside the name of its field. A decoder answers
// `undefined` for bytes that are not its record (too short, another signature), and
// leaves to its caller what that means where the record was expected.

/** Record signatures (APPNOTE.TXT 4.3), as little-endian uint32. */
export const SIGNATURE = {
  local: 0x04034b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64End: 0x06064b50,
  zip64Locator: 0x07064b50,
  descriptor: 0x08074b50,
} as const;

/** Bytes of each record's fixed part, signature included; names and extra fields follow it. */
export const RECORD_SIZE = {
  local: 30,
  central: 46,
  end: 22,
  zip64Locator: 20,
  /** A data descriptor without its optional signature. */
  descriptor: 12,
  signedDescriptor: 16,
} as const;

/** A local file header (APPNOTE.TXT 4.3.7); its name and extra fields follow it, then the data. */
export interface LocalFileHeader {
  versionNeeded: number;
  flags: number;
  method: number;
  modifiedTime: number;
  modifiedDate: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  nameLength: number;
  extraLength: number;
}

/** A central directory file header (APPNOTE.TXT 4.3.12); its name, extra fields and comment follow it. */
export interface CentralFileHeader {
  versionMadeBy: number;
  versionNeeded: number;
  flags: number;
  method: number;
  modifiedTime: number;
  modifiedDate: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  nameLength: number;
  extraLength: number;
  commentLength: number;
  /** The disk the entry's local header is on. */
  diskNumberStart: number;
  internalAttributes: number;
  externalAttributes: number;
  localHeaderOffset: number;
}

/** The end of central directory record (APPNOTE.TXT 4.3.16); the archive comment follows it. */
export interface EndOfCentralDirectory {
  diskNumber: number;
  /** The disk the central directory starts on. */
  centralDirectoryDisk: number;
  entriesOnThisDisk: number;
  entryCount: number;
  centralDirectorySize: number;
  centralDirectoryOffset: number;
  commentLength: number;
}

/** The ZIP64 end of central directory locator (APPNOTE.TXT 4.3.15), just before the end record. */
export interface Zip64EndLocator {
  /** The disk the ZIP64 end of central directory record is on. */
  zip64EndDisk: number;
  /** Where the ZIP64 end of central directory record starts. */
  zip64EndOffset: bigint;
  totalDisks: number;
}

/** A data descriptor (APPNOTE.TXT 4.3.9): an entry's CRC-32 and sizes, after its data. */
export interface DataDescriptor {
  /** Whether it starts with its optional signature. */
  signed: boolean;
  /** The bytes it takes: 16 signed, 12 not. */
  byteLength: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
}

/** Info-ZIP's Unicode path extra field (APPNOTE.TXT 4.6.9), version 1. */
export interface UnicodePathField {
  /** The CRC-32 of the header's own name when the field was written. */
  nameCrc32: number;
  /** The path, decoded as UTF-8. */
  name: string;
}

/** Whether `bytes` hold at least `size` bytes and start with `signature`. */
function starts(bytes: Buffer, signature: number, size: number): boolean {
  return bytes.length >= size && bytes.readUInt32LE(0) === signature;
}

/**
 * The fields the local and the central file header share, in the same order and sizes,
 * starting at offset `at` (4 in the local header; 6 in the central one, after its
 * "version made by").
 */
function sharedFileFields(bytes: Buffer, at: number) {
  return {
    versionNeeded: bytes.readUInt16LE(at),
    flags: bytes.readUInt16LE(at + 2),
    method: bytes.readUInt16LE(at + 4),
    modifiedTime: bytes.readUInt16LE(at + 6),
    modifiedDate: bytes.readUInt16LE(at + 8),
    crc32: bytes.readUInt32LE(at + 10),
    compressedSize: bytes.readUInt32LE(at + 14),
    uncompressedSize: bytes.readUInt32LE(at + 18),
    nameLength: bytes.readUInt16LE(at + 22),
    extraLength: bytes.readUInt16LE(at + 24),
  };
}

/** The local file header at the start of `bytes`, or `undefined` if there is none. */
export function decodeLocalFileHeader(bytes: Buffer): LocalFileHeader | undefined {
  if (!starts(bytes, SIGNATURE.local, RECORD_SIZE.local)) return undefined;
  return sharedFileFields(bytes, 4);
}

/** The central directory file header at the start of `bytes`, or `undefined` if there is none. */
export function decodeCentralFileHeader(bytes: Buffer): CentralFileHeader | undefined {
  if (!starts(bytes, SIGNATURE.central, RECORD_SIZE.central)) return undefined;
  return {
    versionMadeBy: bytes.readUInt16LE(4),
    ...sharedFileFields(bytes, 6),
    commentLength: bytes.readUInt16LE(32),
    diskNumberStart: bytes.readUInt16LE(34),
    internalAttributes: bytes.readUInt16LE(36),
    externalAttributes: bytes.readUInt32LE(38),
    localHeaderOffset: bytes.readUInt32LE(42),
  };
}

/** The end of central directory record at the start of `bytes`, or `undefined` if there is none. */
export function decodeEndOfCentralDirectory(bytes: Buffer): EndOfCentralDirectory | undefined {
  if (!starts(bytes, SIGNATURE.end, RECORD_SIZE.end)) return undefined;
  return {
    diskNumber: bytes.readUInt16LE(4),
    centralDirectoryDisk: bytes.readUInt16LE(6),
    entriesOnThisDisk: bytes.readUInt16LE(8),
    entryCount: bytes.readUInt16LE(10),
    centralDirectorySize: bytes.readUInt32LE(12),
    centralDirectoryOffset: bytes.readUInt32LE(16),
    commentLength: bytes.readUInt16LE(20),
  };
}

/** The ZIP64 end of central directory locator at the start of `bytes`, or `undefined` if there is none. */
export function decodeZip64EndLocator(bytes: Buffer): Zip64EndLocator | undefined {
  if (!starts(bytes, SIGNATURE.zip64Locator, RECORD_SIZE.zip64Locator)) return undefined;
  return {
    zip64EndDisk: bytes.readUInt32LE(4),
    zip64EndOffset: bytes.readBigUInt64LE(8),
    totalDisks: bytes.readUInt32LE(16),
  };
}

/**
 * The data descriptor at the start of `bytes`, with or without its signature, or
 * `undefined` when `bytes` are too short for it. Bytes that start with the signature are
 * read as a signed descriptor, as tools read them.
 */
export function decodeDataDescriptor(bytes: Buffer): DataDescriptor | undefined {
  const signed = bytes.length >= 4 && bytes.readUInt32LE(0) === SIGNATURE.descriptor;
  const byteLength = signed ? RECORD_SIZE.signedDescriptor : RECORD_SIZE.descriptor;
  if (bytes.length < byteLength) return undefined;
  const base = signed ? 4 : 0;
  return { signed, byteLength, crc32: bytes.readUInt32LE(base), compressedSize: bytes.readUInt32LE(base + 4), uncompressedSize: bytes.readUInt32LE(base + 8) };
}

/**
 * The extra fields of a header, by id (an id may repeat), as views of `extra`; or
 * `undefined` when their lengths do not add up.
 */
export function decodeExtraFields(extra: Buffer): Map<number, Buffer[]> | undefined {
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

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The data of a Unicode path extra field (version 1, the name's CRC-32, a UTF-8 path),
 * or `undefined` when it is none that tools read: another version, too short, or not UTF-8.
 */
export function decodeUnicodePathField(field: Buffer): UnicodePathField | undefined {
  if (field.length < 5 || field[0] !== 1) return undefined;
  try {
    return { nameCrc32: field.readUInt32LE(1), name: utf8.decode(field.subarray(5)) };
  } catch {
    return undefined;
  }
}
