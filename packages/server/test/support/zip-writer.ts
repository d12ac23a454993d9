import { crc32, deflateRawSync } from "node:zlib";

/** One entry of a test archive. */
export interface ZipEntryInput {
  /** The name as stored, unchecked, so that hostile names can be written. */
  name: string;
  data: Buffer | string;
  /** Deflate the data (method 8) instead of storing it (method 0). */
  deflate?: boolean;
  /** The uncompressed size to declare instead of the real one (a lying header). */
  declaredSize?: number;
  /** The name as raw bytes (written instead of `name`), for names in other encodings. */
  nameBytes?: Buffer;
  /** A different name for the local header only. */
  localName?: string;
  /** General-purpose flags (default 0x0800: UTF-8 name). */
  flags?: number;
  /** The compression method to declare, whatever the data is. */
  method?: number;
  /** The CRC-32 to declare instead of the real one. */
  crc?: number;
  /** A Unix mode (file type and permissions) in the external attributes, as zip on Unix writes it. */
  unixMode?: number;
  /** Extra fields of both headers (raw: id, size, data). */
  extra?: Buffer;
  /** Sizes and CRC in a signed data descriptor after the data; the local header has zeros (bit 3). */
  dataDescriptor?: boolean;
  /** Written as a local header and data only: the central directory does not list it. */
  localOnly?: boolean;
  /** Written to the central directory only, pointing at the local header of entry number `sharesLocalOf` (overlapping entries). */
  sharesLocalOf?: number;
}

/** How the archive around the entries is written; each option makes it lie in one way. */
export interface ZipOptions {
  /** The entry count the end record claims, instead of the central directory's. */
  endCount?: number;
  /** Bytes before the first local header; offsets account for them (as `zip -A` would). */
  prefix?: Buffer;
  /** Bytes after the end record. */
  suffix?: Buffer;
  /** The archive comment. */
  comment?: Buffer;
  /** A ZIP64 end record and locator before the end record. */
  zip64?: boolean;
}

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value >>> 0);
  return buffer;
}

function u64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(BigInt(value));
  return buffer;
}

/** One extra field (id, size, data). */
export function extraField(id: number, data: Buffer): Buffer {
  return Buffer.concat([u16(id), u16(data.length), data]);
}

/**
 * A minimal zip writer for tests: local headers, data, central directory and the end
 * record, with UTF-8 names. It writes whatever it is told, including names that escape
 * the root, sizes that lie and records that disagree, which is the point.
 */
export function buildZip(entries: ZipEntryInput[], options: ZipOptions = {}): Buffer {
  const prefix = options.prefix ?? Buffer.alloc(0);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = prefix.length;
  const localOffsets: number[] = [];
  for (const entry of entries) {
    localOffsets.push(offset);
    const raw = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data);
    const method = entry.method ?? (entry.deflate ? 8 : 0);
    const stored = entry.deflate ? deflateRawSync(raw) : raw;
    const name = entry.nameBytes ?? Buffer.from(entry.name, "utf8");
    const localName = entry.localName === undefined ? name : Buffer.from(entry.localName, "utf8");
    const crc = entry.crc ?? crc32(raw);
    const size = entry.declaredSize ?? raw.length;
    const flags = (entry.flags ?? 0x0800) | (entry.dataDescriptor ? 0x0008 : 0);
    const extra = entry.extra ?? Buffer.alloc(0);
    const sizes = entry.dataDescriptor ? [u32(0), u32(0), u32(0)] : [u32(crc), u32(stored.length), u32(size)];
    const local = Buffer.concat([
      u32(0x04034b50),
      u16(20),
      u16(flags),
      u16(method),
      u16(0),
      u16(0x21),
      ...sizes,
      u16(localName.length),
      u16(extra.length),
      localName,
      extra,
      stored,
    ]);
    const descriptor = entry.dataDescriptor ? Buffer.concat([u32(0x08074b50), u32(crc), u32(stored.length), u32(size)]) : Buffer.alloc(0);
    // "Made by" Unix (3) when a mode is given, so the mode in the high 16 bits counts.
    const madeBy = entry.unixMode === undefined ? 20 : (3 << 8) | 20;
    const attributes = entry.unixMode === undefined ? 0 : entry.unixMode * 0x10000;
    if (!entry.localOnly) {
      centrals.push(
        Buffer.concat([
          u32(0x02014b50),
          u16(madeBy),
          u16(20),
          u16(flags),
          u16(method),
          u16(0),
          u16(0x21),
          u32(crc),
          u32(stored.length),
          u32(size),
          u16(name.length),
          u16(extra.length),
          u16(0),
          u16(0),
          u16(0),
          u32(attributes),
          u32(localOffsets[entry.sharesLocalOf ?? -1] ?? offset),
          name,
          extra,
        ]),
      );
    }
    if (entry.sharesLocalOf !== undefined) continue;
    locals.push(local, descriptor);
    offset += local.length + descriptor.length;
  }
  const central = Buffer.concat(centrals);
  const count = options.endCount ?? centrals.length;
  const comment = options.comment ?? Buffer.alloc(0);
  const zip64 = options.zip64
    ? Buffer.concat([
        Buffer.concat([u32(0x06064b50), u64(44), u16(45), u16(45), u32(0), u32(0), u64(count), u64(count), u64(central.length), u64(offset)]),
        Buffer.concat([u32(0x07064b50), u32(0), u64(offset + central.length), u32(1)]),
      ])
    : Buffer.alloc(0);
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(count), u16(count), u32(central.length), u32(offset), u16(comment.length), comment]);
  return Buffer.concat([prefix, ...locals, central, zip64, end, options.suffix ?? Buffer.alloc(0)]);
}

/** A small valid extension: a manifest and a background script. */
export function goodExtensionZip(): Buffer {
  return buildZip([
    {
      name: "manifest.json",
      data: JSON.stringify({ manifest_version: 3, name: "Test", version: "1.0", background: { service_worker: "bg.js" } }),
      deflate: true,
    },
    { name: "bg.js", data: "chrome.runtime.onInstalled.addListener(() => {});\n", deflate: true },
    { name: "icons/", data: "" },
  ]);
}
