import { readFile } from "#platform";
import { UploadInputError } from "./errors.js";

/**
 * The content of a binary part: a file path (Node only), bytes (`Uint8Array`, `Buffer`,
 * `ArrayBuffer`), a `Blob` or `File`, or a web `ReadableStream` (read to its end before
 * sending; a Node stream converts with `Readable.toWeb`).
 */
export type UploadFile = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/** A multipart body type whose binary parts `F` take an {@link UploadFile}. */
export type FormBody<B, F extends keyof B> = Omit<B, F> & { [K in F]: UploadFile };

/** The content of one binary part and the file name to send with it. */
async function readPart(value: unknown, field: string): Promise<[BlobPart, string]> {
  if (typeof value === "string") return [await readFile(value), value.split(/[\\/]/).pop()!];
  if (value instanceof ReadableStream) value = await new Response(value).blob();
  if (value instanceof Blob || value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return [value as BlobPart, (value as File).name ?? field];
  throw new UploadInputError("upload_input_invalid", `${field} must be a path, bytes, a Blob or a ReadableStream, not ${value}`);
}

/**
 * The `multipart/form-data` body of an operation: each binary part (`files` maps its name
 * to its content type) becomes a file part, every other defined field a text part.
 */
export async function toFormData(body: Record<string, unknown>, files: Record<string, string>): Promise<FormData> {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    const type = files[name];
    if (type) {
      const [content, fileName] = await readPart(value, name);
      form.append(name, new Blob([content], { type }), fileName);
    } else if (value !== undefined) {
      form.append(name, String(value));
    }
  }
  return form;
}
