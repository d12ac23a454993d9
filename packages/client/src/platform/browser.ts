import { UploadInputError } from "../errors.js";
import { bufferedFetch, type Transport } from "../transport.js";

/** Browsers and workers (every build but Node's): the global `fetch`, looked up at call time. */
export const transport: Transport = bufferedFetch((input, init) => fetch(input, init));

/** File paths need a file system; outside Node, pass the file's bytes or a `Blob` instead. */
export function readFile(path: string): Promise<Uint8Array<ArrayBuffer>> {
  return Promise.reject(new UploadInputError("upload_path_unsupported", `File paths need Node (${path}); pass bytes or a Blob`));
}
