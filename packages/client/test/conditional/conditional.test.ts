import { describe, expect, it } from "vitest";
import { APIError, createClient } from "../../src/index.js";
import { useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();
const path = "/browsers/brw_1/webmcp/tools";
const snapshot = { tools: [] };
const etag = '"v1"';

describe.each(transports)("conditional reads over the %s", (_, transport) => {
  const client = () => createClient(testOptions(server.url, { ...transport, maxRetries: 0 }));

  it("sends no If-None-Match without a version, and returns the body with its ETag", async () => {
    server.route("GET", path, { headers: { ETag: etag }, body: snapshot });
    await expect(client().webmcp.listToolsIfChanged("brw_1", null)).resolves.toEqual({ changed: true, data: snapshot, etag });
    expect(server.requests.at(-1)?.headers["if-none-match"]).toBeUndefined();
  });

  it("sends the version and resolves a 304 to changed: false", async () => {
    server.route("GET", path, { status: 304, headers: { ETag: etag } });
    await expect(client().webmcp.listToolsIfChanged("brw_1", etag)).resolves.toEqual({ changed: false, etag });
    expect(server.requests.at(-1)?.headers["if-none-match"]).toBe(etag);
  });

  it("returns a new body and its new version when the version is outdated", async () => {
    server.route("GET", path, { headers: { ETag: '"v2"' }, body: snapshot });
    await expect(client().webmcp.listToolsIfChanged("brw_1", etag)).resolves.toEqual({ changed: true, data: snapshot, etag: '"v2"' });
  });

  it("lets a raw call see a 304 to its own If-None-Match", async () => {
    server.route("GET", path, { status: 304, headers: { ETag: etag } });
    const { data, response } = await client().GET("/browsers/{id_or_name}/webmcp/tools", {
      params: { path: { id_or_name: "brw_1" }, header: { "If-None-Match": etag } },
    });
    expect(response.status).toBe(304);
    expect(data).toBeUndefined();
  });

  it("still fails on a 304 that no conditional request asked for", async () => {
    server.route("GET", path, { status: 304, headers: { ETag: etag } });
    await expect(client().webmcp.listTools("brw_1")).rejects.toBeInstanceOf(APIError);
  });
});
