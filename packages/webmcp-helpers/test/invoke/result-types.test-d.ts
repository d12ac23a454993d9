import type { BrowserServiceClient, OutcomeUnknownError } from "@browser-service/client";
import type { WebMcpAwaitingSubmissionOutput, WebMcpTool } from "@browser-service/types";
import { describe, expectTypeOf, it } from "vitest";
import { type InvocationResult, type InvokeToolOptions, invokeTool } from "../../src/index.js";

declare const client: BrowserServiceClient;
declare const tool: WebMcpTool;

describe("types", () => {
  it("narrows a result by status", () => {
    expectTypeOf(invokeTool(client, "b", { select: { name: "x" } })).resolves.toEqualTypeOf<InvocationResult>();
    const result = {} as InvocationResult;
    if (result.status === "outcome_unknown") {
      expectTypeOf(result.invocationId).toEqualTypeOf<string | undefined>();
      expectTypeOf(result.mayHaveRun).toEqualTypeOf<true>();
      expectTypeOf(result.error).toEqualTypeOf<OutcomeUnknownError>();
    } else {
      expectTypeOf(result.invocationId).toEqualTypeOf<string>();
    }
    if (result.status === "awaiting_submission") expectTypeOf(result.output).toEqualTypeOf<WebMcpAwaitingSubmissionOutput>();
    if (result.status === "error") expectTypeOf(result.errorText).toEqualTypeOf<string | undefined>();
    if (result.status === "completed") expectTypeOf(result.untrustedContent).toEqualTypeOf<boolean>();
    expectTypeOf(result.status).toEqualTypeOf<"completed" | "canceled" | "error" | "awaiting_submission" | "outcome_unknown">();
  });

  it("takes exactly one of select and toolRef", () => {
    expectTypeOf<{ select: { name: string } }>().toExtend<InvokeToolOptions>();
    expectTypeOf<{ toolRef: string }>().toExtend<InvokeToolOptions>();
    expectTypeOf<{ toolRef: WebMcpTool }>().toExtend<InvokeToolOptions>();
    // @ts-expect-error both at once
    const both: InvokeToolOptions = { select: { name: "x" }, toolRef: tool };
    // @ts-expect-error neither
    const neither: InvokeToolOptions = { input: {} };
    // @ts-expect-error criteria keys are checked
    const typo: InvokeToolOptions = { select: { tab_id: 3 } };
    expectTypeOf([both, neither, typo]).toBeArray();
  });
});
