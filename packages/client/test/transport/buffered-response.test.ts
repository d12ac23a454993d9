import { describe, expect, it } from "vitest";
import { BufferedResponse } from "../../src/platform/buffered-response.js";

const json = '{"name":"ad-blocker","ok":true}';
const make = (text = json, type = "application/json") =>
  new BufferedResponse(new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>, { status: 201, statusText: "Created", headers: { "content-type": type } });

describe("BufferedResponse, the Node transport's Response", () => {
  it("is a Response with the status and headers it was given", () => {
    const response = make();
    expect(response).toBeInstanceOf(Response);
    expect(response).toMatchObject({ status: 201, statusText: "Created", ok: true, bodyUsed: false });
    expect(response.headers.get("content-type")).toBe("application/json");
  });

  it.each([
    ["text", (r: Response) => r.text(), json],
    ["json", (r: Response) => r.json(), JSON.parse(json)],
    ["arrayBuffer", async (r: Response) => new TextDecoder().decode(await r.arrayBuffer()), json],
    ["bytes", async (r: Response) => new TextDecoder().decode(await r.bytes()), json],
    ["blob", async (r: Response) => [await (await r.blob()).text(), (await make().blob()).type], [json, "application/json"]],
    ["body", async (r: Response) => new Response(r.body).text(), json],
  ])("reads the body with %s, once", async (_, read, expected) => {
    const response = make();
    await expect(read(response)).resolves.toEqual(expected);
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("reads a form body", async () => {
    const form = await make("a=1&b=two", "application/x-www-form-urlencoded").formData();
    expect([form.get("a"), form.get("b")]).toEqual(["1", "two"]);
  });

  it("clones until the body is used", async () => {
    const response = make();
    const copy = response.clone();
    await expect(copy.json()).resolves.toEqual(JSON.parse(json));
    await expect(response.text()).resolves.toBe(json);
    expect(() => response.clone()).toThrow(TypeError);
  });
});
