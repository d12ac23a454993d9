import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { ARCHIVE_LIMITS } from "../extensions/archive-rules.js";
import { type UnpackBudget, UnpackBudgetError, unpackExtensionArchive } from "../extensions/archive-unpacking.js";
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
 * Together they unpack to at most `launched.extensionsBytes` and as many entries as one
 * archive may hold: the copies are on the host's disk, outside the profile's capped
 * tmpfs. An extension the browser refuses, or one past that bound, is 422
 * `extension_load_failed` naming it and saying why; the caller ends the browser, whose
 * folder goes with its profile.
 */
export async function loadExtensions(launched: LaunchedBrowser, extensions: readonly ExtensionToLoad[]): Promise<void> {
  if (extensions.length === 0) return;
  if (launched.extensionsDir === undefined || launched.extensionsBytes === undefined) {
    throw new Error("This browser has no extensions folder; its launcher cannot load extensions.");
  }
  const budget: UnpackBudget = { bytes: launched.extensionsBytes, entries: ARCHIVE_LIMITS.maxEntries };
  for (const extension of extensions) {
    const label = extension.name === null ? extension.id : `"${extension.name}" (${extension.id})`;
    const dir = join(launched.extensionsDir, extension.id);
    try {
      await unpackExtensionArchive(extension.archivePath, dir, budget);
    } catch (error) {
      if (!(error instanceof UnpackBudgetError)) throw error;
      throw new ExtensionLoadFailedError(
        `The browser cannot load extension ${label}: its extensions together may unpack to at most ${launched.extensionsBytes} bytes and ${ARCHIVE_LIMITS.maxEntries} entries, and ${error.message}.`,
      );
    }
    const problem = await readOnlyProblem(dir);
    if (problem !== undefined) throw new ExtensionLoadFailedError(`The browser cannot load extension ${label}: ${problem}.`);
    try {
      await launched.cdp.call("Extensions.loadUnpacked", { path: dir, enableInIncognito: true });
    } catch (error) {
      throw new ExtensionLoadFailedError(`The browser refused to load extension ${label}: ${browserReason(error)}.`, error);
    }
  }
}
