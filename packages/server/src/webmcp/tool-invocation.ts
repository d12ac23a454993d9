import type { WebMcpInvocationResult } from "@browser-service/types";
import { InternalError, OutcomeUnknownError, ToolRefStaleError, type ErrorDetail } from "../http/api-errors.js";
import type { BrowserAttachment } from "./browser-attachment.js";
import { CdpDisconnectedError, CdpNotConnectedError, CdpProtocolError, CdpSessionClosedError } from "./cdp-connection.js";
import type { ToolRespondedEvent } from "./cdp-protocol.js";
import { FormFillCheck } from "./form-fill-check.js";
import { toInvocationOutcome } from "./page-data.js";
import type { Registration, SnapshotLog } from "./tool-snapshot.js";

/** What one invocation asks for. */
export interface InvocationRequest {
  registration: Registration;
  input: Record<string, unknown>;
  timeoutSec: number;
}

/** The invocation's end was not observed. */
type Unobserved = { kind: "timeout" } | { kind: "vanished" } | { kind: "disconnected" };
/** The browser reported how the invocation ended, or the form it filled awaits submission. */
type Observed = { kind: "responded"; event: ToolRespondedEvent } | { kind: "awaiting_submission" };

// Protocol errors of `invokeTool` that mean the registration (or its frame or target) is
// already gone in the browser, so nothing ran.
const GONE_IN_BROWSER = /tool not found|no frame for given id|session with given id not found/i;

/** Between two looks at a form that the browser has not finished filling. */
const FORM_RECHECK_MS = 50;

const AWAITING_OUTPUT = { form_populated: true, submitted: false } as const;

/**
 * Runs one WebMCP invocation through `WebMCP.invokeTool` on the session that owns the
 * tool's frame, exactly once (never retried), and waits for how it ends:
 * `toolResponded` (completed, canceled, error), a declarative form without autosubmit
 * filled (`awaiting_submission`), or 504 `outcome_unknown` when the timeout passes or
 * the tab or frame vanishes after the invocation may have begun. A navigation of the
 * frame does not end the wait: the browser may still report the result (a form whose
 * submission navigates does).
 */
export async function runInvocation(attachment: BrowserAttachment, request: InvocationRequest, log: SnapshotLog): Promise<WebMcpInvocationResult> {
  const { registration, input, timeoutSec } = request;
  const { sessionId } = registration.session;
  const { frameId } = registration;
  let settled = false;
  let unobserve!: (ending: Unobserved) => void;
  let observe!: (ending: Observed) => void;
  const unobserved = new Promise<Unobserved>((resolve) => (unobserve = resolve));
  const observed = new Promise<Observed>((resolve) => (observe = resolve));
  const finish = (ending: Unobserved | Observed): void => {
    if (settled) return;
    settled = true;
    if (ending.kind === "responded" || ending.kind === "awaiting_submission") observe(ending);
    else unobserve(ending);
  };

  const timer = setTimeout(() => finish({ kind: "timeout" }), timeoutSec * 1000);
  // A closing connection clears the snapshot, which reports every session gone.
  const stopGoneWatch = attachment.snapshot.onGone((goneSession, goneFrame) => {
    if (goneSession === sessionId && (goneFrame === undefined || goneFrame === frameId)) finish({ kind: attachment.connection.closed ? "disconnected" : "vanished" });
  });
  let stopEventWatch: (() => void) | undefined;

  try {
    const sent = attachment.connection.send<{ invocationId: string }>("WebMCP.invokeTool", { frameId, toolName: registration.tool.name, input }, sessionId);
    const first = await Promise.race([sent.then((reply) => ({ kind: "started" as const, reply }), (error: unknown) => ({ kind: "refused" as const, error })), unobserved]);
    if (first.kind === "refused") return refused(attachment, registration, first.error);
    // The reply may still come; by then nobody listens.
    if (first.kind !== "started") throw outcomeUnknown(first, undefined, timeoutSec);
    const invocationId = first.reply.invocationId;
    const form = awaitingForm(registration, sessionId);
    stopEventWatch = attachment.invocations.watch(invocationId, {
      invoked: () => {
        if (form) watchFormFill(new FormFillCheck(attachment.connection, form), input, () => settled, () => finish({ kind: "awaiting_submission" }), log);
      },
      responded: (event) => finish({ kind: "responded", event }),
    });
    const ending = await Promise.race([observed, unobserved]);
    if (ending.kind === "responded") return { invocation_id: invocationId, ...toInvocationOutcome(ending.event) };
    if (ending.kind === "awaiting_submission") return { invocation_id: invocationId, status: "awaiting_submission", output: { ...AWAITING_OUTPUT } };
    throw outcomeUnknown(ending, invocationId, timeoutSec);
  } finally {
    settled = true;
    clearTimeout(timer);
    stopGoneWatch();
    stopEventWatch?.();
  }
}

/** The form of a declarative tool without autosubmit, whose invocation ends once it is filled. */
function awaitingForm(registration: Registration, sessionId: string): { sessionId: string; frameId: string; backendNodeId: number } | undefined {
  const { backendNodeId, annotations } = registration.tool;
  if (backendNodeId === undefined || annotations?.autosubmit === true) return undefined;
  return { sessionId, frameId: registration.frameId, backendNodeId };
}

/** Looks at the form until it shows the input, the invocation ends otherwise, or the form cannot be reached. */
function watchFormFill(check: FormFillCheck, input: Record<string, unknown>, isSettled: () => boolean, filled: () => void, log: SnapshotLog): void {
  const look = async (): Promise<void> => {
    while (!isSettled()) {
      if (await check.reflects(input)) {
        filled();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, FORM_RECHECK_MS));
    }
  };
  look().catch((error: unknown) => {
    // The form's document went away or the page broke the check: the invocation still
    // ends by the browser's response, the frame vanishing, or the timeout.
    if (!isSettled()) log.warn({ err: error }, "could not check whether a declarative WebMCP form was filled");
  });
}

/** `invokeTool` failed: nothing was started. */
function refused(attachment: BrowserAttachment, registration: Registration, error: unknown): never {
  if (error instanceof CdpProtocolError && GONE_IN_BROWSER.test(error.message)) {
    attachment.snapshot.forget(registration);
    throw new ToolRefStaleError(`The tool registration is gone in the browser (${error.message}); discover tools again.`);
  }
  if (error instanceof CdpNotConnectedError) throw new ToolRefStaleError("The connection to the browser was replaced; its tool registrations are gone. Discover tools again.");
  if (error instanceof CdpSessionClosedError || error instanceof CdpDisconnectedError) {
    // The command was sent; whether the browser started the tool is unknown.
    throw new OutcomeUnknownError("The tool's tab or frame closed, or the browser connection was lost, while the invocation was being started; the tool may have run.", undefined, { code: error.code, message: error.message });
  }
  throw new InternalError("The browser refused to invoke the tool.", error);
}

function outcomeUnknown(ending: Unobserved, invocationId: string | undefined, timeoutSec: number): OutcomeUnknownError {
  let inner: ErrorDetail;
  let message: string;
  if (ending.kind === "timeout") {
    message = `No result within timeout_sec=${timeoutSec}; the tool may still have run.`;
    inner = { code: "timeout", message: `No result from the browser within ${timeoutSec} s.` };
  } else if (ending.kind === "vanished") {
    message = "The tool's tab or frame closed before its result arrived; the tool may have run.";
    inner = { code: "target_closed", message: "The tab or frame that registered the tool is gone." };
  } else {
    message = "The connection to the browser was lost before the tool's result arrived; the tool may have run.";
    inner = { code: "browser_disconnected", message: "The browser's DevTools connection closed (the browser may have crashed)." };
  }
  return new OutcomeUnknownError(message, invocationId, inner);
}
