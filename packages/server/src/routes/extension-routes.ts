import { createHash } from "node:crypto";
import { open, rm } from "node:fs/promises";
import multipart from "@fastify/multipart";
import type { FastifyInstance } from "fastify";
import { inspectExtensionArchive } from "../extensions/archive-inspection.js";
import { ArchiveChecksumError, type Extension, type ExtensionStore } from "../extensions/extension-store.js";
import { receiveUpload } from "../extensions/upload-receiver.js";
import { BadRequestError, type ErrorDetail, NotFoundError, UnsupportedMediaTypeError } from "../http/api-errors.js";
import { pageOf, setPageHeaders } from "../http/paging.js";
import { bodyProblems, invalidRequest } from "../http/request-validation.js";
import type { ApiDeps } from "./api-deps.js";

// RFC 2046 5.1.1: a boundary is 1 to 70 characters, quoted or a token.
const BOUNDARY = /;\s*boundary\s*=\s*(?:"[^"]{1,70}"|[^\s;"]{1,70})\s*(?:;|$)/i;
// @fastify/busboy reports a malformed form with plain Errors, told apart only by these messages.
const MALFORMED_FORM = /^(Multipart: Boundary not found|Part terminated early|Unexpected end of multipart data|Malformed part header)/;

const badForm = (detail: ErrorDetail): BadRequestError => new BadRequestError("The form is invalid (1 problem).", [detail]);

/** The 400 for a form busboy could not read, or `error` itself. */
function formError(error: unknown): unknown {
  if (error instanceof Error && !("code" in error) && MALFORMED_FORM.test(error.message)) {
    return badForm({
      code: "invalid_multipart",
      message: `The multipart/form-data body cannot be read: ${error.message.replace(/\.+$/, "")}; send a complete form with its closing boundary.`,
    });
  }
  return error;
}

/** The project's extension of this id or name, or 404 `not_found`. */
async function extensionOf(store: ExtensionStore, projectId: string, idOrName: string): Promise<Extension> {
  const extension = await store.get(projectId, idOrName);
  if (extension === undefined) throw new NotFoundError(`No extension has the id or name ${JSON.stringify(idOrName)} in this project.`);
  return extension;
}

/**
 * `POST /extensions`: streamed, checked, all-or-nothing upload of an extension archive;
 * list, get, delete, and download byte for byte.
 */
export async function registerExtensionRoutes(app: FastifyInstance, { stores }: ApiDeps): Promise<void> {
  app.get("/extensions", { config: { operationId: "listExtensions" } }, async (request, reply) => {
    const query = request.query as { offset?: number; limit?: number; name?: string };
    const { offset, limit } = pageOf(query);
    const page = await stores.extensions.list((await request.scope.project()).id, { offset, limit, name: query.name });
    setPageHeaders(reply, offset, page.items.length, page.hasMore);
    return page.items;
  });

  app.get<{ Params: { id_or_name: string } }>("/extensions/:id_or_name/metadata", { config: { operationId: "getExtension" } }, async (request) =>
    extensionOf(stores.extensions, (await request.scope.project()).id, request.params.id_or_name),
  );

  app.delete<{ Params: { id_or_name: string } }>("/extensions/:id_or_name", { config: { operationId: "deleteExtension" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const extension = await extensionOf(stores.extensions, projectId, request.params.id_or_name);
    // A delete that another request finished first is that request's; this one finds nothing.
    if (!(await stores.extensions.delete(projectId, extension.id))) throw new NotFoundError(`The extension ${extension.id} was deleted meanwhile.`);
    return reply.code(204).send();
  });

  // The archive is hashed before a byte is sent, from the same open file that is then
  // streamed: what arrives is exactly what was uploaded, or an error instead of a body.
  app.get<{ Params: { id_or_name: string } }>("/extensions/:id_or_name", { config: { operationId: "downloadExtension" } }, async (request, reply) => {
    const projectId = (await request.scope.project()).id;
    const extension = await extensionOf(stores.extensions, projectId, request.params.id_or_name);
    const file = await open(await stores.extensions.archivePath(extension.id), "r").catch(async (error: unknown) => {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      // Deleted meanwhile is a 404; an archive missing under a live record is the server's fault.
      if ((await stores.extensions.get(projectId, extension.id)) === undefined) throw new NotFoundError(`The extension ${extension.id} was deleted meanwhile.`);
      throw new Error(`The archive of extension ${extension.id} is missing from the extensions folder.`, { cause: error });
    });
    try {
      const hash = createHash("sha256");
      for await (const chunk of file.createReadStream({ start: 0, autoClose: false })) hash.update(chunk as Buffer);
      const { size } = await file.stat();
      if (hash.digest("hex") !== extension.checksum || size !== extension.size_bytes) throw new ArchiveChecksumError(extension.id);
      const stream = file.createReadStream({ start: 0 });
      return reply
        .header("content-type", "application/zip")
        .header("content-length", String(size))
        .header("content-disposition", `attachment; filename="${extension.name ?? extension.id}.zip"`)
        .send(stream);
    } catch (error) {
      await file.close();
      throw error;
    }
  });

  // Only this route parses multipart/form-data; every other route answers it with 415.
  await app.register(async (scope) => {
    await scope.register(multipart);
    scope.post("/extensions", { config: { operationId: "uploadExtension", formBody: true } }, async (request, reply) => {
      if (!request.isMultipart()) throw new UnsupportedMediaTypeError("multipart/form-data", request.headers["content-type"]);
      if (!BOUNDARY.test(request.headers["content-type"] ?? "")) {
        throw badForm({ code: "invalid_multipart", message: "Content-Type multipart/form-data needs a boundary parameter of 1 to 70 characters." });
      }
      const project = await request.scope.project();
      const upload = await receiveUpload(request, stores.layout.uploadsDir).catch((error: unknown) => {
        throw formError(error);
      });
      try {
        const { file: fileField, ...fields } = upload.fields;
        const form: Record<string, unknown> = { ...fields };
        for (const name of upload.otherFiles) form[name] = "(file)";
        if (upload.tempPath !== undefined) form.file = "(file)";
        let formProblems = bodyProblems("uploadExtension", form);
        // A part without a filename is a text field to busboy: say so rather than "required".
        if (fileField !== undefined && upload.tempPath === undefined) {
          const notFile = { code: "not_a_file", message: '/file must be a file part: give its Content-Disposition a filename (filename="extension.zip").' };
          formProblems = [...formProblems.filter((problem) => !problem.message.startsWith("/file ")), notFile];
        }
        // A name given twice is a list where the schema has one string; which one was meant cannot be known.
        for (const name of new Set(upload.repeatedFields))
          formProblems.push({ code: "type", message: `/${name} must be given once; the form has it more than once.` });
        if (formProblems.length > 0) throw invalidRequest(formProblems);
        if (upload.tempPath === undefined) throw invalidRequest([{ code: "required", message: "/file is required." }]);
        const archiveProblems = await inspectExtensionArchive(upload.tempPath, upload.sizeBytes);
        if (archiveProblems.length > 0) throw invalidRequest(archiveProblems);
        const extension = await stores.extensions.insert({
          projectId: project.id,
          name: upload.fields.name,
          tempPath: upload.tempPath,
          sizeBytes: upload.sizeBytes,
          checksum: upload.checksum,
        });
        return reply.code(201).send(extension);
      } finally {
        if (upload.tempPath !== undefined) await rm(upload.tempPath, { force: true });
      }
    });
  });
}
