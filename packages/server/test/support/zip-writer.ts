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

/**
 * A minimal zip writer for tests: local headers, data, central directory and the end
 * record, with UTF-8 names. It writes whatever it is told, including names that escape
 * the root and sizes that lie, which is the point.
 */
export function buildZip(entries: ZipEntryInput[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const raw = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data);
    const method = entry.deflate ? 8 : 0;
    const stored = entry.deflate ? deflateRawSync(raw) : raw;
    const name = Buffer.from(entry.name, "utf8");
    const crc = crc32(raw);
    const size = entry.declaredSize ?? raw.length;
    const common = [u16(20), u16(0x0800), u16(method), u16(0), u16(0x21), u32(crc), u32(stored.length), u32(size), u16(name.length), u16(0)];
    const local = Buffer.concat([u32(0x04034b50), ...common, name, stored]);
    centrals.push(Buffer.concat([u32(0x02014b50), u16(20), ...common, u16(0), u16(0), u16(0), u32(0), u32(offset), name]));
    locals.push(local);
    offset += local.length;
  }
  const central = Buffer.concat(centrals);
  const end = Buffer.concat([u32(0x06054b50), u16(0), u16(0), u16(entries.length), u16(entries.length), u32(central.length), u32(offset), u16(0)]);
  return Buffer.concat([...locals, central, end]);
}

/** A small valid extension: a manifest and a background script. */
export function goodExtensionZip(): Buffer {
  return buildZip([
    { name: "manifest.json", data: JSON.stringify({ manifest_version: 3, name: "Test", version: "1.0", background: { service_worker: "bg.js" } }), deflate: true },
    { name: "bg.js", data: "chrome.runtime.onInstalled.addListener(() => {});\n", deflate: true },
    { name: "icons/", data: "" },
  ]);
}
