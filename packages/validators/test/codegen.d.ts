// The generator toolkit is plain JavaScript; these are the parts the tests use.
declare module "@browser-service/codegen" {
  /** The bundled OpenAPI document. */
  export function loadDocument(): { components: { schemas: Record<string, unknown> } } & Record<string, unknown>;
  /** Each generator: the document in, `{ fileName: text }` out. */
  export const generators: Record<"types" | "validators" | "client", (document: unknown) => Promise<Record<string, string>>>;
}
