import type { BrowserTelemetryConfig } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { BrowserTelemetry, type CapturedEvent } from "../src/telemetry/browser-telemetry.js";
import type { TelemetryStore } from "../src/telemetry/sql-telemetry-store.js";
import { TelemetryService } from "../src/telemetry/telemetry-service.js";

const on = { enabled: true };
const off = { enabled: false };
const CONFIG: BrowserTelemetryConfig = {
  browser: {
    control: { enabled: true, cdp: { excluded_methods: ["Page.reload"] } },
    connection: on,
    system: on,
    captcha: on,
    console: on,
    network: off,
    page: off,
    interaction: off,
    screenshot: off,
    platform: off,
  },
  storage: { enabled: true },
  export: null,
};

describe("a browser's capture", () => {
  it("drops events past its rate and counts them, and captures nothing of a category that is off", () => {
    const captured: CapturedEvent[] = [];
    let dropped = 0;
    const recorder = new BrowserTelemetry(
      "brw_x",
      "proj_x",
      CONFIG,
      { captured: (_r, event) => captured.push(event), dropped: (_r, n) => (dropped += n) },
      { maxPerSecond: 10 },
    );
    for (let i = 0; i < 50; i++) recorder.emit("console", "console_log", { kind: "cdp" }, { text: `line ${i}` });
    recorder.emit("page", "page_load", { kind: "cdp" });
    expect(captured).toHaveLength(10);
    expect(dropped).toBe(40);
    expect(captured.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(recorder.commandReport("Page.navigate")).toBe("report");
    expect(recorder.commandReport("Page.reload")).toBe("excluded");
    expect(recorder.commandReport("Runtime.evaluate")).toBe("ignore");
  });

  it("holds at most its byte bound of events waiting for a store that does not answer, and counts the rest", async () => {
    const batches: number[] = [];
    const hanging = new Promise<never>(() => undefined);
    const store = {
      begin: async () => undefined,
      append: (_browser: string, _project: string, events: readonly unknown[]) => {
        batches.push(events.length);
        return hanging;
      },
      addDropped: async () => undefined,
      end: async () => undefined,
      sweep: async () => ({ expired: 0, dropped: 0 }),
      browser: async () => undefined,
      page: async () => ({ items: [], hasMore: false }),
    } as unknown as TelemetryStore;
    const service = new TelemetryService({
      store,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      maxEventsPerBrowser: 1000,
      maxEventsPerProject: 1000,
      retentionMs: 1000,
      flushMs: 60_000,
      sweepMs: 60_000,
      maxEventsPerSecond: 1_000_000,
      maxPendingBytes: 64 * 1024,
    });
    const router = {} as never;
    const recorder = await service.start("brw_y", "proj_y", { ...CONFIG, browser: { ...CONFIG.browser, console: off } }, router);
    const line = "x".repeat(1000);
    for (let i = 0; i < 1000; i++) recorder.emit("control", "cdp_command", { kind: "kernel_api" }, { method: line });
    // About 60 of the 1000 (each some 1,100 bytes) fit in 64 KiB; the flush hands them to the store, which never answers.
    void service.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toHaveLength(1);
    expect(batches[0]).toBeGreaterThan(40);
    expect(batches[0]).toBeLessThanOrEqual(60);
    // More keep coming while the store hangs: numbered, streamed, and never held past the bound.
    for (let i = 0; i < 1000; i++) recorder.emit("control", "cdp_command", { kind: "kernel_api" }, { method: line });
    expect(recorder.lastSeq).toBe(2000);
    expect(service.pendingBytes).toBeLessThanOrEqual(64 * 1024);
  });

  it("drops a follower that throws, and the producer of the event never sees the throw", async () => {
    const store = {
      begin: async () => undefined,
      append: async () => 0,
      addDropped: async () => undefined,
      end: async () => undefined,
      sweep: async () => ({ expired: 0, dropped: 0 }),
      browser: async () => undefined,
      page: async () => ({ items: [], hasMore: false }),
    } as unknown as TelemetryStore;
    const warnings: string[] = [];
    const service = new TelemetryService({
      store,
      log: { info: () => undefined, warn: (_details, message) => warnings.push(message), error: () => undefined },
      maxEventsPerBrowser: 1000,
      maxEventsPerProject: 1000,
      retentionMs: 1000,
      flushMs: 60_000,
      sweepMs: 60_000,
    });
    const recorder = await service.start("brw_z", "proj_z", { ...CONFIG, browser: { ...CONFIG.browser, console: off } }, {} as never);
    let calls = 0;
    const seen: number[] = [];
    service.follow("brw_z", {
      event: () => {
        calls++;
        throw new Error("the follower's socket broke");
      },
      end: () => undefined,
    });
    service.follow("brw_z", { event: (captured) => seen.push(captured.seq), end: () => undefined });
    // A DevTools socket's close listener emits like this: a throw here would end the process.
    expect(() => recorder.emit("connection", "cdp_disconnect", { kind: "kernel_api" }, {})).not.toThrow();
    recorder.emit("connection", "cdp_connect", { kind: "kernel_api" });
    expect(calls).toBe(1);
    expect(seen).toEqual([1, 2]);
    expect(warnings).toHaveLength(1);
    await service.stop();
  });
});
