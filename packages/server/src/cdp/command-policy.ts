import { posix } from "node:path";

/** Where a browser's commands may point on the server, as {@link judgeCommand} needs it. */
export interface CommandPolicyContext {
  /** Where `Browser.setDownloadBehavior` and `Page.setDownloadBehavior` always point. */
  downloadPath: string;
  /** The only directory whose files a client may hand to a page (`DOM.setFileInputFiles`, `Input.dispatchDragEvent`); `undefined`: none. */
  filesRoot: string | undefined;
}

/** What the router does with a command: refuse it with a message, or send it with these params. */
export type CommandVerdict =
  | { kind: "refuse"; message: string }
  /** `params` are the ones to send: the command's own, or a copy the policy rewrote. */
  | { kind: "send"; params: Record<string, unknown> | undefined };

/**
 * Schemes a client may open a page or load a resource at. `file:` is the point: a page
 * the server opened on a host path would show that file to the client. An allow-list, so
 * that `view-source:file:`, `filesystem:`, `chrome:` (whose debug pages such as
 * `chrome://inducebrowsercrashforrealz` end the browser) and schemes Chromium adds later
 * stay out too. `about:` only as `about:blank` and `about:srcdoc`: Chromium turns every
 * other `about:` URL into the `chrome:` page of the same name.
 */
export const ALLOWED_URL_SCHEMES = ["http:", "https:", "data:", "blob:", "chrome-extension:", "about:"] as const;
const ABOUT_PAGES = new Set(["blank", "srcdoc"]);

// Commands refused whatever their parameters, with the reason the client is told.
const REFUSED_METHODS = new Map<string, string>([
  // It would open a TCP port in the browser, reachable by every local user.
  ["Tethering.bind", "Tethering is disabled on this service: it would open a TCP port on the server."],
  ["Browser.crash", "Browser.crash is refused on this service: end the browser with Browser.close or DELETE /browsers/{id}."],
  ["Browser.crashGpuProcess", "Browser.crashGpuProcess is refused on this service: it could end the browser behind the server's back."],
  // It opens Chromium's own UI (tab search and the like), whose pages hold privileged bindings.
  ["Browser.executeBrowserCommand", "Browser.executeBrowserCommand is refused on this service: it opens the browser's own UI, which clients may not drive."],
  ["Extensions.loadUnpacked", "Extensions.loadUnpacked is refused on this service: it reads a directory of the server; upload extensions through the API."],
  ["Extensions.uninstall", "Extensions.uninstall is refused on this service: the server manages the browser's extensions."],
  // Its commands travel inside a string the router would have to parse and route again.
  ["Target.sendMessageToTarget", "Target.sendMessageToTarget is refused on this service: attach with flatten: true and send each command with its sessionId."],
  // It hands page script a browser-wide DevTools session that the server never sees.
  [
    "Target.exposeDevToolsProtocol",
    "Target.exposeDevToolsProtocol is refused on this service: it would give page script a DevTools session the server cannot see.",
  ],
  // Its devtools:// page talks to the browser through a session of its own, past these rules.
  [
    "Target.openDevTools",
    "Target.openDevTools is refused on this service: the DevTools front end would hold a session the server cannot see; connect a DevTools client to cdp_ws_url instead.",
  ],
]);

// Commands that attach sessions: only flat ones, whose commands carry a sessionId the
// router checks. (Target.autoAttachRelated has no flatten parameter: Chromium always
// attaches it flat.)
const FLAT_ONLY_METHODS = new Set(["Target.attachToTarget", "Target.setAutoAttach"]);

// Where each command that opens a URL keeps it. `Target.createTarget` treats "" as about:blank.
const URL_PARAMS = new Map<string, string>([
  ["Page.navigate", "url"],
  ["Target.createTarget", "url"],
  ["Network.loadNetworkResource", "url"],
  ["Fetch.continueRequest", "url"],
  ["Network.continueInterceptedRequest", "url"],
  // A web bundle may be named by a file path.
  ["PWA.install", "installUrlOrBundleUrl"],
]);

const DOWNLOAD_METHODS = new Set(["Browser.setDownloadBehavior", "Page.setDownloadBehavior"]);

/**
 * Whether the router looks into (and may rewrite) this method's params. For these, the
 * command the browser receives is the server's own serialization of the params it
 * checked, never the client's text: with duplicate keys in that text, the server and
 * Chromium could each read a different value.
 */
export function paramsInspected(method: string): boolean {
  return (
    method.startsWith("Target.") ||
    REFUSED_METHODS.has(method) ||
    URL_PARAMS.has(method) ||
    DOWNLOAD_METHODS.has(method) ||
    method === "DOM.setFileInputFiles" ||
    method === "Input.dispatchDragEvent"
  );
}

/**
 * The rules a client's command must pass before it reaches the browser, by method and
 * params (already parsed and depth-checked): refusals of commands that would end the
 * browser behind the server's back, carry commands the router cannot see, or reach the
 * server's files; and the download path rewritten into the browser's own folder.
 */
export function judgeCommand(method: string, params: Record<string, unknown> | undefined, context: CommandPolicyContext): CommandVerdict {
  const refused = REFUSED_METHODS.get(method);
  if (refused !== undefined) return { kind: "refuse", message: refused };
  if (method === "Target.createBrowserContext" && (params?.proxyServer !== undefined || params?.proxyBypassList !== undefined)) {
    // In the sandbox a context's own proxy could reach only the browser's loopback; refused
    // all the same, so the egress policy is never a matter of where a client points.
    return {
      kind: "refuse",
      message:
        "Target.createBrowserContext refuses proxyServer and proxyBypassList on this service: every browser's traffic leaves through the service's egress proxy.",
    };
  }
  if (FLAT_ONLY_METHODS.has(method) && params?.flatten !== true) {
    return {
      kind: "refuse",
      message: `${method} needs flatten: true on this service: pass flatten: true (Playwright and Puppeteer always do); a session that is not flat would carry commands the server cannot see.`,
    };
  }
  const urlParam = URL_PARAMS.get(method);
  if (urlParam !== undefined) {
    const url = params?.[urlParam];
    if (url !== undefined && !(method === "Target.createTarget" && url === "")) {
      const problem = urlProblem(url);
      if (problem !== undefined) return { kind: "refuse", message: `${method} refuses ${excerpt(url)}: ${problem}` };
    }
  }
  if (method === "DOM.setFileInputFiles" || method === "Input.dispatchDragEvent") {
    const files = method === "DOM.setFileInputFiles" ? params?.files : (params?.data as { files?: unknown } | undefined)?.files;
    if (files !== undefined) {
      const checked = checkedFiles(files, context.filesRoot);
      if (typeof checked === "string") return { kind: "refuse", message: `${method}: ${checked}` };
      if (method === "DOM.setFileInputFiles") return { kind: "send", params: { ...params, files: checked } };
      return { kind: "send", params: { ...params, data: { ...(params?.data as object), files: checked } } };
    }
  }
  if (DOWNLOAD_METHODS.has(method)) {
    // Downloads land in the browser's own capped folder, never where a client's path points,
    // nor in the browser's default folder ("default"), which is outside the cap.
    if (params?.behavior === "deny") {
      const { downloadPath: _ignored, ...rest } = params;
      return { kind: "send", params: rest };
    }
    return {
      kind: "send",
      params: {
        ...params,
        behavior: params?.behavior === "default" || params?.behavior === undefined ? "allow" : params.behavior,
        downloadPath: context.downloadPath,
      },
    };
  }
  return { kind: "send", params };
}

/** Why a client may not open `url`, or `undefined` when it may. */
function urlProblem(url: unknown): string | undefined {
  const allowed = `this service opens only ${ALLOWED_URL_SCHEMES.filter((scheme) => scheme !== "about:")
    .map((scheme) => scheme.slice(0, -1))
    .join(", ")} URLs and about:blank or about:srcdoc.`;
  if (typeof url !== "string") return "the URL must be a string.";
  let parsed: URL;
  try {
    // The WHATWG parser trims and drops tabs and newlines as Chromium does, so both read the same scheme.
    parsed = new URL(url);
  } catch {
    return `it is not an absolute URL; ${allowed}`;
  }
  if (!(ALLOWED_URL_SCHEMES as readonly string[]).includes(parsed.protocol)) return allowed;
  if (parsed.protocol === "about:" && !ABOUT_PAGES.has(parsed.pathname)) return allowed;
  return undefined;
}

/**
 * The files as they will be sent (each resolved, so no `..` reaches Chromium), or why
 * they are refused: a file must be an absolute path without NUL inside `root`. Relative
 * paths are refused: Chromium would resolve them against its own working directory.
 */
function checkedFiles(files: unknown, root: string | undefined): string[] | string {
  if (!Array.isArray(files) || !files.every((file): file is string => typeof file === "string")) return "files must be an array of paths.";
  if (root === undefined) return "this service accepts no files from the server's disk; pass the file's contents instead.";
  const inside = `${posix.resolve(root)}/`;
  const resolved: string[] = [];
  for (const file of files) {
    const refusal = `${excerpt(file)} is refused: only files inside the browser's own profile directory (${inside}) may be handed to a page; pass other files' contents instead.`;
    if (file.includes("\0") || !posix.isAbsolute(file)) return refusal;
    const path = posix.resolve(file);
    if (!path.startsWith(inside)) return refusal;
    resolved.push(path);
  }
  return resolved;
}

/** A value for a refusal message, cut short so an answer never echoes a huge string. */
function excerpt(value: unknown): string {
  const text = typeof value === "string" ? value : typeof value;
  return text.length > 100 ? `${JSON.stringify(text.slice(0, 100)).slice(0, -1)}…"` : JSON.stringify(text);
}
