import { describe, expect, it } from "vitest";

// The package's entry point is its API: embedding the bridge, its command's config, the
// HTTP host and the stdio transport. How tools are named, described and listed stays
// inside, free to change in any release.

describe("the package's exports", () => {
  it("are its API and nothing of its insides", async () => {
    const exported = Object.keys(await import("../../src/index.js")).sort();
    expect(exported).toEqual(
      [
        "CatalogStdioServerTransport",
        "ConfigError",
        "McpBridgeError",
        "bridgeIdentity",
        "createBridge",
        "helpText",
        "liveViewResourceUri",
        "mcpAppMimeType",
        "mcpPath",
        "readConfig",
        "serveHttp",
        "showBrowserToolName",
      ].sort(),
    );
  });
});
