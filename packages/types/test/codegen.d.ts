// The generator toolkit is plain JavaScript; this is the part the tests use.
declare module "@browser-service/codegen" {
  /** The bundled OpenAPI document. */
  export function loadDocument(): { components: Record<string, Record<string, Record<string, unknown>>> } & Record<string, unknown>;
}
