import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CdpRawClient } from "./support/cdp-raw-client.js";
import { chromiumBrowserPids, commandLine } from "./support/chromium-processes.js";
import { useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// A browser may be typing a stored password when it crashes: Chromium's crash reporter is
// off, so no minidump (a copy of the crashed process's memory) is written anywhere.

/** Every file under `dir`, however deep. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("a browser that crashes", () => {
  let launcher: TrackingLauncher;
  const t = useTestServer(() => {
    launcher = new TrackingLauncher();
    return { launcher };
  });

  it("runs without Chromium's crash reporter, and a crashed tab leaves no minidump", async () => {
    const browser = await t.client().browsers.create();
    const launched = launcher.latest();
    const args = chromiumBrowserPids(process.pid).flatMap((pid) => commandLine(pid) ?? []);
    expect(args).toContain("--disable-breakpad");
    expect(args.some((arg) => arg.startsWith("--enable-crash-reporter"))).toBe(false);

    const devtools = await CdpRawClient.open(browser.cdp_ws_url);
    const targets = (await devtools.send("Target.getTargets")).result?.targetInfos as { targetId: string; type: string }[];
    const page = targets.find((each) => each.type === "page") as { targetId: string };
    const session = (await devtools.send("Target.attachToTarget", { targetId: page.targetId, flatten: true })).result?.sessionId as string;
    devtools.post("Page.crash", {}, session);
    await expect.poll(() => devtools.received.some((message) => message.method === "Inspector.targetCrashed")).toBe(true);
    const dumps = filesUnder(launched.userDataDir as string).filter((file) => /\.dmp$|Crashpad|Crash Reports/i.test(file));
    expect(dumps).toEqual([]);
    devtools.ws.terminate();
    await t.client().browsers.delete(browser.id);
  });
});
