// Reads an npm package tarball (gzipped ustar, as npm and pnpm pack it) in memory, with
// each entry's mode: whether a bin is executable is only visible in the tar headers.
import { gunzipSync } from "node:zlib";

/**
 * @typedef {object} TarEntry
 * @property {string} path path inside the tarball, without the leading `package/`
 * @property {number} mode permission bits, such as 0o755
 * @property {Buffer} content
 */

/**
 * The regular files of a gzipped tarball, keyed by path (the `package/` prefix removed).
 * @param {Buffer} gzipped
 * @returns {Map<string, TarEntry>}
 */
export function readTarball(gzipped) {
  const tar = gunzipSync(gzipped);
  /** @type {Map<string, TarEntry>} */
  const entries = new Map();
  /** @type {string | undefined} a long name from the pax header before the entry */
  let paxPath;
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156] ?? 0);
    const content = tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      paxPath = /\d+ path=([^\n]*)\n/.exec(content.toString("utf8"))?.[1];
      continue;
    }
    if (type !== "0" && type !== "\0") continue;
    const prefix = text(header.subarray(345, 500));
    const name = paxPath ?? (prefix ? `${prefix}/${text(header.subarray(0, 100))}` : text(header.subarray(0, 100)));
    paxPath = undefined;
    const path = name.replace(/^package\//, "");
    entries.set(path, { path, mode: octal(header.subarray(100, 108)) & 0o7777, content: Buffer.from(content) });
  }
  return entries;
}

/** @param {Buffer} field */
function text(field) {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString("utf8");
}

/** @param {Buffer} field */
function octal(field) {
  const digits = text(field).trim();
  return digits === "" ? 0 : parseInt(digits, 8);
}
