import { createWriteStream } from "node:fs";
import { chmod, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { inspectExtensionArchive } from "./archive-inspection.js";
import { decodeEntryName } from "./archive-rules.js";
import { type Entry, openZip, readEntries, type ZipFile } from "./zip-reader.js";

/** A stored archive could not be unpacked (it no longer passes the upload's checks, or the disk refused). */
export class ArchiveUnpackError extends Error {
  /** Stable code of the failure. */
  readonly code = "archive_unpack_failed";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ArchiveUnpackError";
  }
}

/** What a browser's unpacked extensions may still take: bytes of contents and entries (files and folders). */
export interface UnpackBudget {
  bytes: number;
  entries: number;
}

/** An archive would unpack past what is left of its {@link UnpackBudget}; nothing of it was written. */
export class UnpackBudgetError extends Error {
  /** Stable code of the failure. */
  readonly code = "unpack_budget_exceeded";

  constructor(message: string) {
    super(message);
    this.name = "UnpackBudgetError";
  }
}

/**
 * Unpacks the extension archive at `archivePath` into `dest`, a folder that must not
 * exist yet (it is created, with its parent). The archive is checked again as at upload
 * first: the stored file is on disk, and only an archive that passes (names inside the
 * root, no links, no collisions, sizes and CRCs as declared) is written out. Every file
 * is created new (`wx`), folders `0755` and files `0644` whatever the umask, so that a
 * browser running as another account can read them and write none. What it unpacks is
 * taken from `budget` before anything is written: an archive that would pass it is
 * {@link UnpackBudgetError}, so the copies of a browser's extensions have a bound on disk.
 */
export async function unpackExtensionArchive(archivePath: string, dest: string, budget: UnpackBudget): Promise<void> {
  let size: number;
  try {
    size = (await stat(archivePath)).size;
  } catch (error) {
    throw new ArchiveUnpackError(`The stored archive ${archivePath} cannot be read.`, error);
  }
  const problems = await inspectExtensionArchive(archivePath, size);
  if (problems.length > 0)
    throw new ArchiveUnpackError(
      `The stored archive ${archivePath} no longer passes the upload's checks: ${problems.map((problem) => problem.message).join(" ")}`,
    );
  const zip = await openZip(archivePath);
  try {
    const entries = await readEntries(zip);
    // The sizes are the declared ones, which the inspection above found true.
    const bytes = entries.reduce((sum, entry) => sum + entry.uncompressedSize, 0);
    if (bytes > budget.bytes || entries.length > budget.entries) {
      throw new UnpackBudgetError(
        `it unpacks to ${bytes} bytes in ${entries.length} entries, and ${Math.max(0, budget.bytes)} bytes in ${Math.max(0, budget.entries)} entries are left`,
      );
    }
    budget.bytes -= bytes;
    budget.entries -= entries.length;
    await writeEntries(zip, entries, archivePath, dest);
  } finally {
    zip.close();
  }
}

async function writeEntries(zip: ZipFile, entries: Entry[], archivePath: string, dest: string): Promise<void> {
  await mkdir(dirname(dest), { recursive: true, mode: 0o755 });
  // Not recursive: a folder already there is not this unpacking's to write into.
  await mkdir(dest, { mode: 0o755 });
  const folders = new Set<string>([dest]);
  const folder = async (path: string) => {
    for (const missing = [] as string[]; ; ) {
      if (folders.has(path)) {
        for (const created of missing.reverse()) {
          await mkdir(created, { mode: 0o755 });
          await chmod(created, 0o755);
          folders.add(created);
        }
        return;
      }
      missing.push(path);
      path = dirname(path);
    }
  };
  for (const entry of entries) {
    const decoded = decodeEntryName(entry.fileName as unknown as Buffer, entry.generalPurposeBitFlag);
    // The inspection above refused every name that does not decode.
    if ("problem" in decoded) throw new ArchiveUnpackError(`An entry name of ${archivePath} cannot be read: ${decoded.problem}.`);
    const path = join(dest, decoded.name);
    if (decoded.name.endsWith("/")) {
      await folder(path.replace(/\/+$/, ""));
      continue;
    }
    await folder(dirname(path));
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
      zip.openReadStream(entry, (error, opened) => (error ? reject(error) : resolve(opened))),
    );
    await pipeline(stream, createWriteStream(path, { flags: "wx", mode: 0o644 }));
    await chmod(path, 0o644);
  }
  await chmod(dest, 0o755);
}
