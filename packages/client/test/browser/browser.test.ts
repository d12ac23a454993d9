import { fileURLToPath } from "node:url";
import { createContext, runInContext } from "node:vm";
import { build } from "esbuild";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type * as Client from "../../src/index.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

let server: TestServer;
let api: typeof Client;

// The browser build of the package (what a bundler picks with its "browser" conditions),
// run in a realm that has the web platform's globals and no `process`.
beforeAll(async () => {
  server = await startTestServer();
  const entry = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: "iife",
    globalName: "client",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const web = {
    fetch,
    Headers,
    Request,
    Response,
    FormData,
    Blob,
    File,
    URL,
    URLSearchParams,
    AbortController,
    AbortSignal,
    ReadableStream,
    TextDecoder,
    TextEncoder,
  };
  const realm = createContext({ ...web, setTimeout, clearTimeout, queueMicrotask, console });
  runInContext(result.outputFiles[0]!.text, realm);
  api = realm.client as typeof Client;
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("in a browser-like realm without process", () => {
  it("has no process to read", () => {
    expect(runInContext("typeof process", createContext({}))).toBe("undefined");
  });

  it("creates a client from options and lists projects through fetch", async () => {
    server.route("GET", "/org/projects", { body: [{ id: "proj_1" }], headers: { "X-Has-More": "false", "X-Next-Offset": "0" } });
    const client = api.createClient({ apiKey: "browser-key", baseUrl: server.url, projectId: "proj_1" });
    await expect(client.projects.list()).resolves.toEqual([{ id: "proj_1" }]);
    expect(server.requests[0]!.headers).toMatchObject({ authorization: "Bearer browser-key", "x-service-project-id": "proj_1" });
  });

  it("reports a missing API key with the same typed error", () => {
    let caught: unknown;
    try {
      api.createClient({ baseUrl: server.url });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(api.ClientOptionsError);
    expect(caught).toMatchObject({ code: "missing_api_key" });
  });

  it("refuses a file path for an upload, since there is no file system", async () => {
    const client = api.createClient({ apiKey: "browser-key", baseUrl: server.url });
    const error = await client.extensions.upload({ file: "/tmp/ext.zip" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(api.UploadInputError);
    expect(error).toMatchObject({ code: "upload_path_unsupported" });
    expect(server.requests).toHaveLength(0);
  });

  it("uploads bytes as multipart through fetch", async () => {
    server.route("POST", "/extensions", { status: 201, body: { id: "ext_1" } });
    const client = api.createClient({ apiKey: "browser-key", baseUrl: server.url });
    await expect(client.extensions.upload({ file: new Uint8Array([80, 75, 3, 4]), name: "tiny" })).resolves.toEqual({ id: "ext_1" });
    expect(server.requests[0]!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
  });
});
