import { describe, expect, it } from "vitest";
import { ReceivedResponse } from "../../src/platform/received-response.js";

const json = '{"name":"ad-blocker"}';
const make = (status = 200) =>
  new ReceivedResponse(
    status,
    "OK",
    { "content-type": "application/json", "x-request-id": "req_1", "set-cookie": ["a=1", "b=2"] },
    new TextEncoder().encode(json) as Uint8Array<ArrayBuffer>,
  );

describe("ReceivedResponse, what the Node transport answers before anyone asks for a Response", () => {
  it("reads the status, headers and JSON body, once", async () => {
    const received = make();
    expect([received.status, received.ok, received.bodyUsed]).toEqual([200, true, false]);
    expect(received.headers.get("x-request-id")).toBe("req_1");
    expect(received.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    await expect(received.json()).resolves.toEqual(JSON.parse(json));
    expect(received.bodyUsed).toBe(true);
    await expect(received.text()).rejects.toThrow(TypeError);
  });

  it("builds one real Response, whose body is used when this one's was", async () => {
    const received = make(201);
    await received.text();
    const response = received.toResponse();
    expect(response).toBeInstanceOf(Response);
    expect(received.toResponse()).toBe(response);
    expect(response).toMatchObject({ status: 201, bodyUsed: true });
    expect(response.headers.get("content-type")).toBe("application/json");
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("reads other body forms through the Response, once", async () => {
    const received = make();
    expect(new TextDecoder().decode(await received.arrayBuffer())).toBe(json);
    expect(received.bodyUsed).toBe(true);
    expect(() => received.blob()).toThrow(TypeError);
  });

  it("gives a 204 a Response without a body", () => {
    const response = new ReceivedResponse(204, "No Content", {}, new Uint8Array() as Uint8Array<ArrayBuffer>).toResponse();
    expect([response.status, response.body]).toEqual([204, null]);
  });
});
