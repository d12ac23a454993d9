import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { unpackExtensionArchive } from "../extensions/archive-unpacking.js";
import type { ExtensionUse } from "../extensions/extension-store.js";
import { ExtensionLoadFailedError } from "../http/api-errors.js";
import type { LaunchedBrowser } from "./browser-launcher.js";

/** An extension a create names, with where its archive is stored. */
export interface ExtensionToLoad extends ExtensionUse {
  archivePath: string;
}

/** What a refusal of `Extensions.loadUnpacked` says, without DevTools' framing. */
function browserReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Extensions\.loadUnpacked:\s*/, "").replace(/\.+$/, "");
}

/**
 * Why the browser cannot run this unpacked extension from a read-only folder, or
 * `undefined`: Chromium indexes static declarativeNetRequest rulesets into the
 * extension's own folder (`_metadata/`), and answers only "Internal error while parsing
 * rules" when it cannot write there.
 */
async function readOnlyProblem(dir: string): Promise<string | undefined> {
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(dir, "manifest.json"), "utf8"));
  } catch {
    // Chromium reads the manifest itself and says what is wrong with it.
    return undefined;
  }
  const rules = (manifest as { declarative_net_request?: { rule_resources?: unknown } } | null)?.declarative_net_request?.rule_resources;
  if (Array.isArray(rules) && rules.length > 0) {
    return "static declarativeNetRequest rulesets (declarative_net_request.rule_resources) are not supported, because the browser reads extensions from a read-only folder; add the rules with chrome.declarativeNetRequest.updateDynamicRules or updateSessionRules instead";
  }
  return undefined;
}

/**
 * Loads `extensions` into a running browser, in order: each archive is unpacked into the
 * browser's extensions folder (read-only to it) and loaded with `Extensions.loadUnpacked`,
 * in every browser context (`enableInIncognito`, since clients may create contexts).
 * An extension the browser refuses is 422 `extension_load_failed` naming it and giving
 * the browser's reason; the caller ends the browser, whose folder goes with its profile.
 */
export async function loadExtensions(launched: LaunchedBrowser, extensions: readonly ExtensionToLoad[]): Promise<void> {
  if (extensions.length === 0) return;
  if (launched.extensionsDir === undefined) throw new Error("This browser has no extensions folder; its launcher cannot load extensions.");
  for (const extension of extensions) {
    const label = extension.name === null ? extension.id : `"${extension.name}" (${extension.id})`;
    const dir = join(launched.extensionsDir, extension.id);
    await unpackExtensionArchive(extension.archivePath, dir);
    const problem = await readOnlyProblem(dir);
    if (problem !== undefined) throw new ExtensionLoadFailedError(`The browser cannot load extension ${label}: ${problem}.`);
    try {
      await launched.cdp.call("Extensions.loadUnpacked", { path: dir, enableInIncognito: true });
    } catch (error) {
      throw new ExtensionLoadFailedError(`The browser refused to load extension ${label}: ${browserReason(error)}.`, error);
    }
  }
}
