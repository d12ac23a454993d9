import { open } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { ARCHIVE_LIMITS, type ArchiveProblem, collisionKey, decodeEntryName, entryTypeReason, invalidNameReason, unsafePathReason } from "./archive-rules.js";
import { COMPRESSION_METHOD, ENCRYPTION_FLAGS } from "./zip-format.js";
import { type Entry, openZip, readEntries, type ZipFile } from "./zip-reader.js";
import { decodeUnicodePathField } from "./zip-records.js";
import { displayName, readZipStructure, type ZipEntryRecord } from "./zip-structure.js";

// Beyond this many problems, one summary detail stands for the rest: a hostile archive of
// 10,000 bad names must not make a 10,000-detail answer.
const MAX_REPORTED_PROBLEMS = 20;
const MiB = 1024 * 1024;
// An entry another tool could not inflate would unpack differently there.
const READ_BY_EVERY_TOOL = new Set<number>(Object.values(COMPRESSION_METHOD));
// Other methods met in the wild, by name, for the refusal.
const METHOD_NAMES: Readonly<Record<number, string>> = { 9: "deflate64", 12: "bzip2", 14: "LZMA", 93: "Zstandard", 95: "XZ", 98: "PPMd", 99: "AES encryption" };

/** An error's message as the end of a sentence, without a doubled period. */
function reason(error: unknown): string {
  return (error as Error).message.replace(/\.+$/, "");
}

/** Inflates one entry, counting bytes and its CRC-32; stops as soon as `budget` bytes are passed. */
function inflate(zip: ZipFile, entry: Entry, budget: number): Promise<{ bytes: number; crc: number; overBudget: boolean }> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error) return reject(error);
      let bytes = 0;
      let crc = 0;
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        crc = crc32(chunk, crc);
        if (bytes > budget) {
          // Stop inflating at once: a bomb must not be expanded to find out how big it is.
          (stream as unknown as { destroy(): void }).destroy();
          resolve({ bytes, crc, overBudget: true });
        }
      });
      stream.on("end", () => resolve({ bytes, crc, overBudget: false }));
      stream.on("error", reject);
    });
  });
}

function sizeProblem(total: number, archiveBytes: number, what: "declare" | "inflate"): ArchiveProblem {
  const verb = what === "declare" ? "declares" : "inflates to more than";
  if (total > ARCHIVE_LIMITS.maxUncompressedBytes) {
    return {
      code: "uncompressed_size_exceeded",
      message: `The archive ${verb} ${(total / MiB).toFixed(1)} MiB uncompressed; at most ${ARCHIVE_LIMITS.maxUncompressedBytes / MiB} MiB is allowed.`,
    };
  }
  return {
    code: "compression_ratio_exceeded",
    message: `The archive ${verb} ${total} bytes from ${archiveBytes} (ratio ${(total / archiveBytes).toFixed(0)}); at most ${ARCHIVE_LIMITS.maxCompressionRatio} times the archive's size is allowed.`,
  };
}

/** At most {@link MAX_REPORTED_PROBLEMS} details, the last one counting those left out. */
function capped(problems: ArchiveProblem[]): ArchiveProblem[] {
  if (problems.length <= MAX_REPORTED_PROBLEMS) return problems;
  const shown = problems.slice(0, MAX_REPORTED_PROBLEMS - 1);
  const rest = problems.slice(MAX_REPORTED_PROBLEMS - 1);
  const codes = [...new Set(rest.map((problem) => problem.code))];
  return [...shown, { code: rest[0]!.code, message: `${rest.length} more problems (${codes.join(", ")}) are not listed.` }];
}

/**
 * One entry's problems: its name (decodable the same way by every tool, inside the root,
 * one plain relative path, and the same in any Unicode path extra field), its type (a
 * plain file or folder), no encryption, stored or deflate, and sizes a folder or a
 * stored entry can have.
 */
function entryProblems(entry: ZipEntryRecord, label: string): { name?: string; problems: ArchiveProblem[] } {
  const decoded = decodeEntryName(entry.nameBytes, entry.flags);
  if ("problem" in decoded) return { problems: [{ code: "invalid_entry_name", message: `Entry ${label} ${decoded.problem}.` }] };
  const name = decoded.name;
  const unsafe = unsafePathReason(name);
  if (unsafe !== undefined)
    return { problems: [{ code: "unsafe_entry_path", message: `Entry ${label} ${unsafe}; every entry must stay inside the extension's root.` }] };
  const invalid = invalidNameReason(name, entry.nameBytes.length);
  if (invalid !== undefined)
    return { problems: [{ code: "invalid_entry_name", message: `Entry ${label} ${invalid}; use plain relative paths such as "js/background.js".` }] };
  const problems: ArchiveProblem[] = [];
  // The central and the local header may each carry one; one detail per entry is enough.
  const paths = entry.unicodePaths.map((field) => decodeUnicodePathField(field)?.name);
  const other = paths.find((path) => path !== name);
  if (paths.some((path) => path !== name)) {
    problems.push({
      code: "inconsistent_structure",
      message: `Entry ${label} has a Unicode path extra field naming ${other === undefined ? "an unreadable path" : JSON.stringify(other)}, which some tools unpack instead of its name.`,
    });
  }
  const type = entryTypeReason(name, entry.versionMadeBy, entry.externalAttributes);
  if (type !== undefined)
    problems.push({ code: "unsupported_entry_type", message: `Entry ${label} ${type}; an extension holds only plain files and folders.` });
  if ((entry.flags & ENCRYPTION_FLAGS) !== 0)
    problems.push({ code: "encrypted_entry", message: `Entry ${label} is encrypted; upload an archive without a password.` });
  if (!READ_BY_EVERY_TOOL.has(entry.method)) {
    const method = METHOD_NAMES[entry.method] ?? `method ${entry.method}`;
    problems.push({ code: "unsupported_compression", message: `Entry ${label} is compressed with ${method}; only stored and deflate entries are accepted.` });
  } else if (entry.method === COMPRESSION_METHOD.stored && entry.compressedSize !== entry.uncompressedSize) {
    problems.push({
      code: "inconsistent_structure",
      message: `Entry ${label} is stored (not compressed) but declares ${entry.compressedSize} bytes stored and ${entry.uncompressedSize} uncompressed.`,
    });
  }
  if (name.endsWith("/") && (entry.uncompressedSize !== 0 || entry.compressedSize !== 0)) {
    problems.push({
      code: "inconsistent_structure",
      message: `Entry ${label} is a folder (its name ends with '/') but holds ${entry.uncompressedSize} bytes.`,
    });
  }
  return { name, problems };
}

/**
 * Duplicates and collisions among the names: the same name twice, names that differ only
 * by letter case or Unicode normalization (one file on macOS and Windows), and a file
 * whose name is also used as a folder (`a` and `a/b.js`).
 */
function collisionProblems(names: { name: string; label: string }[]): ArchiveProblem[] {
  const problems: ArchiveProblem[] = [];
  const seen = new Map<string, string>();
  const files: { key: string; label: string }[] = [];
  for (const { name, label } of names) {
    const key = collisionKey(name);
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({
        code: "duplicate_entry",
        message:
          first === label
            ? `Entry ${label} appears more than once; tools keep different copies.`
            : `Entry ${label} collides with entry ${first}: names must differ by more than letter case or Unicode normalization, and a file and a folder cannot share a name.`,
      });
      continue;
    }
    seen.set(key, label);
    if (!name.endsWith("/")) files.push({ key, label });
  }
  // Sorted keys put every name under "f/" right at the lower bound of "f/".
  const keys = [...seen.keys()].sort();
  for (const { key, label } of files) {
    const prefix = `${key}/`;
    let low = 0;
    let high = keys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (keys[middle]! < prefix) low = middle + 1;
      else high = middle;
    }
    if (low < keys.length && keys[low]!.startsWith(prefix)) {
      problems.push({ code: "duplicate_entry", message: `Entry ${label} is a file, but entry ${seen.get(keys[low]!)} uses it as a folder.` });
    }
  }
  return problems;
}

/**
 * Checks that the file at `path` (of `archiveBytes` bytes) is a zip of an unpacked
 * extension, as every common unzip tool would read it: one consistent container (see
 * {@link readZipStructure}); every entry the central directory holds (not only those the
 * end record counts) with a name every tool decodes alike, inside the root, unique even
 * ignoring case and normalization, a plain file or folder, not encrypted, stored or
 * deflate; `manifest.json` at the root; at most 10,000 entries; at most 200 MiB and 100
 * times the archive's size uncompressed. Sizes are checked as declared AND while
 * inflating every entry (with its CRC-32), which stops the moment a bound is passed.
 * Returns one problem per broken rule (empty when the archive is fine).
 */
export async function inspectExtensionArchive(path: string, archiveBytes: number): Promise<ArchiveProblem[]> {
  const file = await open(path, "r");
  let structure;
  try {
    structure = await readZipStructure(file, archiveBytes, ARCHIVE_LIMITS.maxEntries);
  } finally {
    await file.close();
  }
  if (!structure.isZip) return structure.problems;
  const problems = [...structure.problems];

  const names: { name: string; label: string }[] = [];
  for (const entry of structure.entries) {
    const label = displayName(entry.nameBytes);
    const checked = entryProblems(entry, label);
    problems.push(...checked.problems);
    if (checked.name !== undefined) names.push({ name: checked.name, label });
  }
  problems.push(...collisionProblems(names));
  // Only a fully read directory can tell that the manifest is missing.
  if (structure.problems.length === 0 && !names.some(({ name }) => name === "manifest.json")) {
    problems.push({ code: "manifest_missing", message: "The archive has no manifest.json at its root; zip the extension's folder contents, not the folder." });
  }
  const budget = Math.min(ARCHIVE_LIMITS.maxUncompressedBytes, ARCHIVE_LIMITS.maxCompressionRatio * archiveBytes);
  const declared = structure.entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
  if (declared > budget) problems.push(sizeProblem(declared, archiveBytes, "declare"));
  if (problems.length > 0) return capped(problems);
  return inflateAll(path, archiveBytes, structure.entries, budget);
}

/**
 * Declared sizes and CRCs can lie: inflates every file entry within the budget, through
 * a second, independent reader (yauzl), which must list the very entries the structure
 * check read.
 */
async function inflateAll(path: string, archiveBytes: number, records: ZipEntryRecord[], budget: number): Promise<ArchiveProblem[]> {
  let zip: ZipFile;
  try {
    zip = await openZip(path);
  } catch (error) {
    return [{ code: "not_a_zip", message: `The file is not a readable zip archive: ${reason(error)}.` }];
  }
  try {
    let entries: Entry[];
    try {
      entries = await readEntries(zip);
    } catch (error) {
      return [{ code: "not_a_zip", message: `The zip archive is damaged: ${reason(error)}.` }];
    }
    if (entries.length !== records.length || entries.some((entry, i) => entry.relativeOffsetOfLocalHeader !== records[i]!.localHeaderOffset)) {
      return [{ code: "inconsistent_structure", message: "Zip readers disagree about the archive's entries." }];
    }
    let inflated = 0;
    for (const [i, entry] of entries.entries()) {
      const nameBytes = records[i]!.nameBytes;
      // A folder ("/" at the end) has no data.
      if (nameBytes.at(-1) === 0x2f) continue;
      const label = displayName(nameBytes);
      let result: { bytes: number; crc: number; overBudget: boolean };
      try {
        result = await inflate(zip, entry, budget - inflated);
      } catch (error) {
        const message = reason(error);
        if (/too many bytes/.test(message)) {
          return [{ code: "uncompressed_size_exceeded", message: `Entry ${label} inflates past its declared size of ${entry.uncompressedSize} bytes.` }];
        }
        return [{ code: "corrupt_entry", message: `Entry ${label} cannot be inflated: ${message}.` }];
      }
      inflated += result.bytes;
      if (result.overBudget) return [sizeProblem(inflated, archiveBytes, "inflate")];
      if (result.crc !== entry.crc32) {
        return [{ code: "corrupt_entry", message: `Entry ${label} inflates to data whose CRC-32 is not the declared one: the archive is corrupt.` }];
      }
    }
    return [];
  } finally {
    zip.close();
  }
}
