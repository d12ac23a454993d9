import { limits } from "@browser-service/types";
import { GENERAL_PURPOSE_FLAGS } from "./zip-format.js";

const archive = limits.schemas.UploadExtensionRequest.file;

/** The bounds an uploaded extension archive must keep, as the spec states them on its `file` part. */
export const ARCHIVE_LIMITS = {
  /** Largest archive accepted, in bytes; larger is 413. */
  maxArchiveBytes: archive.maxBytes,
  /** Most entries (files and folders) an archive may hold. */
  maxEntries: archive.maxEntries,
  /** Largest total uncompressed size, in bytes. */
  maxUncompressedBytes: archive.maxUnpackedBytes,
  /** Largest ratio of total uncompressed size to archive size. */
  maxCompressionRatio: archive.maxCompressionRatio,
  /**
   * Longest entry name, in bytes of UTF-8: far past any real extension path (and past
   * what Windows can unpack), and it bounds the names held while checking duplicates.
   */
  maxNameBytes: archive.maxEntryNameBytes,
} as const;

/** The `details` codes of a rejected archive. */
export type ArchiveProblemCode =
  | "not_a_zip"
  | "manifest_missing"
  | "unsafe_entry_path"
  | "too_many_entries"
  | "uncompressed_size_exceeded"
  | "compression_ratio_exceeded"
  | "inconsistent_structure"
  | "unsupported_zip_feature"
  | "invalid_entry_name"
  | "duplicate_entry"
  | "unsupported_entry_type"
  | "encrypted_entry"
  | "unsupported_compression"
  | "corrupt_entry";

/** One broken rule of an archive: one `details` entry of the 400. */
export interface ArchiveProblem {
  code: ArchiveProblemCode;
  message: string;
}

/**
 * Why an entry name would escape the extension's root when unpacked, or `undefined` when
 * it is safe: backslashes (a separator on Windows), absolute paths, drive letters, colons
 * (a drive or an NTFS stream on Windows) and `..` segments are all refused.
 */
export function unsafePathReason(name: string): string | undefined {
  if (name.includes("\\")) return "contains a backslash";
  if (name.startsWith("/")) return "is an absolute path";
  if (/^[A-Za-z]:/.test(name)) return "starts with a drive letter";
  if (name.includes(":")) return "contains a colon (a drive or a file stream on Windows)";
  if (name.includes("\0")) return "contains a NUL character";
  if (name.split("/").includes("..")) return "has a '..' segment";
  return undefined;
}

// Bit 11 of the general-purpose flags: the name is UTF-8 (otherwise IBM code page 437).
const FLAG_UTF8 = GENERAL_PURPOSE_FLAGS.utf8Name.bit;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * An entry's name as every unzip tool reads it, or why tools would read it differently.
 * With the UTF-8 flag it must be valid UTF-8; without it, ASCII only, since tools decode
 * other bytes by different code pages (CP437, Latin-1, the locale's; in Shift_JIS a
 * second byte can read as a backslash), so the names they unpack, and check, differ.
 */
export function decodeEntryName(bytes: Buffer, flags: number): { name: string } | { problem: string } {
  if ((flags & FLAG_UTF8) !== 0) {
    try {
      return { name: utf8.decode(bytes) };
    } catch {
      return { problem: "is not valid UTF-8 although its UTF-8 flag is set" };
    }
  }
  if (bytes.some((byte) => byte >= 0x80)) {
    return {
      problem:
        "has non-ASCII bytes without the UTF-8 flag, which tools decode by different code pages (Info-ZIP's zip on Linux writes such names); rename it to ASCII, or zip with a tool that flags UTF-8 names, such as `python3 -m zipfile -c ../extension.zip .` inside the extension's folder",
    };
  }
  return { name: bytes.toString("latin1") };
}

/**
 * Why a (safe) entry name is not one plain relative path, or `undefined`: empty, too
 * long, control characters, or empty or `.` segments (`a//b`, `./a`), which tools
 * normalize differently so that two names could unpack to one file.
 */
export function invalidNameReason(name: string, byteLength: number): string | undefined {
  if (name === "") return "is empty";
  if (byteLength > ARCHIVE_LIMITS.maxNameBytes) return `is ${byteLength} bytes long; at most ${ARCHIVE_LIMITS.maxNameBytes} are allowed`;
  // \p{Cc} is exactly U+0000–U+001F and U+007F–U+009F, the C0 and C1 controls and DEL.
  if (/\p{Cc}/u.test(name)) return "contains a control character";
  const segments = name.split("/");
  // A trailing "/" marks a folder: its last segment is the only one allowed to be empty.
  if (segments.slice(0, -1).some((segment) => segment === "" || segment === ".") || segments.at(-1) === ".") return "has an empty or '.' segment";
  return undefined;
}

/**
 * The key two entries collide on when unpacked on some file system: Unicode NFC, letter
 * case folded (macOS and Windows ignore case; macOS normalizes), without a folder's "/".
 */
export function collisionKey(name: string): string {
  return name.replace(/\/$/, "").normalize("NFC").toUpperCase().toLowerCase();
}

// Unix file types in the high 16 bits of the external attributes (when made on Unix or macOS).
const UNIX_HOSTS = new Set([3, 19]);
const S_IFMT = 0o170000;
const FILE_TYPES: Readonly<Record<number, string>> = {
  0o120000: "a symbolic link",
  0o020000: "a character device",
  0o060000: "a block device",
  0o010000: "a FIFO",
  0o140000: "a socket",
};

/**
 * Why an entry is not a plain file or folder as unzip would create it, or `undefined`:
 * symbolic links (which `unzip` recreates, pointing anywhere) and device, FIFO and socket
 * entries, from the Unix mode in the external attributes; a folder mode on a name
 * without a trailing "/".
 */
export function entryTypeReason(name: string, versionMadeBy: number, externalAttributes: number): string | undefined {
  if (!UNIX_HOSTS.has(versionMadeBy >> 8)) return undefined;
  const type = (externalAttributes >>> 16) & S_IFMT;
  const special = FILE_TYPES[type];
  if (special !== undefined) return `is ${special}`;
  if (type === 0o040000 && !name.endsWith("/")) return "is marked as a folder, but its name does not end with '/'";
  return undefined;
}
