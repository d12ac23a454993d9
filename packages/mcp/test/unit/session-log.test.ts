import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ConsoleLine } from "../../src/console-feed.js";
import { type LogMessage, SessionLog } from "../../src/session-log.js";

const line = (level: ConsoleLine["level"], text: string = level): ConsoleLine => ({
  level,
  data: `console in the browser: <untrusted-page-text>${text}</untrusted-page-text>`,
});

/** A session log whose sends are recorded (and resolve at once unless `hold`). */
function recorded(options: { backlogged?: () => boolean; hold?: boolean } = {}) {
  const sent: LogMessage[] = [];
  const log = new SessionLog({
    send: (message) => {
      sent.push(message);
      return options.hold ? new Promise(() => undefined) : Promise.resolve();
    },
    now: () => Date.now(),
    ...(options.backlogged !== undefined && { backlogged: options.backlogged }),
  });
  return { log, sent };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a session's log", () => {
  it("sends info and above before the client sets a level, then what the level lets through", () => {
    const { log, sent } = recorded();
    expect(log.level).toBeUndefined();
    for (const level of ["debug", "info", "warning", "error"] as const) log.offer(line(level));
    expect(sent.map((message) => message.level)).toEqual(["info", "warning", "error"]);
    expect(sent.every((message) => message.logger === "browser-console")).toBe(true);

    sent.length = 0;
    log.setLevel("warning");
    for (const level of ["debug", "info", "notice", "warning", "error", "critical"] as const) log.offer(line(level));
    expect(sent.map((message) => message.level)).toEqual(["warning", "error", "critical"]);

    sent.length = 0;
    log.setLevel("debug");
    log.offer(line("debug"));
    expect(sent.map((message) => message.level)).toEqual(["debug"]);
  });

  it("sends at most 50 a second, then one warning with how many were dropped", async () => {
    const { log, sent } = recorded();
    for (let index = 0; index < 120; index++) log.offer(line("info", `line ${index}`));
    expect(sent).toHaveLength(50);
    // Lines below the level are not dropped: they were never to be sent.
    log.offer(line("debug"));
    // When the second is over, the warning comes without waiting for another line.
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent).toHaveLength(51);
    expect(sent[50]).toEqual({
      level: "warning",
      logger: "browser-console",
      data: "The bridge dropped 70 browser console lines: 70 over the limit of 50 a second.",
    });
    log.offer(line("info", "after"));
    expect(sent.at(-1)?.data).toContain("after");
    await vi.advanceTimersByTimeAsync(5000);
    expect(sent).toHaveLength(52);
  });

  it("the warning leads the next second's lines when lines keep coming", () => {
    const { log, sent } = recorded();
    for (let index = 0; index < 60; index++) log.offer(line("error"));
    vi.setSystemTime(Date.now() + 1000);
    log.offer(line("error", "next"));
    expect(sent.slice(50).map((message) => message.data)).toEqual([
      "The bridge dropped 10 browser console lines: 10 over the limit of 50 a second.",
      expect.stringContaining("next"),
    ]);
    log.close();
  });

  it("queues nothing for a client that does not read: drops while backlogged, and says so once it reads again", async () => {
    let backlogged = true;
    const { log, sent } = recorded({ backlogged: () => backlogged });
    for (let index = 0; index < 5; index++) log.offer(line("warning"));
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(3000);
    expect(sent).toEqual([]);
    backlogged = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(sent.map((message) => message.data)).toEqual(["The bridge dropped 5 browser console lines: 5 while the client was not reading its messages."]);
  });

  it("holds at most 64 messages its transport has not written", () => {
    const { log, sent } = recorded({ hold: true });
    for (let index = 0; index < 50; index++) log.offer(line("info"));
    vi.setSystemTime(Date.now() + 1000);
    for (let index = 0; index < 50; index++) log.offer(line("info"));
    expect(sent).toHaveLength(64);
    log.close();
  });

  it("a client that asked for errors only is not told of dropped warnings", async () => {
    const { log, sent } = recorded();
    log.setLevel("error");
    for (let index = 0; index < 55; index++) log.offer(line("error"));
    await vi.advanceTimersByTimeAsync(2000);
    log.offer(line("error", "later"));
    expect(sent).toHaveLength(51);
    expect(sent.every((message) => message.level === "error")).toBe(true);
  });

  it("sends nothing once closed", async () => {
    const { log, sent } = recorded();
    for (let index = 0; index < 55; index++) log.offer(line("info"));
    log.close();
    await vi.advanceTimersByTimeAsync(2000);
    log.offer(line("error"));
    expect(sent).toHaveLength(50);
  });
});
