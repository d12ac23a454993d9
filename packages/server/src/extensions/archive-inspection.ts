import yauzl from "yauzl";
import { ARCHIVE_LIMITS, unsafePathReason, type ArchiveProblem } from "./archive-rules.js";

// Beyond this many unsafe names, one summary detail stands for the rest.
const MAX_REPORTED_UNSAFE = 20;
const MiB = 1024 * 1024;

/** An error's message as the end of a sentence, without a doubled period. */
function reason(error: unknown): string {
  return (error as Error).message.replace(/\.+$/, "");
}

type ZipFile = yauzl.ZipFile;
type Entry = yauzl.Entry;

function openZip(path: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    // Names are decoded and checked here, so one bad name is one problem, not an abort.
    yauzl.open(path, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false }, (error, zip) => {
      if (error) reject(error);
      else resolve(zip);
    });
  });
}

/** Every central-directory entry, or the error that stopped the reading. */
function readEntries(zip: ZipFile, max: number): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on("entry", (entry: Entry) => {
      entries.push(entry);
      if (entries.length >= max) resolve(entries);
      else zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", reject);
    zip.readEntry();
  });
}

function entryName(entry: Entry): string {
  const raw = entry.fileName as unknown as Buffer;
  return raw.toString((entry.generalPurposeBitFlag & 0x800) !== 0 ? "utf8" : "latin1");
}

/** Inflates one entry, counting bytes; stops as soon as `budget` bytes are passed. */
function inflatedSize(zip: ZipFile, entry: Entry, budget: number): Promise<{ bytes: number; overBudget: boolean }> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error) return reject(error);
      let bytes = 0;
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > budget) {
          // Stop inflating at once: a bomb must not be expanded to find out how big it is.
          (stream as unknown as { destroy(): void }).destroy();
          resolve({ bytes, overBudget: true });
        }
      });
      stream.on("end", () => resolve({ bytes, overBudget: false }));
      stream.on("error", reject);
    });
  });
}

function sizeProblem(total: number, archiveBytes: number, what: "declare" | "inflate"): ArchiveProblem {
  const verb = what === "declare" ? "declares" : "inflates to more than";
  if (total > ARCHIVE_LIMITS.maxUncompressedBytes) {
    return { code: "uncompressed_size_exceeded", message: `The archive ${verb} ${(total / MiB).toFixed(1)} MiB uncompressed; at most ${ARCHIVE_LIMITS.maxUncompressedBytes / MiB} MiB is allowed.` };
  }
  return {
    code: "compression_ratio_exceeded",
    message: `The archive ${verb} ${total} bytes from ${archiveBytes} (ratio ${(total / archiveBytes).toFixed(0)}); at most ${ARCHIVE_LIMITS.maxCompressionRatio} times the archive's size is allowed.`,
  };
}

/**
 * Checks that the file at `path` (of `archiveBytes` bytes) is a zip of an unpacked
 * extension: a readable zip, `manifest.json` at the root, no entry escaping the root,
 * at most 10,000 entries, and at most 200 MiB and 100 times the archive's size
 * uncompressed. Sizes are checked as declared AND while actually inflating every entry,
 * which stops the moment the bound is passed. Returns one problem per broken rule
 * (empty when the archive is fine).
 */
export async function inspectExtensionArchive(path: string, archiveBytes: number): Promise<ArchiveProblem[]> {
  let zip: ZipFile;
  try {
    zip = await openZip(path);
  } catch (error) {
    return [{ code: "not_a_zip", message: `The file is not a readable zip archive: ${reason(error)}.` }];
  }
  try {
    if (zip.entryCount > ARCHIVE_LIMITS.maxEntries) {
      return [{ code: "too_many_entries", message: `The archive has ${zip.entryCount} entries; at most ${ARCHIVE_LIMITS.maxEntries} are allowed.` }];
    }
    let entries: Entry[];
    try {
      entries = await readEntries(zip, ARCHIVE_LIMITS.maxEntries);
    } catch (error) {
      return [{ code: "not_a_zip", message: `The zip archive is damaged: ${reason(error)}.` }];
    }

    const problems: ArchiveProblem[] = [];
    const unsafe = entries.flatMap((entry) => {
      const name = entryName(entry);
      const reason = unsafePathReason(name);
      return reason === undefined ? [] : [{ code: "unsafe_entry_path" as const, message: `Entry ${JSON.stringify(name)} ${reason}; every entry must stay inside the extension's root.` }];
    });
    problems.push(...unsafe.slice(0, MAX_REPORTED_UNSAFE));
    if (unsafe.length > MAX_REPORTED_UNSAFE) {
      problems.push({ code: "unsafe_entry_path", message: `${unsafe.length - MAX_REPORTED_UNSAFE} more entries escape the extension's root.` });
    }
    if (!entries.some((entry) => entryName(entry) === "manifest.json")) {
      problems.push({ code: "manifest_missing", message: "The archive has no manifest.json at its root; zip the extension's folder contents, not the folder." });
    }
    const budget = Math.min(ARCHIVE_LIMITS.maxUncompressedBytes, ARCHIVE_LIMITS.maxCompressionRatio * archiveBytes);
    const declared = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
    if (declared > budget) problems.push(sizeProblem(declared, archiveBytes, "declare"));
    if (problems.length > 0) return problems;

    // Declared sizes can lie; inflate everything within the remaining budget to be sure.
    let inflated = 0;
    for (const entry of entries) {
      if (entryName(entry).endsWith("/")) continue;
      let result: { bytes: number; overBudget: boolean };
      try {
        result = await inflatedSize(zip, entry, budget - inflated);
      } catch (error) {
        const message = reason(error);
        if (/too many bytes/.test(message)) {
          return [{ code: "uncompressed_size_exceeded", message: `Entry ${JSON.stringify(entryName(entry))} inflates past its declared size of ${entry.uncompressedSize} bytes.` }];
        }
        return [{ code: "not_a_zip", message: `Entry ${JSON.stringify(entryName(entry))} cannot be read: ${message}.` }];
      }
      inflated += result.bytes;
      if (result.overBudget) return [sizeProblem(inflated, archiveBytes, "inflate")];
    }
    return [];
  } finally {
    zip.close();
  }
}
