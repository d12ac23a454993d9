import { createWriteStream } from "node:fs";
import { chmod, mkdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { inspectExtensionArchive } from "./archive-inspection.js";
import { decodeEntryName } from "./archive-rules.js";
import { openZip, readEntries } from "./zip-reader.js";

/** A stored archive could not be unpacked (it no longer passes the upload's checks, or the disk refused). */
export class ArchiveUnpackError extends Error {
  /** Stable code of the failure. */
  readonly code = "archive_unpack_failed";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ArchiveUnpackError";
  }
}

/**
 * Unpacks the extension archive at `archivePath` into `dest`, a folder that must not
 * exist yet (it is created, with its parent). The archive is checked again as at upload
 * first: the stored file is on disk, and only an archive that passes (names inside the
 * root, no links, no collisions, sizes and CRCs as declared) is written out. Every file
 * is created new (`wx`), folders `0755` and files `0644` whatever the umask, so that a
 * browser running as another account can read them and write none.
 */
export async function unpackExtensionArchive(archivePath: string, dest: string): Promise<void> {
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
  const zip = await openZip(archivePath);
  try {
    for (const entry of await readEntries(zip)) {
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
  } finally {
    zip.close();
  }
}
