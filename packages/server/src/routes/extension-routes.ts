import { rm } from "node:fs/promises";
import multipart from "@fastify/multipart";
import type { FastifyInstance } from "fastify";
import { UnsupportedMediaTypeError } from "../http/api-errors.js";
import { bodyProblems, invalidRequest } from "../http/request-validation.js";
import { inspectExtensionArchive } from "../extensions/archive-inspection.js";
import { receiveUpload } from "../extensions/upload-receiver.js";
import type { ApiDeps } from "./api-deps.js";

/** `POST /extensions`: streamed, checked, all-or-nothing upload of an extension archive. */
export async function registerExtensionRoutes(app: FastifyInstance, { stores }: ApiDeps): Promise<void> {
  // Only this route parses multipart/form-data; every other route answers it with 415.
  await app.register(async (scope) => {
    await scope.register(multipart);
    scope.post("/extensions", { config: { operationId: "uploadExtension", formBody: true } }, async (request, reply) => {
      if (!request.isMultipart()) throw new UnsupportedMediaTypeError("multipart/form-data", request.headers["content-type"]);
      const project = request.scope.project();
      const upload = await receiveUpload(request, stores.layout.uploadsDir);
      try {
        const form: Record<string, unknown> = { ...upload.fields };
        for (const name of upload.otherFiles) form[name] = "(file)";
        if (upload.tempPath !== undefined) form.file = "(file)";
        const formProblems = bodyProblems("uploadExtension", form);
        if (formProblems.length > 0 || upload.tempPath === undefined) throw invalidRequest(formProblems);
        const archiveProblems = await inspectExtensionArchive(upload.tempPath, upload.sizeBytes);
        if (archiveProblems.length > 0) throw invalidRequest(archiveProblems);
        const extension = stores.extensions.insert({
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
