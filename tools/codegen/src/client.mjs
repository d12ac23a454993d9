import { describeOperations } from "./client-operations.mjs";
import { banner } from "./document.mjs";

const doc = (lines, indent) => `${indent}/**\n${lines.map((l) => `${indent} * ${l.replaceAll("*/", "*\\/")}`.trimEnd()).join("\n")}\n${indent} */\n`;

/** One row of the runtime table (see `OperationRow` in packages/client/src/operation-row.ts). */
function row(op) {
  const rules = {};
  if (op.paged) rules.paged = true;
  if (op.noRetry) rules.noRetry = true;
  if (op.timeoutSec !== undefined) rules.timeoutSec = op.timeoutSec;
  if (op.conditional) rules.conditional = true;
  if (op.binary) rules.binary = true;
  if (op.stream) rules.stream = true;
  if (op.files) rules.files = op.files;
  // The path parameter's name is the path's one {placeholder}: the facade reads it there.
  const cells = [op.resource, op.method, op.httpMethod, op.path, op.input];
  if (Object.keys(rules).length) cells.push(rules);
  return `  ${JSON.stringify(cells)},`;
}

/** The runtime part: the base URL of the document's first server and one row per operation. */
function operationsFile(document, operations) {
  const baseUrl = document.servers?.[0]?.url ?? "";
  return `${banner("client")}import type { OperationRow } from "../operation-row.js";

/** The URL of the API document's first server: the base URL when none is configured. */
export const documentBaseUrl = ${JSON.stringify(baseUrl)};

/** Every operation of the API document, one row each, in document order. */
export const operations: readonly OperationRow[] = [
${operations.map(row).join("\n")}
];
`;
}

/** The parameter list of one facade method, typed from `@browser-service/types`. */
function parameters(op) {
  const list = [];
  if (op.pathParam) list.push(`${op.pathParam}: T.${op.Name}PathParams[${JSON.stringify(op.pathParam)}]`);
  const optional = op.inputOptional ? "?" : "";
  if (op.input === "query") list.push(`query${optional}: T.${op.Name}Query`);
  if (op.input === "json") list.push(`body${optional}: T.${op.Name}RequestBody`);
  if (op.input === "form") {
    const files = Object.keys(op.files)
      .map((f) => JSON.stringify(f))
      .join(" | ");
    list.push(`body${optional}: FormBody<T.${op.Name}RequestBody, ${files}>`);
  }
  list.push("options?: RequestOptions");
  return list.join(", ");
}

function methodDocs(op) {
  const lines = [`${op.summary.replace(/\.?$/, ".")}`, "", `\`${op.httpMethod} ${op.path}\` (\`${op.id}\`).`];
  if (op.noRetry) lines.push("", "Never retried: the server may answer `outcome_unknown`, and a retry could run the action twice.");
  if (op.timeoutSec !== undefined) {
    lines.push("", `The request timeout always exceeds \`timeout_sec\` (default ${op.timeoutSec}).`);
  }
  if (op.stream) {
    lines.push(
      "",
      "Resolves to the response body's stream (`text/event-stream`) as soon as the headers arrive: the request timeout covers",
      "only those, and the `signal` option stops the stream. An error status rejects as for any other call.",
    );
  }
  return lines;
}

/** The type side of the facade: one interface member per operation, plus the raw methods. */
function facadeFile(operations) {
  const resources = new Map();
  for (const op of operations) {
    if (!resources.has(op.resource)) resources.set(op.resource, []);
    resources.get(op.resource).push(op);
  }
  const members = [...resources].map(([resource, ops]) => {
    const methods = ops.flatMap((op) => {
      const out = [`${doc(methodDocs(op), "    ")}    ${op.method}(${parameters(op)}): Promise<T.${op.Name}Response>;\n`];
      if (op.paged) {
        const lines = [
          `Every item of \`${op.method}\`, page after page (\`X-Has-More\`, \`X-Next-Offset\`), starting at \`query.offset\`.`,
          "",
          "Throws `PaginationError` instead of stopping early when the paging headers disagree.",
        ];
        out.push(`${doc(lines, "    ")}    ${op.method}All(${parameters(op)}): AsyncGenerator<T.${op.Name}Response[number], void, undefined>;\n`);
      }
      if (op.conditional) {
        const lines = [
          `\`${op.method}\` unless the version \`etag\` names is still the current one (\`If-None-Match\`).`,
          "",
          "Resolves to `{ changed: true, data, etag }`, or to `{ changed: false, etag }` when the server answers `304 Not Modified`. Pass `null` for no version (the first call).",
        ];
        const id = op.pathParam ? `${op.pathParam}: T.${op.Name}PathParams[${JSON.stringify(op.pathParam)}], ` : "";
        out.push(
          `${doc(lines, "    ")}    ${op.method}IfChanged(${id}etag: string | null | undefined, options?: RequestOptions): Promise<ConditionalResponse<T.${op.Name}Response>>;\n`,
        );
      }
      return out;
    });
    return `  /** Operations of the \`${resource}\` resource. */\n  readonly ${resource}: {\n${methods.join("")}  };\n`;
  });
  const httpMethods = [...new Set(operations.map((op) => op.httpMethod))];
  const raw = httpMethods.map(
    (m) => `  /** Calls a \`${m}\` operation by its path, with openapi-fetch's typing from \`paths\`. */\n  readonly ${m}: RawMethod<"${m.toLowerCase()}">;\n`,
  );
  return `${banner("client")}import type * as T from "@browser-service/types";
import type { ConditionalResponse } from "../conditional.js";
import type { FormBody } from "../upload.js";
import type { RequestOptions } from "../options.js";
import type { RawMethod } from "../raw.js";

/** The operation facade, one method per operation, named by its \`x-client\`. */
export interface Resources {
${members.join("")}}

/** openapi-fetch's methods, one per HTTP method that the API document uses. */
export interface RawMethods {
${raw.join("")}}
`;
}

/**
 * Generates the client's operation facade from the bundled document: a small runtime
 * table (`operations.ts`) that the hand-written facade turns into methods, and the
 * TypeScript declarations of those methods (`facade.ts`), typed from
 * `@browser-service/types`.
 */
export function generateClient(document) {
  const operations = describeOperations(document);
  return {
    "operations.ts": operationsFile(document, operations),
    "facade.ts": facadeFile(operations),
  };
}
