import { describe, expect, it } from "vitest";
import { ConfigError, readConfig } from "../../src/index.js";

const error = (run: () => unknown) => {
  try {
    run();
  } catch (caught) {
    expect(caught).toBeInstanceOf(ConfigError);
    return (caught as ConfigError).code;
  }
  throw new Error("no error");
};

describe("readConfig", () => {
  it("has defaults: stdio, a blank browser created and deleted, 1 s polls, 30 s calls", () => {
    expect(readConfig([], {})).toMatchObject({
      browser: undefined,
      startUrl: undefined,
      keep: false,
      httpPort: undefined,
      host: "127.0.0.1",
      pollIntervalMs: 1000,
      timeoutSec: 30,
      show: undefined,
    });
  });

  it("reads the BROWSER_SERVICE_* variables, and flags win over them", () => {
    const env = {
      BROWSER_SERVICE_BROWSER: "shop",
      BROWSER_SERVICE_PROJECT_ID: "proj_1",
      BROWSER_SERVICE_MCP_POLL_MS: "250",
      BROWSER_SERVICE_MCP_HTTP_PORT: "8931",
      BROWSER_SERVICE_MCP_TOKEN: "a-token-of-twenty-chars",
    };
    expect(readConfig([], env)).toMatchObject({ browser: "shop", projectId: "proj_1", pollIntervalMs: 250, httpPort: 8931, token: "a-token-of-twenty-chars" });
    expect(readConfig(["--browser", "other", "--poll-interval", "500", "--http", "0"], env)).toMatchObject({
      browser: "other",
      pollIntervalMs: 500,
      httpPort: 0,
    });
    expect(readConfig(["--start-url", "http://127.0.0.1:3000/", "--name", "agent", "--keep"], {})).toMatchObject({
      startUrl: "http://127.0.0.1:3000/",
      name: "agent",
      keep: true,
    });
  });

  it("reads extra allowed hosts from repeated --allowed-host, or BROWSER_SERVICE_MCP_ALLOWED_HOSTS, and refuses what is not host[:port]", () => {
    expect(readConfig([], {}).allowedHosts).toEqual([]);
    expect(readConfig([], { BROWSER_SERVICE_MCP_ALLOWED_HOSTS: "bridge.example, proxy.example:8443,[fd00::2]" }).allowedHosts).toEqual([
      "bridge.example",
      "proxy.example:8443",
      "[fd00::2]",
    ]);
    expect(
      readConfig(["--allowed-host", "a.example", "--allowed-host", "b.example:80"], { BROWSER_SERVICE_MCP_ALLOWED_HOSTS: "c.example" }).allowedHosts,
    ).toEqual(["a.example", "b.example:80"]);
    for (const bad of ["evil@127.0.0.1", "http://a.example", "a.example/path", "fd00::2", "a.example:99999", "*"]) {
      expect(error(() => readConfig(["--allowed-host", bad], {}))).toBe("invalid_option");
    }
  });

  it("refuses what it cannot use, before anything starts", () => {
    expect(error(() => readConfig(["--nope"], {}))).toBe("unknown_option");
    expect(error(() => readConfig(["stray"], {}))).toBe("unknown_option");
    expect(error(() => readConfig(["--browser", "b", "--start-url", "http://x/"], {}))).toBe("conflicting_options");
    expect(error(() => readConfig(["--browser", "b", "--keep"], {}))).toBe("conflicting_options");
    expect(error(() => readConfig(["--start-url", "not a url"], {}))).toBe("invalid_option");
    expect(error(() => readConfig(["--poll-interval", "10"], {}))).toBe("invalid_option");
    expect(error(() => readConfig(["--timeout-sec", "121"], {}))).toBe("invalid_option");
    expect(error(() => readConfig(["--http", "1e3"], {}))).toBe("invalid_option");
    expect(error(() => readConfig([], { BROWSER_SERVICE_MCP_TOKEN: "short" }))).toBe("invalid_option");
  });
});
