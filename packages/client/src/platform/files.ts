import { UploadInputError } from "../errors.js";

/** The bytes of a file. `node:fs` is imported on first use only. */
export async function readFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const fs = await import("node:fs/promises");
  try {
    return (await fs.readFile(path)) as Uint8Array<ArrayBuffer>;
  } catch (cause) {
    throw new UploadInputError("upload_file_unreadable", `Cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}
