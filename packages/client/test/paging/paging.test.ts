import { beforeEach, describe, expect, it } from "vitest";
import { createClient, PaginationError } from "../../src/index.js";
import { type Reply, useTestServer } from "../helpers/test-server.js";
import { testOptions } from "../helpers/transports.js";

const server = useTestServer();
beforeEach(() => {});

const project = (n: number) => ({ id: `proj_${n}`, name: `p${n}`, status: "active", created_at: "2025-01-01T00:00:00Z", updated_at: "2025-01-01T00:00:00Z" });
const page = (items: number[], hasMore: string | undefined, nextOffset: string | undefined): Reply => ({
  body: items.map(project),
  headers: {
    ...(hasMore === undefined ? {} : { "X-Has-More": hasMore }),
    ...(nextOffset === undefined ? {} : { "X-Next-Offset": nextOffset }),
    "X-Request-Id": "req_page",
  },
});
const client = () => createClient(testOptions(server.url));

async function collect<T>(items: AsyncIterable<T>): Promise<{ items: T[]; error?: unknown }> {
  const seen: T[] = [];
  try {
    for await (const item of items) seen.push(item);
    return { items: seen };
  } catch (error) {
    return { items: seen, error };
  }
}

describe("listAll", () => {
  it("follows X-Next-Offset across pages, keeping the query", async () => {
    server.route("GET", "/org/projects", page([0, 1], "true", "2"), page([2, 3], "true", "4"), page([4], "false", "0"));
    const { items, error } = await collect(client().projects.listAll({ query: "p", limit: 2 }));
    expect(error).toBeUndefined();
    expect(items.map((p) => p.id)).toEqual(["proj_0", "proj_1", "proj_2", "proj_3", "proj_4"]);
    expect(server.requests.map((r) => r.url)).toEqual([
      "/org/projects?query=p&limit=2&offset=0",
      "/org/projects?query=p&limit=2&offset=2",
      "/org/projects?query=p&limit=2&offset=4",
    ]);
  });

  it("starts at query.offset and sends the call's options with every page", async () => {
    server.route("GET", "/org/projects", page([5], "true", "6"), page([6], "false", "0"));
    const { items } = await collect(client().projects.listAll({ offset: 5 }, { projectId: "proj_x" }));
    expect(items.map((p) => p.id)).toEqual(["proj_5", "proj_6"]);
    expect(server.requests.map((r) => r.query.get("offset"))).toEqual(["5", "6"]);
    expect(server.requests.every((r) => r.headers["x-service-project-id"] === "proj_x")).toBe(true);
  });

  it("fetches a page only when the loop asks for it", async () => {
    server.route("GET", "/org/projects", page([0, 1], "true", "2"), page([2], "false", "0"));
    for await (const item of client().projects.listAll()) {
      expect(item.id).toBe("proj_0");
      break;
    }
    expect(server.requests).toHaveLength(1);
  });

  it("pages browsers too", async () => {
    const browser = (n: number) => ({
      id: `brw_${n}`,
      name: null,
      status: "running",
      created_at: "2025-01-01T00:00:00Z",
      cdp_ws_url: "ws://x",
      sandboxed: true,
    });
    server.route(
      "GET",
      "/browsers",
      { body: [browser(0)], headers: { "X-Has-More": "true", "X-Next-Offset": "1" } },
      { body: [browser(1)], headers: { "X-Has-More": "false", "X-Next-Offset": "0" } },
    );
    const { items } = await collect(client().browsers.listAll());
    expect(items.map((b) => b.id)).toEqual(["brw_0", "brw_1"]);
  });

  it.each([
    ["X-Has-More is missing", page([2, 3], undefined, "4")],
    ["X-Has-More is not a boolean", page([2, 3], "yes", "4")],
    ["X-Next-Offset is missing while X-Has-More is true", page([2, 3], "true", undefined)],
    ["X-Next-Offset is not a number", page([2, 3], "true", "four")],
    ["X-Next-Offset is negative", page([2, 3], "true", "-1")],
    ["X-Next-Offset does not advance", page([2, 3], "true", "2")],
    ["X-Next-Offset goes back", page([2, 3], "true", "0")],
  ])("throws PaginationError instead of truncating when %s", async (_, badPage) => {
    server.route("GET", "/org/projects", page([0, 1], "true", "2"), badPage, page([4], "false", "0"));
    const { items, error } = await collect(client().projects.listAll());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error).toMatchObject({ code: "paging_headers_invalid" });
    expect((error as Error).message).toContain("offset 2");
    // The bad page's items are not yielded, and no further page is asked for.
    expect(items.map((p) => p.id)).toEqual(["proj_0", "proj_1"]);
    expect(server.requests).toHaveLength(2);
  });
});

describe("list", () => {
  it("returns one page", async () => {
    server.route("GET", "/org/projects", page([0, 1], "true", "2"));
    await expect(client().projects.list({ limit: 2 })).resolves.toEqual([project(0), project(1)]);
    expect(server.requests).toHaveLength(1);
  });
});
