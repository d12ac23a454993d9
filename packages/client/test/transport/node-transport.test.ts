import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { APIUserAbortError, createClient } from "../../src/index.js";
import { useTestServer } from "../helpers/test-server.js";
import { testOptions } from "../helpers/transports.js";

const server = useTestServer();
// The Node transport is the default one: no `fetch` option.
const client = () => createClient(testOptions(server.url, { maxRetries: 0 }));

describe("the Node transport (undici's dispatch)", () => {
  it("reads a body that arrives in many chunks whole", async () => {
    const projects = Array.from({ length: 5_000 }, (_, index) => ({ id: `proj_${index}`, name: `project ${"x".repeat(100)} ${index}` }));
    server.route("GET", "/org/projects", (_request, response) => {
      const text = JSON.stringify(projects);
      response.writeHead(200, { "Content-Type": "application/json", "X-Has-More": "false", "X-Next-Offset": "0" });
      // Written in pieces over several turns, so that the client gets several chunks.
      let at = 0;
      const next = () => {
        if (at >= text.length) {
          response.end();
          return;
        }
        response.write(text.slice(at, (at += 64 * 1024)), () => setImmediate(next));
      };
      next();
    });
    await expect(client().projects.list()).resolves.toEqual(projects);
  });

  it("shows every value of a repeated response header, and the status text, on the raw response", async () => {
    server.route("GET", "/org/limits", (_request, response) => {
      response.writeHead(200, "Fine", [
        ["Content-Type", "application/json"],
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
      ]);
      response.end("{}");
    });
    const { response } = await client().GET("/org/limits");
    expect(response.statusText).toBe("Fine");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
  });

  it("rejects a call aborted in the tick it was made, and the next call still works", async () => {
    server.route("GET", "/org/limits", { body: { max_concurrent_sessions: 3 } });
    const controller = new AbortController();
    const aborted = client().limits.get({ signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(client().limits.get()).resolves.toEqual({ max_concurrent_sessions: 3 });
  });

  it("leaves out a caller's headers about the connection, which the pool manages, and sends the rest", async () => {
    server.route("GET", "/org/limits", { body: { max_concurrent_sessions: 3 } });
    const headers = { Connection: "close", "Keep-Alive": "timeout=5", Upgrade: "websocket", Expect: "100-continue", "X-Trace": "t-1" };
    const withHeaders = createClient(testOptions(server.url, { maxRetries: 0, headers }));
    await expect(withHeaders.limits.get()).resolves.toEqual({ max_concurrent_sessions: 3 });
    const seen = server.seen("GET", "/org/limits")[0]!.headers;
    expect(seen["x-trace"]).toBe("t-1");
    expect([seen.upgrade, seen.expect, seen["keep-alive"]]).toEqual([undefined, undefined, undefined]);
  });

  it("lets a process whose calls are answered exit, though its keep-alive connection stays open", async () => {
    server.route("GET", "/org/limits", (_request, response) => {
      // A hint far longer than the test may take: only an unreferenced idle socket ends it.
      response.writeHead(200, { "Content-Type": "application/json", "Keep-Alive": "timeout=600" });
      response.end('{"max_concurrent_sessions":3}');
    });
    // The built package, as an installed one runs (`npm test` builds before testing).
    const entry = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
    const script = `import { createClient } from ${JSON.stringify(entry)};
      const client = createClient({ apiKey: "k", baseUrl: ${JSON.stringify(server.url)} });
      console.log(JSON.stringify(await client.limits.get()));`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(exitCode).toBe(0);
    expect(JSON.parse(output)).toEqual({ max_concurrent_sessions: 3 });
  }, 60_000);
});
