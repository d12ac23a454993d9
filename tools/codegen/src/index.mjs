export { listOperations, loadDocument } from "./document.mjs";
export { forTypeScript } from "./for-typescript.mjs";
export { collectLimits } from "./limits.mjs";

/**
 * Each generator takes the bundled document and returns `{ fileName: text }`; they are
 * loaded on demand so that one package's build does not load another's generator.
 */
export const generators = {
  types: async (document) => (await import("./types.mjs")).generateTypes(document),
  validators: async (document) => (await import("./validators.mjs")).generateValidators(document),
  client: async (document) => (await import("./client.mjs")).generateClient(document),
};
