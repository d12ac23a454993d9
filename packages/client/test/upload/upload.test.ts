import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, type UploadFile, UploadInputError } from "../../src/index.js";
import type { SeenRequest } from "../helpers/test-server.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

let server: TestServer;
let dir: string;
// Bytes that are not valid UTF-8 and span many chunks, so that any re-encoding shows.
const archive = randomBytes(300_000);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), "client-upload-"));
  await writeFile(join(dir, "ad-blocker.zip"), archive);
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true });
});
beforeEach(() => {
  server.requests.length = 0;
  // The server answers with the SHA-256 and size of the `file` part it parsed, as the service does.
  server.route("POST", "/extensions", (request, response) => {
    void parts(request).then(({ file, name }) => {
      const bytes = new Uint8Array(file.bytes);
      response.writeHead(201, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ id: "ext_1", name, size_bytes: bytes.length, checksum: sha256(bytes), created_at: "2025-01-01T00:00:00Z" }));
    });
  });
});

/** The multipart parts as a real parser (undici's FormData) reads them. */
async function parts(request: SeenRequest) {
  const form = await new Response(request.body as Uint8Array<ArrayBuffer>, { headers: { "content-type": request.headers["content-type"] ?? "" } }).formData();
  const file = form.get("file") as File;
  return { file: { bytes: await file.arrayBuffer(), type: file.type, fileName: file.name }, name: form.get("name") ?? undefined };
}

const stream = (bytes: Uint8Array, chunk = 65_536) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += chunk) controller.enqueue(bytes.subarray(i, i + chunk));
      controller.close();
    },
  });

const inputs: [kind: string, make: () => UploadFile, fileName: string][] = [
  ["a file path", () => join(dir, "ad-blocker.zip"), "ad-blocker.zip"],
  ["a Buffer", () => Buffer.from(archive), "file"],
  ["a Uint8Array", () => new Uint8Array(archive), "file"],
  ["an ArrayBuffer", () => archive.buffer.slice(archive.byteOffset, archive.byteOffset + archive.length), "file"],
  ["a Blob", () => new Blob([archive]), "file"],
  ["a File", () => new File([archive], "my-extension.zip", { type: "application/octet-stream" }), "my-extension.zip"],
  ["a web ReadableStream", () => stream(archive), "file"],
];

describe.each(transports)("extension upload over the %s", (_, transport) => {
  const client = () => createClient(testOptions(server.url, transport));

  it.each(inputs)("sends %s byte for byte as the application/zip part `file`", async (_, make, fileName) => {
    const extension = await client().extensions.upload({ file: make(), name: "ad-blocker" });
    expect(extension).toMatchObject({ id: "ext_1", name: "ad-blocker", size_bytes: archive.length, checksum: sha256(archive) });
    const [request] = server.requests;
    expect(request!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    const { file, name } = await parts(request!);
    expect(file.type).toBe("application/zip");
    expect(file.fileName).toBe(fileName);
    expect(name).toBe("ad-blocker");
  });

  it("sends no name part when no name is given", async () => {
    const extension = await client().extensions.upload({ file: new Uint8Array(archive) });
    expect(extension.checksum).toBe(sha256(archive));
    expect((await parts(server.requests[0]!)).name).toBeUndefined();
  });

  it("refuses an input it cannot send, before sending anything", async () => {
    const error = await client()
      .extensions.upload({ file: 42 as unknown as UploadFile })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadInputError);
    expect(error).toMatchObject({ code: "upload_input_invalid" });
    expect(server.requests).toHaveLength(0);
  });

  it("reports a file it cannot read, with the file system's error as the cause", async () => {
    const error = await client()
      .extensions.upload({ file: join(dir, "missing.zip") })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UploadInputError);
    expect(error).toMatchObject({ code: "upload_file_unreadable", cause: { code: "ENOENT" } });
    expect(server.requests).toHaveLength(0);
  });
});
