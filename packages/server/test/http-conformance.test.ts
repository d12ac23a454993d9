import { readdirSync } from "node:fs";
import { connect, createConnection } from "node:net";
import { join } from "node:path";
import { validateError } from "@browser-service/validators";
import { describe, expect, it } from "vitest";
import { BrowserLaunchError } from "../src/browsers/browser-launcher.js";
import { writeFixtures } from "./support/fixtures.js";
import { multipartBody } from "./support/multipart.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { goodExtensionZip } from "./support/zip-writer.js";

// What Node and Fastify refuse on their own, and the edges of HTTP itself, answered as
// the spec says: the Error body with a documented code, X-Request-Id, the right status.

const t = useTestServer(() => {
  // The organization's only slot is held by a pool, so POST /browsers that passes its
  // checks answers 429 concurrency_limit_exceeded without starting Chromium.
  const dataDir = tempDataDir();
  return { dataDir, planLimit: 1, fixtures: writeFixtures(dataDir, { pool_reservations: [{ project: "Default", name: "full", size: 1 }] }) };
});
const auth = (): Record<string, string> => ({ authorization: `Bearer ${t.orgKey}` });

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends bytes as they are on a new connection, half-closing it, and reads the answer until the server closes it. */
function raw(request: string, url = t.url): Promise<RawResponse> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const [head = "", ...rest] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(":")).toLowerCase(), line.slice(line.indexOf(":") + 1).trim()]));
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n") });
    });
    socket.end(request);
  });
}

/** A request as raw text: the request line, then headers (Host and Connection: close unless given), then the body. */
const request = (line: string, headers: string[] = [], body = ""): string => {
  const all = [...(headers.some((h) => /^host:/i.test(h)) ? [] : ["Host: 127.0.0.1"]), ...headers, "Connection: close"];
  return `${line}\r\n${all.map((h) => `${h}\r\n`).join("")}\r\n${body}`;
};

/** Asserts the answer is the spec's Error body with `status`, `code` and (if given) one detail code; returns the body. */
function expectError(
  response: RawResponse,
  status: number,
  code: string,
  detail?: string,
): { code: string; message: string; details?: { code: string; message: string }[] } {
  expect(response.status, response.body).toBe(status);
  expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
  expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{20}$/);
  const body = JSON.parse(response.body);
  expect(validateError(body)).toMatchObject({ ok: true });
  expect(body.code).toBe(code);
  if (detail !== undefined) expect(body.details?.map((d: { code: string }) => d.code)).toEqual([detail]);
  return body;
}

describe("what Node refuses before a request exists", () => {
  it("headers over 16 KiB: 431 headers_too_large, in the Error body", async () => {
    const response = await raw(request("GET /org/projects HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, `X-Big: ${"a".repeat(100 * 1024)}`]));
    expectError(response, 431, "headers_too_large");
    expect(response.headers.connection).toBe("close");
  });

  it("a request line over 16 KiB is 431 as well", async () => {
    expectError(await raw(request(`GET /org/projects/${"p".repeat(20 * 1024)} HTTP/1.1`, [`Authorization: Bearer ${t.orgKey}`])), 431, "headers_too_large");
  });

  it.each([
    ["two Content-Length headers", ["Content-Length: 2", "Content-Length: 3"], "{}"],
    ["Content-Length with chunked", ["Content-Length: 2", "Transfer-Encoding: chunked"], "2\r\n{}\r\n0\r\n\r\n"],
    ["a chunk size that is not hexadecimal", ["Transfer-Encoding: chunked"], "zz\r\n{}\r\n0\r\n\r\n"],
  ])("%s: 400 bad_request, detail invalid_framing", async (_case, framing, body) => {
    const response = await raw(
      request("POST /org/projects HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, "Content-Type: application/json", ...framing], body),
    );
    const error = expectError(response, 400, "bad_request", "invalid_framing");
    expect(error.details?.[0]?.message).toMatch(/^The request's framing is invalid: /);
  });

  it("a method token Node cannot parse: 400 bad_request, detail invalid_method", async () => {
    expectError(await raw(request("FOO /org/projects HTTP/1.1")), 400, "bad_request", "invalid_method");
  });

  it("HTTP/1.1 without Host: 400 bad_request, detail host_required (RFC 9112)", async () => {
    expectError(await raw(`GET /org/limits HTTP/1.1\r\nAuthorization: Bearer ${t.orgKey}\r\nConnection: close\r\n\r\n`), 400, "bad_request", "host_required");
  });

  it.each([
    ["two Host headers", ["Host: 127.0.0.1", "Host: example.org"]],
    ["a Host with a space", ["Host: evil host"]],
    ["a Host with userinfo", ["Host: user@127.0.0.1"]],
    ["a Host with a path", ["Host: 127.0.0.1/admin"]],
    ["an unclosed IPv6 literal", ["Host: [::1"]],
  ])("%s: 400 bad_request, detail invalid_host (RFC 9112 3.2)", async (_case, host) => {
    expectError(await raw(request("GET /org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, ...host])), 400, "bad_request", "invalid_host");
  });

  it("a Host that is a host and port, an IPv6 literal or empty is served", async () => {
    for (const host of ["Host: localhost:8787", "Host: [::1]:80", "Host: 127.0.0.1", "Host:"]) {
      expect((await raw(request("GET /org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, host]))).status, host).toBe(200);
    }
  });

  it("CONNECT: 400 bad_request, detail invalid_method, instead of a connection closed without a word", async () => {
    const error = expectError(await raw(request("CONNECT 127.0.0.1:80 HTTP/1.1")), 400, "bad_request", "invalid_method");
    expect(error.details?.[0]?.message).toContain("CONNECT");
  });
});

describe("a request target that is not a path: refused on every route, upgrades included (this server is no proxy)", () => {
  const websocket = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"];
  it.each([
    ["absolute form on a create", "POST http://127.0.0.1:9/browsers HTTP/1.1", ["Content-Type: application/json", "Content-Length: 2"], "{}"],
    ["absolute form naming the server itself", "GET http://127.0.0.1/org/limits HTTP/1.1", [], ""],
    ["absolute form on a browser's operation", "DELETE http://127.0.0.1:9/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1", [], ""],
    ["absolute form on WebMCP", "GET https://127.0.0.1:9/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/webmcp/tools HTTP/1.1", [], ""],
    ["absolute form on a path no operation has", "GET http://127.0.0.1:9/nothing/here HTTP/1.1", [], ""],
    ["absolute form on the live view page", "GET http://127.0.0.1:9/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/live HTTP/1.1", [], ""],
    ["asterisk form", "OPTIONS * HTTP/1.1", [], ""],
    ["absolute form on the DevTools upgrade", "GET http://127.0.0.1:9/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/cdp?token=x HTTP/1.1", websocket, ""],
    [
      "absolute form on the live view upgrade",
      "GET http://127.0.0.1:9/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/live HTTP/1.1",
      [...websocket, "Sec-WebSocket-Protocol: browser-service.live-view"],
      "",
    ],
    ["absolute form on the nodes' channel", "GET http://127.0.0.1:9/_peer/channel HTTP/1.1", ["Upgrade: browser-service-peer/1", "Connection: Upgrade"], ""],
    ["absolute form asking for h2c", "GET http://127.0.0.1:9/org/limits HTTP/1.1", ["Upgrade: h2c", "Connection: Upgrade"], ""],
  ])("%s: 400 bad_request, detail invalid_request_target, before any credential is read", async (_case, line, headers, body) => {
    const response = await raw(request(line, [`Authorization: Bearer ${t.orgKey}`, ...headers], body));
    const error = expectError(response, 400, "bad_request", "invalid_request_target");
    expect(error.details?.[0]?.message).toContain("not a proxy");
    expect(response.headers.connection).toBe("close");
  });

  it("authority form (host and port) outside CONNECT is not even parsed: 400 bad_request, detail malformed_request", async () => {
    expectError(await raw(request("GET 127.0.0.1:9 HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`])), 400, "bad_request", "malformed_request");
  });

  it("a path, even one starting with two slashes, is a path: answered by the router (404), never taken for a host", async () => {
    expectError(await raw(request("GET //127.0.0.1:9/org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`])), 404, "not_found");
    expect((await raw(request("GET /org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`]))).status).toBe(200);
  });
});

describe("what the API ignores, as RFC 9110 lets it", () => {
  it("an Expect other than 100-continue: served as if it were absent, not Node's bare 417", async () => {
    const response = await raw(request("GET /org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, "Expect: teapot"]));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ max_concurrent_sessions: 1 });
  });

  it.each([
    [
      "h2c, as curl --http2 asks on every plain-HTTP request",
      ["Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA"],
    ],
    ["websocket", ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]],
  ])("Upgrade: %s on an API path: answered as the plain request, then the connection closes", async (_case, upgrade) => {
    const response = await raw(request("GET /org/limits HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`, ...upgrade]));
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe("close");
    expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{20}$/);
    expect(JSON.parse(response.body)).toMatchObject({ max_concurrent_sessions: 1 });
    expectError(await raw(request("GET /nowhere HTTP/1.1", ["Connection: Upgrade", "Upgrade: h2c"])), 404, "not_found");
  });

  it("Upgrade: h2c on a POST: its body is read as announced, and the operation runs", async () => {
    const body = '{"name":"created-through-h2c"}';
    const response = await raw(
      request(
        "POST /org/projects HTTP/1.1",
        [`Authorization: Bearer ${t.orgKey}`, "Content-Type: application/json", "Connection: Upgrade", "Upgrade: h2c", `Content-Length: ${body.length}`],
        body,
      ),
    );
    expect(response.status, response.body).toBe(201);
    expect(JSON.parse(response.body)).toMatchObject({ name: "created-through-h2c" });
    // The body in a later packet than the head: read from the socket, up to Content-Length.
    const later = '{"name":"body-after-the-head"}';
    const socket = connect(Number(new URL(t.url).port), "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    const closed = new Promise((resolve) => socket.on("close", resolve));
    socket.write(
      request("POST /org/projects HTTP/1.1", [
        `Authorization: Bearer ${t.orgKey}`,
        "Content-Type: application/json",
        "Connection: Upgrade",
        "Upgrade: h2c",
        `Content-Length: ${later.length}`,
      ]),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.end(later);
    await closed;
    expect(Buffer.concat(chunks).toString("utf8")).toMatch(/^HTTP\/1\.1 201 [\s\S]*"name":"body-after-the-head"/);
  });
});

describe("a request that asks to upgrade, served as a plain one", () => {
  it("is refused with a chunked body, which it would otherwise reach its operation without: nothing runs", async () => {
    const before = (await t.client().projects.list()).length;
    const chunk = '{"name":"chunked-through-h2c"}';
    const response = await raw(
      request(
        "POST /org/projects HTTP/1.1",
        [`Authorization: Bearer ${t.orgKey}`, "Content-Type: application/json", "Connection: Upgrade", "Upgrade: h2c", "Transfer-Encoding: chunked"],
        `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
      ),
    );
    expectError(response, 400, "bad_request");
    expect((await t.client().projects.list()).length).toBe(before);
  });

  it("keeps no connection whose client never closes its side after the answer", async () => {
    const socket = createConnection({ port: Number(new URL(t.url).port), host: "127.0.0.1", allowHalfOpen: true });
    socket.on("error", () => undefined);
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    const ended = new Promise((resolve) => socket.once("end", resolve));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
    // The answer, then the server's FIN; this client keeps its own side open.
    await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    // Past the server's grace, its end of the connection is gone: what the client writes is
    // refused (a reset answers the first write, the second fails on it).
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    socket.write("x");
    await new Promise((resolve) => setTimeout(resolve, 500));
    socket.write("y");
    await closed;
  });
});

describe("what the router refuses", () => {
  it("a path that is not valid percent-encoding: 400 bad_request, detail invalid_url", async () => {
    const error = expectError(await raw(request("GET /org/projects/%ZZ HTTP/1.1", [`Authorization: Bearer ${t.orgKey}`])), 400, "bad_request", "invalid_url");
    expect(error.details?.[0]?.message).toContain("/org/projects/%ZZ");
  });

  it("an 8 KiB path segment reaches its operation, which bounds it: 400 maxLength", async () => {
    const response = await t.server.app.inject({ method: "GET", url: `/org/projects/${"a".repeat(8 * 1024)}`, headers: auth() });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "maxLength", message: "Path: /id must be at most 255 characters long." }]);
  });
});

describe("405 with Allow for a known path's other methods (RFC 9110)", () => {
  it.each([
    ["TRACE", "/org/projects", "GET, POST"],
    ["PUT", "/org/projects", "GET, POST"],
    ["OPTIONS", "/org/limits", "GET, PATCH"],
    ["POST", "/org/projects/proj_x", "DELETE, GET, PATCH"],
    ["PATCH", "/browsers/b1/webmcp/invoke", "POST"],
  ])("%s %s: 405 method_not_allowed, Allow: %s, even without credentials", async (method, path, allow) => {
    const response = await raw(request(`${method} ${path} HTTP/1.1`));
    const error = expectError(response, 405, "method_not_allowed");
    expect(response.headers.allow).toBe(allow);
    expect(error.message).toBe(`${path} does not take ${method}; it takes ${allow}.`);
  });

  it("QUERY without Content-Type and without a key: 405, not a framework error", async () => {
    const response = await raw(request("QUERY /org/projects HTTP/1.1"));
    expectError(response, 405, "method_not_allowed");
    expect(response.headers.allow).toBe("GET, POST");
  });

  it("HEAD of a GET path: 405 with Allow and no body", async () => {
    const response = await raw(request("HEAD /org/limits HTTP/1.1"));
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("GET, PATCH");
    expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{20}$/);
    expect(response.body).toBe("");
  });

  it("a path no operation has stays 404 not_found, whatever the method or body", async () => {
    for (const method of ["GET", "PUT", "QUERY"]) {
      const response = await raw(request(`${method} /nowhere HTTP/1.1`, ["Content-Type: application/json", "Content-Length: 1"], "{"));
      expectError(response, 404, "not_found");
    }
  });
});

describe("an empty body is no body", () => {
  const json = (): Record<string, string> => ({ ...auth(), "content-type": "application/json" });

  it("DELETE /org/projects/{id} with Content-Type: application/json and no body deletes it (204)", async () => {
    const project = await t.client().projects.create({ name: "empty-body-delete" });
    const response = await t.server.app.inject({ method: "DELETE", url: `/org/projects/${project.id}`, headers: json() });
    expect(response.statusCode).toBe(204);
    await expect(t.client().projects.get(project.id)).rejects.toMatchObject({ status: 404 });
  });

  it("a DELETE ignores whatever body it is sent: any type, any size", async () => {
    for (const [type, payload] of [
      ["text/plain", "please"],
      ["application/json", "{not json"],
      ["application/octet-stream", Buffer.alloc(2 * 1024 * 1024)],
    ] as const) {
      const project = await t.client().projects.create({ name: `ignored-${type.replace("/", "-")}` });
      const response = await t.server.app.inject({
        method: "DELETE",
        url: `/org/projects/${project.id}`,
        headers: { ...auth(), "content-type": type },
        payload,
      });
      expect(response.statusCode, type).toBe(204);
    }
  });

  it("DELETE /browsers/{id} with Content-Type: application/json and no body gets to the browser lookup (404)", async () => {
    const response = await t.server.app.inject({ method: "DELETE", url: "/browsers/no-such-browser", headers: json() });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe("not_found");
  });

  it("POST /browsers (optional body) with Content-Type: application/json and no body passes validation", async () => {
    // The only slot is taken, so passing validation shows as the concurrency check's 429.
    for (const headers of [json(), { ...json(), "content-length": "0" }, auth()]) {
      const response = await t.server.app.inject({ method: "POST", url: "/browsers", headers });
      expect(response.statusCode).toBe(429);
      expect(response.json().code).toBe("concurrency_limit_exceeded");
    }
    const notObject = await t.server.app.inject({ method: "POST", url: "/browsers", headers: json(), payload: "[]" });
    expect(notObject.statusCode).toBe(400);
  });

  it("an operation that requires a body answers an empty one as missing: 400 required", async () => {
    const response = await t.server.app.inject({ method: "POST", url: "/org/projects", headers: json() });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { code: "required", message: "The request body is required: send a JSON object with Content-Type application/json." },
    ]);
  });
});

describe("POST /extensions: a form that cannot be read is 400, never 500", () => {
  const upload = (contentType: string, body: string | Buffer) =>
    t.server.app.inject({ method: "POST", url: "/extensions", headers: { ...auth(), "content-type": contentType }, payload: body });

  it.each([
    ["no boundary", "multipart/form-data"],
    ["an empty boundary", "multipart/form-data; boundary="],
    ["an empty quoted boundary", 'multipart/form-data; boundary=""'],
    ["a boundary over 70 characters", `multipart/form-data; boundary=${"b".repeat(71)}`],
  ])("%s: 400 invalid_multipart", async (_case, contentType) => {
    const response = await upload(contentType, "--x\r\n");
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { code: "invalid_multipart", message: "Content-Type multipart/form-data needs a boundary parameter of 1 to 70 characters." },
    ]);
  });

  it.each([
    ["a body cut inside a part", '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nPK'],
    ["a body cut inside a part's headers", "--XX\r\nContent-Disposition: form-da"],
    ["a body without any boundary", "hello world"],
  ])("%s: 400 invalid_multipart, and no upload left behind", async (_case, body) => {
    const response = await upload("multipart/form-data; boundary=XX", body);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "invalid_multipart", message: expect.stringMatching(/^The multipart\/form-data body cannot be read: /) }]);
    expect(readdirSync(join(t.dataDir, "uploads"))).toEqual([]);
  });

  it("an empty form has no file: 400 required", async () => {
    const response = await upload("multipart/form-data; boundary=XX", "");
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "required", message: "/file is required." }]);
  });

  it("a file part without a filename: one detail saying so, not an empty list", async () => {
    const body = '--XX\r\nContent-Disposition: form-data; name="file"\r\n\r\nPK\x03\x04\r\n--XX--\r\n';
    const response = await upload("multipart/form-data; boundary=XX", body);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([
      { code: "not_a_file", message: '/file must be a file part: give its Content-Disposition a filename (filename="extension.zip").' },
    ]);
  });

  it("an unparsable Content-Type names the type the operation takes", async () => {
    const response = await upload("multipart/", "x");
    expect(response.statusCode).toBe(415);
    expect(response.json().message).toContain("multipart/form-data");
  });

  it("a well-formed form still uploads", async () => {
    const form = multipartBody({ name: "after-the-edges" }, { file: goodExtensionZip() });
    const response = await t.server.app.inject({ method: "POST", url: "/extensions", headers: { ...auth(), ...form.headers }, payload: form.payload });
    expect(response.statusCode).toBe(201);
  });
});

describe("a client that half-closes its connection after the request", () => {
  it("still gets an answer that takes a while (Node's default would drop it when the FIN is read)", async () => {
    // A launch that fails after 300 ms: POST /browsers answers 503 browser_unavailable then.
    const slow = await startTestServer({
      launcher: {
        launch: () => new Promise((_resolve, reject) => setTimeout(() => reject(new BrowserLaunchError("no Chromium here")), 300)),
      },
    });
    try {
      const response = await raw(
        request("POST /browsers HTTP/1.1", [`Authorization: Bearer ${slow.orgKey}`, "Content-Type: application/json", "Content-Length: 2"], "{}"),
        slow.url,
      );
      expectError(response, 503, "browser_unavailable");
      expect(slow.mismatches).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
