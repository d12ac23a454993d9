/** The bounds an uploaded extension archive must keep (the spec's extension upload rules). */
export const ARCHIVE_LIMITS = {
  /** Largest archive accepted, in bytes (50 MiB); larger is 413. */
  maxArchiveBytes: 50 * 1024 * 1024,
  /** Most entries (files and folders) an archive may hold. */
  maxEntries: 10_000,
  /** Largest total uncompressed size, in bytes (200 MiB). */
  maxUncompressedBytes: 200 * 1024 * 1024,
  /** Largest ratio of total uncompressed size to archive size. */
  maxCompressionRatio: 100,
} as const;

/** The `details` codes of a rejected archive. */
export type ArchiveProblemCode =
  | "not_a_zip"
  | "manifest_missing"
  | "unsafe_entry_path"
  | "too_many_entries"
  | "uncompressed_size_exceeded"
  | "compression_ratio_exceeded";

/** One broken rule of an archive: one `details` entry of the 400. */
export interface ArchiveProblem {
  code: ArchiveProblemCode;
  message: string;
}

/**
 * Why an entry name would escape the extension's root when unpacked, or `undefined` when
 * it is safe: backslashes (a separator on Windows), absolute paths, drive letters, and
 * `..` segments are all refused.
 */
export function unsafePathReason(name: string): string | undefined {
  if (name.includes("\\")) return "contains a backslash";
  if (name.startsWith("/")) return "is an absolute path";
  if (/^[A-Za-z]:/.test(name)) return "starts with a drive letter";
  if (name.includes("\0")) return "contains a NUL character";
  if (name.split("/").includes("..")) return "has a '..' segment";
  return undefined;
}
