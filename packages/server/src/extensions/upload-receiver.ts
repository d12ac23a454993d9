import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyRequest } from "fastify";
import { PayloadTooLargeError } from "../http/api-errors.js";
import { newUploadPath, PRIVATE_FILE_MODE } from "../storage/data-dir.js";
import { ARCHIVE_LIMITS } from "./archive-rules.js";

/** An archive received to a temporary file, with the form's other fields. */
export interface ReceivedUpload {
  /** The temporary file, or `undefined` when the form had no `file` part. */
  tempPath: string | undefined;
  /** Length of the uploaded bytes. */
  sizeBytes: number;
  /** SHA-256 of the exact uploaded bytes, lowercase hex. */
  checksum: string;
  /** The form's text fields by name (the first value of each), for validation. */
  fields: Record<string, string>;
  /** Names of text fields the form gave more than once: a property has one value, not a list. */
  repeatedFields: string[];
  /** Names of file parts other than `file`, which the spec does not allow. */
  otherFiles: string[];
}

/**
 * Streams the multipart form of `POST /extensions` to a file in `uploadsDir`, hashing
 * and counting on the way, so the archive is never held in memory. The file is fsynced
 * before this returns. An archive over 50 MiB is 413 `payload_too_large` and leaves no
 * file behind.
 */
export async function receiveUpload(request: FastifyRequest, uploadsDir: string): Promise<ReceivedUpload> {
  const received: ReceivedUpload = { tempPath: undefined, sizeBytes: 0, checksum: "", fields: {}, repeatedFields: [], otherFiles: [] };
  try {
    for await (const part of request.parts({ limits: { fileSize: ARCHIVE_LIMITS.maxArchiveBytes, files: 1, fields: 8, fieldSize: 4096 } })) {
      if (part.type === "field") {
        if (Object.hasOwn(received.fields, part.fieldname)) received.repeatedFields.push(part.fieldname);
        else received.fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== "file") {
        received.otherFiles.push(part.fieldname);
        part.file.resume();
        continue;
      }
      const tempPath = newUploadPath(uploadsDir);
      received.tempPath = tempPath;
      const hash = createHash("sha256");
      let size = 0;
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      // Private from the first byte; the stored archive is this file, renamed.
      await pipeline(part.file, tap, createWriteStream(tempPath, { mode: PRIVATE_FILE_MODE }));
      if (part.file.truncated) throw tooLarge();
      // Durable before the database row that points at it can commit.
      const handle = await open(tempPath, "r");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      received.sizeBytes = size;
      received.checksum = hash.digest("hex");
    }
    return received;
  } catch (error) {
    if (received.tempPath !== undefined) await rm(received.tempPath, { force: true });
    if ((error as { code?: string }).code === "FST_REQ_FILE_TOO_LARGE") throw tooLarge();
    throw error;
  }
}

function tooLarge(): PayloadTooLargeError {
  return new PayloadTooLargeError(`The extension archive is larger than ${ARCHIVE_LIMITS.maxArchiveBytes / 1024 / 1024} MiB.`);
}
