import { buildZip } from "./zip-writer.js";

/** An extension archive of these files (text), deflated; `manifest` is written as `manifest.json`. */
export function extensionZip(manifest: object | string, files: Record<string, string> = {}): Buffer {
  return buildZip([
    { name: "manifest.json", data: typeof manifest === "string" ? manifest : JSON.stringify(manifest), deflate: true },
    ...Object.entries(files).map(([name, data]) => ({ name, data, deflate: true })),
  ]);
}

/**
 * A Manifest V3 extension whose content script adds `marker` to every page's marks:
 * `<html data-marked-by="<marker> <marker>...">`, one word per marking extension.
 */
export function markingExtension(marker: string): Buffer {
  return extensionZip(
    {
      manifest_version: 3,
      name: `Marker ${marker}`,
      version: "1.0",
      content_scripts: [{ matches: ["<all_urls>"], js: ["mark.js"], run_at: "document_start" }],
    },
    {
      "mark.js": `document.documentElement.dataset.markedBy = [document.documentElement.dataset.markedBy, ${JSON.stringify(marker)}].filter(Boolean).join(" ");\n`,
    },
  );
}

const BLOCK_RULE = {
  id: 1,
  priority: 1,
  action: { type: "block" },
  condition: { urlFilter: "/blocked", resourceTypes: ["xmlhttprequest", "main_frame", "sub_frame", "script", "image", "other"] },
};

/**
 * A Manifest V3 extension whose service worker blocks every request whose URL contains
 * `/blocked`, with a declarativeNetRequest session rule (kept in the browser's profile).
 */
export function blockingExtension(): Buffer {
  return extensionZip(
    { manifest_version: 3, name: "Blocker", version: "1.0", permissions: ["declarativeNetRequest"], background: { service_worker: "sw.js" } },
    { "sw.js": `chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: [1], addRules: [${JSON.stringify(BLOCK_RULE)}] });\n` },
  );
}

/** The same blocker with a static ruleset (`rule_resources`), which Chromium must index into the extension's folder. */
export function staticRulesExtension(): Buffer {
  return extensionZip(
    {
      manifest_version: 3,
      name: "Static blocker",
      version: "1.0",
      permissions: ["declarativeNetRequest"],
      declarative_net_request: { rule_resources: [{ id: "rules", enabled: true, path: "rules.json" }] },
    },
    { "rules.json": JSON.stringify([BLOCK_RULE]) },
  );
}

/** A Manifest V3 extension whose content script registers a WebMCP tool `from_extension` in every page. */
export function toolExtension(): Buffer {
  return extensionZip(
    { manifest_version: 3, name: "Tool", version: "1.0", content_scripts: [{ matches: ["<all_urls>"], js: ["tool.js"], run_at: "document_end" }] },
    {
      "tool.js": `document.modelContext.registerTool({ name: "from_extension", description: "Registered by an extension.", execute: async () => ({ from: "extension" }) });\n`,
    },
  );
}
