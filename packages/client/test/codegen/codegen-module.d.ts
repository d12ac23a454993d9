// The generator toolkit is plain JavaScript; this is the part of it that the tests call.
declare module "@browser-service/codegen" {
  /** The bundled API document. */
  export function loadDocument(): OpenApiDocument;
  /** Each generator: the document in, `{ fileName: text }` out. */
  export const generators: Record<string, (document: OpenApiDocument) => Promise<Record<string, string>>>;
  /** Enough of an OpenAPI document for the tests to build variants of it. */
  export interface OpenApiDocument {
    servers?: { url: string }[];
    paths: Record<string, Record<string, any>>;
    components?: Record<string, any>;
  }
}
