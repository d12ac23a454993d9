/** What the raw cases need to know about the server under test. */
export interface RawContext {
  orgKey: string;
  /** A running browser and its DevTools token. */
  browserId: string;
  browserToken: string;
  /** An active project that is not the default one. */
  projectId: string;
}

/** Bytes no ordinary client would send, with what the answer must be. */
export interface RawCase {
  label: string;
  /** The bytes on the wire; `Host` and `Connection: close` are added by {@link rawRequest} unless the case builds the bytes itself. */
  bytes: (context: RawContext) => string | Buffer;
  /** Statuses the answer may have; absent when any status is fine as long as it conforms. */
  expect?: readonly number[];
  /** The error code the answer must have. */
  code?: string;
  /** The `Allow` header a 405 must have. */
  allow?: string;
  /** Whether the answer passes Fastify's hooks, so the server's response check sees it too. */
  viaFastify?: boolean;
  /** Keep the sending side open after the bytes (a WebSocket client does); otherwise it is half-closed at once. */
  keepOpen?: boolean;
}

/** A request as raw text: request line, headers (Host and Connection: close unless given), blank line, body. */
export function rawRequest(line: string, headers: string[] = [], body = ""): string {
  const has = (name: string) => headers.some((header) => header.toLowerCase().startsWith(`${name}:`));
  const all = [...(has("host") ? [] : ["Host: 127.0.0.1"]), ...headers, ...(has("connection") ? [] : ["Connection: close"])];
  return `${line}\r\n${all.map((header) => `${header}\r\n`).join("")}\r\n${body}`;
}

const bearer = (context: RawContext) => `Authorization: Bearer ${context.orgKey}`;
const json = "Content-Type: application/json";
const websocket = ["Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="];

/**
 * The issue's hand probes and the other edges of HTTP/1.1: framing, header and URL
 * limits, methods, encodings, upgrades, and the DevTools endpoint, whose refusals are
 * written on the socket outside Fastify.
 */
export const RAW_CASES: readonly RawCase[] = [
  {
    label: "a 100 KB header",
    bytes: (c) => rawRequest("GET /org/projects HTTP/1.1", [bearer(c), `X-Big: ${"a".repeat(100 * 1024)}`]),
    expect: [431],
    code: "headers_too_large",
  },
  {
    label: "3,000 small headers",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), ...Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`)]),
    expect: [431],
    code: "headers_too_large",
  },
  {
    label: "a 20 KB request line",
    bytes: (c) => rawRequest(`GET /org/projects/${"p".repeat(20 * 1024)} HTTP/1.1`, [bearer(c)]),
    expect: [431],
    code: "headers_too_large",
  },
  {
    label: "two Content-Length headers",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 2", "Content-Length: 3"], "{}"),
    expect: [400],
    code: "bad_request",
  },
  {
    label: "two equal Content-Length headers",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 2", "Content-Length: 2"], "{}"),
    expect: [400],
  },
  {
    label: "Content-Length with chunked",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 2", "Transfer-Encoding: chunked"], "2\r\n{}\r\n0\r\n\r\n"),
    expect: [400],
    code: "bad_request",
  },
  {
    label: "a chunk size that is not hexadecimal",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Transfer-Encoding: chunked"], "zz\r\n{}\r\n0\r\n\r\n"),
    expect: [400],
    code: "bad_request",
  },
  {
    label: "Transfer-Encoding gzip",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Transfer-Encoding: gzip"], "{}"),
    expect: [400],
  },
  { label: "a negative Content-Length", bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: -1"], "{}"), expect: [400] },
  {
    label: "a Content-Length that is not a number",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 1e3"], "{}"),
    expect: [400],
  },
  {
    label: "a body shorter than its Content-Length, then the end of the stream",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 100"], '{"name":"cut"'),
    expect: [400],
  },
  {
    label: "a chunked JSON body with a trailer",
    bytes: (c) =>
      rawRequest(
        "POST /org/projects HTTP/1.1",
        [bearer(c), json, "Transfer-Encoding: chunked"],
        '9\r\n{"name":"\r\nb\r\nraw-chunked\r\n2\r\n"}\r\n0\r\nX-Trailer: 1\r\n\r\n',
      ),
    expect: [201, 409],
    viaFastify: true,
  },
  { label: "/org/projects/%ZZ", bytes: (c) => rawRequest("GET /org/projects/%ZZ HTTP/1.1", [bearer(c)]), expect: [400], code: "bad_request", viaFastify: true },
  {
    label: "an 8 KB path segment",
    bytes: (c) => rawRequest(`GET /org/projects/${"a".repeat(8 * 1024)} HTTP/1.1`, [bearer(c)]),
    expect: [400],
    code: "bad_request",
    viaFastify: true,
  },
  {
    label: "GET /org/projects/Default%00 (a NUL after a real name)",
    bytes: (c) => rawRequest("GET /org/projects/Default%00 HTTP/1.1", [bearer(c)]),
    expect: [400, 404],
    viaFastify: true,
  },
  ...["%ED%A0%80", "%C0%AE", "%FF", "%E2%80%AE", "caf%C3%A9", "..%2F..%2Fetc"].map((segment) => ({
    label: `GET /org/projects/${segment}`,
    bytes: (c: RawContext) => rawRequest(`GET /org/projects/${segment} HTTP/1.1`, [bearer(c)]),
    expect: [400, 404],
    viaFastify: true,
  })),
  { label: "a NUL in the request line", bytes: (c) => rawRequest("GET /org/limits\u0000 HTTP/1.1", [bearer(c)]), expect: [400] },
  { label: "unencoded UTF-8 in the path", bytes: (c) => Buffer.from(rawRequest("GET /org/projects/café HTTP/1.1", [bearer(c)]), "utf8"), expect: [400, 404] },
  { label: "a fragment in the request target", bytes: (c) => rawRequest("GET /org/limits#frag HTTP/1.1", [bearer(c)]), expect: [200, 400, 404] },
  { label: "dot segments", bytes: (c) => rawRequest("GET /org/../org/limits HTTP/1.1", [bearer(c)]), expect: [200, 400, 404], viaFastify: true },
  { label: "a double slash", bytes: (c) => rawRequest("GET //org/limits HTTP/1.1", [bearer(c)]), expect: [200, 404], viaFastify: true },
  { label: "absolute-form request target", bytes: (c) => rawRequest("GET http://127.0.0.1/org/limits HTTP/1.1", [bearer(c)]), expect: [200, 400, 404] },
  { label: "asterisk-form OPTIONS", bytes: () => rawRequest("OPTIONS * HTTP/1.1"), expect: [400, 404, 405] },
  {
    label: "an invalid percent-encoding in the query",
    bytes: (c) => rawRequest("GET /org/projects?name=%ZZ HTTP/1.1", [bearer(c)]),
    expect: [200, 400],
    viaFastify: true,
  },
  {
    label: "QUERY without Content-Type and without a key",
    bytes: () => rawRequest("QUERY /org/projects HTTP/1.1"),
    expect: [405],
    code: "method_not_allowed",
    allow: "GET, POST",
    viaFastify: true,
  },
  {
    label: "QUERY with a JSON body",
    bytes: (c) => rawRequest("QUERY /org/projects HTTP/1.1", [bearer(c), json, "Content-Length: 2"], "{}"),
    expect: [405],
    allow: "GET, POST",
    viaFastify: true,
  },
  {
    label: "TRACE on a known path",
    bytes: () => rawRequest("TRACE /org/projects HTTP/1.1"),
    expect: [405],
    code: "method_not_allowed",
    allow: "GET, POST",
    viaFastify: true,
  },
  {
    label: "PUT on a known path",
    bytes: (c) => rawRequest("PUT /org/limits HTTP/1.1", [bearer(c), json, "Content-Length: 2"], "{}"),
    expect: [405],
    allow: "GET, PATCH",
    viaFastify: true,
  },
  {
    label: "PATCH on a browser",
    bytes: (c) => rawRequest(`PATCH /browsers/${c.browserId} HTTP/1.1`, [bearer(c)]),
    expect: [405],
    allow: "DELETE, GET",
    viaFastify: true,
  },
  { label: "HEAD on a GET path", bytes: () => rawRequest("HEAD /org/limits HTTP/1.1"), expect: [405], allow: "GET, PATCH", viaFastify: true },
  { label: "CONNECT", bytes: () => rawRequest("CONNECT 127.0.0.1:80 HTTP/1.1"), expect: [400], code: "bad_request" },
  { label: "a method token the parser does not know", bytes: () => rawRequest("FOO /org/projects HTTP/1.1"), expect: [400], code: "bad_request" },
  { label: "a lowercase method", bytes: (c) => rawRequest("get /org/limits HTTP/1.1", [bearer(c)]), expect: [400] },
  {
    label: "HTTP/1.1 without Host",
    bytes: (c) => `GET /org/limits HTTP/1.1\r\n${bearer(c)}\r\nConnection: close\r\n\r\n`,
    expect: [400],
    code: "bad_request",
    viaFastify: true,
  },
  { label: "HTTP/1.0 without Host", bytes: (c) => `GET /org/limits HTTP/1.0\r\n${bearer(c)}\r\n\r\n`, expect: [200], viaFastify: true },
  {
    label: "two Host headers",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "Host: 127.0.0.1", "Host: example.org"]),
    expect: [400],
    code: "bad_request",
    viaFastify: true,
  },
  { label: "HTTP/2 preface on HTTP/1.1", bytes: () => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", expect: [400, 505] },
  { label: "HTTP/1.2", bytes: (c) => rawRequest("GET /org/limits HTTP/1.2", [bearer(c)]), expect: [200, 400, 505] },
  { label: "a NUL in a header value", bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "X-A: a\u0000b"]), expect: [400] },
  { label: "a space in a header name", bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "X Bad: 1"]), expect: [400] },
  { label: "a folded header line", bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "X-A: a", " b"]), expect: [400] },
  { label: "bare LF line ends", bytes: (c) => `GET /org/limits HTTP/1.1\nHost: 127.0.0.1\n${bearer(c)}\nConnection: close\n\n`, expect: [200, 400] },
  {
    label: "Expect: 100-continue",
    bytes: (c) => rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Expect: 100-continue", "Content-Length: 2"], "{}"),
    expect: [400],
    viaFastify: true,
  },
  {
    label: "an Expect the server cannot meet",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "Expect: teapot"]),
    expect: [200],
    viaFastify: true,
  },
  {
    label: "lowercase bearer scheme",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [`Authorization: bearer ${c.orgKey}`]),
    expect: [200],
    viaFastify: true,
  },
  {
    label: "two Authorization headers",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), bearer(c)]),
    expect: [200, 400, 401],
    viaFastify: true,
  },
  {
    label: "two project headers",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), `X-Service-Project-Id: ${c.projectId}`, `X-Service-Project-Id: ${c.projectId}`]),
    expect: [400, 404],
    viaFastify: true,
  },
  {
    label: "a project header of Latin-1 bytes",
    bytes: (c) => Buffer.from(rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "X-Service-Project-Id: proj_\u00e9\u00ff"]), "latin1"),
    expect: [400, 404],
    viaFastify: true,
  },
  {
    label: "a body on a GET",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), json, "Content-Length: 5"], "{oops"),
    expect: [200],
    viaFastify: true,
  },
  {
    label: "DELETE /browsers/{id} with Content-Type: application/json and no body",
    bytes: (c) => rawRequest("DELETE /browsers/no-such-browser HTTP/1.1", [bearer(c), json]),
    expect: [404],
    code: "not_found",
    viaFastify: true,
  },
  {
    label: "DELETE /org/projects/{id} with Content-Type: application/json and no body",
    bytes: (c) => rawRequest("DELETE /org/projects/proj_aaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1", [bearer(c), json, "Content-Length: 0"]),
    expect: [404],
    viaFastify: true,
  },
  {
    label: "POST /browsers with Content-Type: application/json and no body",
    bytes: (c) => rawRequest("POST /browsers HTTP/1.1", [bearer(c), json, "Content-Length: 0"]),
    expect: [201, 409, 429],
    viaFastify: true,
  },
  {
    label: "POST /extensions multipart without boundary",
    bytes: (c) => rawRequest("POST /extensions HTTP/1.1", [bearer(c), "Content-Type: multipart/form-data", "Content-Length: 5"], "--x\r\n"),
    expect: [400],
    viaFastify: true,
  },
  {
    label: "POST /extensions multipart with an empty boundary",
    bytes: (c) => rawRequest("POST /extensions HTTP/1.1", [bearer(c), "Content-Type: multipart/form-data; boundary=", "Content-Length: 5"], "--x\r\n"),
    expect: [400],
    viaFastify: true,
  },
  {
    label: "POST /extensions multipart cut short",
    bytes: (c) =>
      rawRequest(
        "POST /extensions HTTP/1.1",
        [bearer(c), "Content-Type: multipart/form-data; boundary=XX", "Content-Length: 60"],
        '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.zip"\r\n\r\nPK',
      ),
    expect: [400],
  },
  // The Host header names the server in cdp_ws_url: whatever it says, the Browser must conform.
  ...["evil host", "[::1", "a/b", "127.0.0.1:99999", "", "user@127.0.0.1", "127.0.0.1:8080?x"].map((host) => ({
    label: `GET /browsers/{id} with Host ${JSON.stringify(host)}`,
    bytes: (c: RawContext) => rawRequest(`GET /browsers/${c.browserId} HTTP/1.1`, [bearer(c), `Host: ${host}`]),
    expect: [200, 400],
    viaFastify: true,
  })),
  // Upgrades on API paths: not WebSocket endpoints, so the request is the API's to answer.
  {
    label: "Upgrade: h2c on an API path",
    bytes: (c) =>
      rawRequest("GET /org/limits HTTP/1.1", [bearer(c), "Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA"]),
    expect: [200],
    viaFastify: true,
  },
  {
    label: "Upgrade: h2c on a POST with a body",
    bytes: (c) =>
      rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Connection: Upgrade", "Upgrade: h2c", "Content-Length: 19"], '{"name":"h2c-post"}'),
    expect: [201, 409],
    viaFastify: true,
  },
  {
    label: "Upgrade: h2c on a POST whose body is short",
    bytes: (c) =>
      rawRequest("POST /org/projects HTTP/1.1", [bearer(c), json, "Connection: Upgrade", "Upgrade: h2c", "Content-Length: 50"], '{"name":"h2c-cut"}'),
    expect: [400],
    viaFastify: true,
  },
  {
    label: "Upgrade: websocket on an API path",
    bytes: (c) => rawRequest("GET /org/limits HTTP/1.1", [bearer(c), ...websocket]),
    expect: [200],
    viaFastify: true,
  },
  // The DevTools endpoint answers before any upgrade, on the raw socket.
  {
    label: "DevTools: an unknown browser",
    bytes: (c) => rawRequest("GET /browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/cdp HTTP/1.1", [bearer(c), ...websocket]),
    expect: [404],
    code: "not_found",
  },
  {
    label: "DevTools: a wrong token",
    bytes: (c) => rawRequest(`GET /browsers/${c.browserId}/cdp?token=wrong HTTP/1.1`, websocket),
    expect: [401],
    code: "unauthorized",
  },
  { label: "DevTools: no credentials", bytes: (c) => rawRequest(`GET /browsers/${c.browserId}/cdp HTTP/1.1`, websocket), expect: [401], code: "unauthorized" },
  { label: "DevTools: POST", bytes: (c) => rawRequest(`POST /browsers/${c.browserId}/cdp?token=${c.browserToken} HTTP/1.1`, websocket), expect: [404, 405] },
  { label: "DevTools: an invalid percent-encoding", bytes: (c) => rawRequest("GET /browsers/%ZZ/cdp HTTP/1.1", [bearer(c), ...websocket]), expect: [400, 404] },
  {
    label: "DevTools: a NUL in the browser id",
    bytes: (c) => rawRequest(`GET /browsers/${c.browserId}%00/cdp HTTP/1.1`, [bearer(c), ...websocket]),
    expect: [404],
  },
  {
    label: "DevTools: the right token, no Sec-WebSocket-Key",
    bytes: (c) =>
      rawRequest(`GET /browsers/${c.browserId}/cdp?token=${c.browserToken} HTTP/1.1`, [
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 13",
      ]),
    expect: [400],
    code: "bad_request",
  },
  {
    label: "DevTools: the right token, WebSocket version 12",
    bytes: (c) =>
      rawRequest(`GET /browsers/${c.browserId}/cdp?token=${c.browserToken} HTTP/1.1`, [
        "Connection: Upgrade",
        "Upgrade: websocket",
        "Sec-WebSocket-Version: 12",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      ]),
    expect: [400],
    code: "bad_request",
  },
  {
    label: "DevTools: a GET without Upgrade",
    bytes: (c) => rawRequest(`GET /browsers/${c.browserId}/cdp?token=${c.browserToken} HTTP/1.1`, [bearer(c)]),
    expect: [400, 404, 405, 426],
    viaFastify: true,
  },
  {
    label: "DevTools: the right token and handshake",
    bytes: (c) => rawRequest(`GET /browsers/${c.browserId}/cdp?token=${c.browserToken} HTTP/1.1`, websocket),
    expect: [101],
    keepOpen: true,
  },
];
