import openapiTS, { astToString } from "openapi-typescript";
import { banner, listOperations, pascal } from "./document.mjs";
import { forTypeScript } from "./for-typescript.mjs";
import { generateLimits } from "./limits.mjs";

const docComment = (text) => {
  const lines = String(text ?? "")
    .trim()
    .split("\n");
  return lines[0] ? `/**\n${lines.map((l) => ` * ${l.replaceAll("*/", "*\\/")}`.trimEnd()).join("\n")}\n */\n` : "";
};

const statusOrder = (a, b) => Number(a.status) - Number(b.status);

/** The named exports: one per schema, and per operation its inputs, outputs and error codes. */
function namedExports(document) {
  const out = [banner("types"), `import type { components, operations } from "./openapi.js";\n`];
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    out.push(`\n${docComment(schema.description)}export type ${name} = components["schemas"]["${name}"];\n`);
  }
  const allCodes = new Set();
  for (const op of listOperations(document)) {
    const Name = pascal(op.id);
    const at = `operations["${op.id}"]`;
    out.push(`\n// ${op.method.toUpperCase()} ${op.path} (${op.id})\n`);
    const locations = { path: "PathParams", query: "Query", header: "Headers" };
    for (const [location, suffix] of Object.entries(locations)) {
      if (!op.parameters.some((p) => p.in === location)) continue;
      out.push(`/** The ${location} parameters of \`${op.id}\`. */\nexport type ${Name}${suffix} = NonNullable<${at}["parameters"]["${location}"]>;\n`);
    }
    if (op.requestBody) {
      const [mediaType] = Object.keys(op.requestBody.content);
      const body = `NonNullable<${at}["requestBody"]>["content"]["${mediaType}"]`;
      out.push(`/** The request body of \`${op.id}\` (${mediaType}). */\nexport type ${Name}RequestBody = ${body};\n`);
    }
    const responses = [...op.responses].sort(statusOrder);
    const success = responses.find((r) => r.status.startsWith("2"));
    // A body that is not JSON (an archive) reaches the caller as its exact bytes; a stream
    // of Server-Sent Events as the body's stream, read as it arrives.
    const mediaType = Object.keys(success.content ?? {})[0];
    const isStream = mediaType === "text/event-stream";
    const successType = !mediaType
      ? "void"
      : mediaType === "application/json"
        ? `${at}["responses"][${success.status}]["content"]["application/json"]`
        : isStream
          ? "ReadableStream<Uint8Array<ArrayBuffer>>"
          : "Uint8Array";
    const bodyNote = !mediaType || mediaType === "application/json" ? "" : isStream ? ` (${mediaType}, as the body's stream)` : ` (${mediaType}, as bytes)`;
    out.push(`/** The ${success.status} response body of \`${op.id}\`${bodyNote}. */\nexport type ${Name}Response = ${successType};\n`);
    const errors = responses.filter((r) => Number(r.status) >= 400);
    const errorMap = errors.map((r) => `  ${r.status}: ${at}["responses"][${r.status}]["content"]["application/json"];`);
    out.push(`/** The error bodies of \`${op.id}\`, by status. */\nexport interface ${Name}ErrorResponses {\n${errorMap.join("\n")}\n}\n`);
    const codes = [...new Set(errors.flatMap((r) => r["x-error-codes"] ?? []))].sort();
    codes.forEach((c) => allCodes.add(c));
    out.push(`/** Every error \`code\` that \`${op.id}\` can return. */\nexport type ${Name}ErrorCode = ${codes.map((c) => `"${c}"`).join(" | ")};\n`);
  }
  out.push(
    `\n/** Every error \`code\` that any operation of this API can return. */\nexport type ErrorCode =\n${[...allCodes]
      .sort()
      .map((c) => `  | "${c}"`)
      .join("\n")};\n`,
  );
  return out.join("");
}

/**
 * Generates `@browser-service/types`: openapi-typescript's `paths`, `components` and
 * `operations` (with "exactly one of" unions made exclusive and never-settable fields `never`), the named exports,
 * and `limits`, the one runtime value: every numeric rule of the spec as a constant.
 */
export async function generateTypes(document) {
  const ast = await openapiTS(forTypeScript(document), { alphabetize: false, defaultNonNullable: false });
  return {
    "openapi.ts": `${banner("types")}${astToString(ast)}`,
    "named.ts": namedExports(document),
    "limits.ts": generateLimits(document),
  };
}
