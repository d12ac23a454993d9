import { describe, expect, it } from "vitest";
import { MessageBudget, ProjectBudgets } from "../src/cdp/message-budget.js";
import { QUEUED_MESSAGE_OVERHEAD, ThrottledIntake } from "../src/cdp/throttled-intake.js";

/** An intake over one budget on a clock the test moves, recording what it did. */
function intakeOf(limits: { messageRate: number; byteRate: number }, maxQueuedBytes = 1024, extraCost = 0) {
  let now = 0;
  const events: string[] = [];
  const handled: string[] = [];
  const intake = new ThrottledIntake({
    budgets: [new MessageBudget(limits, () => now)],
    maxQueuedBytes,
    pause: () => events.push("pause"),
    resume: () => events.push("resume"),
    handle: (data) => (handled.push(data.toString()), extraCost),
    overflow: () => events.push("overflow"),
  });
  return { intake, events, handled, advance: (ms: number) => void (now += ms) };
}

describe("ThrottledIntake", () => {
  it("holds what arrives in debt, pauses reading, and lets everything through in order once the budget recovers", async () => {
    const { intake, events, handled, advance } = intakeOf({ messageRate: 2, byteRate: 0 });
    for (const text of ["a", "b", "c", "d", "e"]) intake.receive(Buffer.from(text));
    expect(handled).toEqual(["a", "b", "c"]);
    expect(events).toEqual(["pause"]);
    expect(intake.waiting).toBe(2);
    advance(1_000);
    await expect.poll(() => handled).toEqual(["a", "b", "c", "d", "e"]);
    expect(events).toEqual(["pause", "resume"]);
  });

  it("bounds what waits: past maxQueuedBytes it drops the queue, handles nothing more and reports the overflow", () => {
    const { intake, events, handled } = intakeOf({ messageRate: 1, byteRate: 0 }, 10 * QUEUED_MESSAGE_OVERHEAD);
    for (let i = 0; i < 20; i++) intake.receive(Buffer.from(String(i)));
    expect(handled).toEqual(["0", "1"]);
    expect(events).toEqual(["pause", "overflow"]);
    expect(intake.waiting).toBe(0);
    intake.receive(Buffer.from("late"));
    expect(handled).toEqual(["0", "1"]);
  });

  it("charges what a message cost beyond its size (its JSON structure) after handling it, so a dense message holds the next one back", async () => {
    // 100 bytes/s. Plain 1-byte messages all pass at once...
    const plain = intakeOf({ messageRate: 0, byteRate: 100 });
    for (const text of ["a", "b", "c"]) plain.intake.receive(Buffer.from(text));
    expect(plain.handled).toEqual(["a", "b", "c"]);
    // ...but ones that report 149 bytes more of cost each put the budget 0.5 s in debt.
    const dense = intakeOf({ messageRate: 0, byteRate: 100 }, 1024, 149);
    for (const text of ["a", "b", "c"]) dense.intake.receive(Buffer.from(text));
    expect(dense.handled).toEqual(["a"]);
    dense.advance(500);
    await expect.poll(() => dense.handled).toEqual(["a", "b"]);
    expect(dense.intake.waiting).toBe(1);
    dense.intake.close();
  });

  it("with both rates off lets everything through at once", () => {
    const { intake, events, handled } = intakeOf({ messageRate: 0, byteRate: 0 });
    for (let i = 0; i < 1000; i++) intake.receive(Buffer.alloc(1024 * 1024));
    expect(handled.length).toBe(1000);
    expect(events).toEqual([]);
  });
});

describe("ProjectBudgets", () => {
  it("keeps a project's spent budget after its last connection until it has recovered, so reconnecting resets nothing", async () => {
    let now = 0;
    const budgets = new ProjectBudgets({ messageRate: 10, byteRate: 0 }, () => now);
    const first = budgets.acquire("proj_a");
    for (let i = 0; i < 11; i++) first.charge(1);
    budgets.release("proj_a");
    expect(budgets.acquire("proj_a")).toBe(first);
    expect(first.msUntilReady()).toBeGreaterThan(0);
    budgets.release("proj_a");
    now += 60_000;
    await expect.poll(() => budgets.size, { timeout: 5_000 }).toBe(0);
  });
});
