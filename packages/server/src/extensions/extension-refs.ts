import type { ExtensionRef } from "@browser-service/types";
import { BadRequestError, ExtensionNotFoundError } from "../http/api-errors.js";
import type { ExtensionStore, ExtensionUse } from "./extension-store.js";

/**
 * The extensions a create names, in its order: each entry resolved in the project
 * (404 `extension_not_found` naming the first entry that names nothing), and no extension
 * named twice, by id and by name say (400 `bad_request`, detail `duplicate_extension`).
 */
export async function resolveExtensionRefs(store: ExtensionStore, projectId: string, refs: readonly ExtensionRef[]): Promise<ExtensionUse[]> {
  const resolved: ExtensionUse[] = [];
  const duplicates: { code: string; message: string }[] = [];
  const firstIndex = new Map<string, number>();
  for (const [index, ref] of refs.entries()) {
    const [by, value] = "id" in ref ? (["id", ref.id] as const) : (["name", ref.name] as const);
    const found = await store.find(projectId, by, value);
    if (found === undefined) throw new ExtensionNotFoundError(`extensions[${index}]: no extension of this project has the ${by} ${JSON.stringify(value)}.`);
    const earlier = firstIndex.get(found.id);
    if (earlier !== undefined) {
      duplicates.push({
        code: "duplicate_extension",
        message: `/extensions/${index} names the extension ${found.id} that /extensions/${earlier} names already.`,
      });
      continue;
    }
    firstIndex.set(found.id, index);
    resolved.push(found);
  }
  if (duplicates.length > 0) throw new BadRequestError("An extension is named more than once in extensions.", duplicates);
  return resolved;
}
