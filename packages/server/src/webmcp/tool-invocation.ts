import type { WebMcpInvocationResult } from "@browser-service/types";
import { CdpDisconnectedError, CdpNotConnectedError, CdpProtocolError, CdpSessionClosedError, CdpTimeoutError } from "../cdp/cdp-connection.js";
import { BACKLOG_REFUSAL } from "../cdp/cdp-router.js";
import { type ErrorDetail, InternalError, OutcomeUnknownError, RateLimitedError, ToolRefStaleError } from "../http/api-errors.js";
import type { BrowserAttachment } from "./browser-attachment.js";
import type { ToolRespondedEvent } from "./cdp-protocol.js";
import { FormFillCheck, type FormLocation } from "./form-fill-check.js";
import { toInvocationOutcome } from "./page-data.js";
import type { Registration, RegistryLog } from "./tool-registry.js";

/** What one invocation asks for. */
export interface InvocationRequest {
  registration: Registration;
  input: Record<string, unknown>;
  timeoutSec: number;
  /** Aborted when the caller stops waiting (its HTTP client disconnected). */
  signal?: AbortSignal;
}

/** The invocation's end was not observed. */
type Unobserved = { kind: "timeout" } | { kind: "vanished" } | { kind: "disconnected" } | { kind: "abandoned" };
/** The browser reported how the invocation ended, or the form it filled awaits submission. */
type Observed = { kind: "responded"; event: ToolRespondedEvent } | { kind: "awaiting_submission" };

// Protocol errors of `invokeTool` that mean the registration (or its frame or target) is
// already gone in the browser, so nothing ran.
const GONE_IN_BROWSER = /tool not found|no frame for given id|session with given id not found/i;

/** Between two looks at a form that the browser has not finished filling. */
const FORM_RECHECK_MS = 50;
/** How long a 504 waits for the browser to acknowledge `cancelInvocation`. */
const CANCEL_ACK_MS = 2_000;

const AWAITING_OUTPUT = { form_populated: true, submitted: false } as const;

const CANCEL_PENDING: ErrorDetail = {
  code: "cancellation_pending",
  message:
    "The browser had not yet acknowledged the invocation; the service asks it to cancel the invocation (WebMCP.cancelInvocation) as soon as it does. The page may still act before it stops.",
};

/**
 * Runs one WebMCP invocation through `WebMCP.invokeTool` on the session that owns the
 * tool's frame, exactly once (never retried), and waits for how it ends:
 * `toolResponded` (completed, canceled, error), a declarative form without autosubmit
 * filled (`awaiting_submission`), or 504 `outcome_unknown` when the timeout passes or
 * the tab or frame vanishes after the invocation may have begun. A navigation of the
 * frame does not end the wait: the browser may still report the result (a form whose
 * submission navigates does). When the wait ends without a result while the tool may
 * still run (timeout, caller gone), the browser is asked to cancel it: at once if it has
 * acknowledged the invocation, else when its acknowledgement arrives.
 */
export async function runInvocation(attachment: BrowserAttachment, request: InvocationRequest, log: RegistryLog): Promise<WebMcpInvocationResult> {
  const { registration, input, timeoutSec, signal } = request;
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
  // A closing connection clears the registry, which reports every session gone.
  const stopGoneWatch = attachment.registry.onGone((goneSession, goneFrame) => {
    if (goneSession === sessionId && (goneFrame === undefined || goneFrame === frameId))
      finish({ kind: attachment.connection.closed ? "disconnected" : "vanished" });
  });
  const abandon = () => finish({ kind: "abandoned" });
  if (signal?.aborted) abandon();
  signal?.addEventListener("abort", abandon, { once: true });
  let stopEventWatch: (() => void) | undefined;
  // Until the browser's reply names the invocation, its events are kept for it.
  let stopExpecting: (() => void) | undefined = attachment.invocations.expect();
  let formCheck: FormFillCheck | undefined;

  try {
    const sent = attachment.connection.send<{ invocationId: string }>("WebMCP.invokeTool", { frameId, toolName: registration.tool.name, input }, sessionId);
    const first = await Promise.race([
      sent.then(
        (reply) => ({ kind: "started" as const, reply }),
        (error: unknown) => ({ kind: "refused" as const, error }),
      ),
      unobserved,
    ]);
    if (first.kind === "refused") return refused(attachment, registration, first.error);
    if (first.kind !== "started") {
      // The tool may run all the same: once the browser's reply names the invocation, it
      // is asked to cancel, unless its tab or frame (or the connection) is already gone.
      const cancelLater = first.kind === "timeout" || first.kind === "abandoned";
      if (cancelLater)
        sent.then(
          ({ invocationId }) => requestCancel(attachment, sessionId, invocationId, log),
          () => undefined,
        );
      throw outcomeUnknown(first, undefined, timeoutSec, cancelLater ? CANCEL_PENDING : undefined);
    }
    const invocationId = first.reply.invocationId;
    const form = awaitingForm(registration, sessionId);
    stopEventWatch = attachment.invocations.watch(invocationId, {
      invoked: () => {
        if (!form || formCheck) return;
        formCheck = new FormFillCheck(attachment.connection, form, input);
        watchFormFill(
          formCheck,
          () => settled,
          () => finish({ kind: "awaiting_submission" }),
          log,
        );
      },
      responded: (event) => finish({ kind: "responded", event }),
    });
    stopExpecting();
    stopExpecting = undefined;
    const ending = await Promise.race([observed, unobserved]);
    if (ending.kind === "responded") return { invocation_id: invocationId, ...toInvocationOutcome(ending.event) };
    if (ending.kind === "awaiting_submission") return { invocation_id: invocationId, status: "awaiting_submission", output: { ...AWAITING_OUTPUT } };
    const cancellation = ending.kind === "timeout" || ending.kind === "abandoned" ? await requestCancel(attachment, sessionId, invocationId, log) : undefined;
    throw outcomeUnknown(ending, invocationId, timeoutSec, cancellation);
  } finally {
    settled = true;
    clearTimeout(timer);
    signal?.removeEventListener("abort", abandon);
    stopGoneWatch();
    stopEventWatch?.();
    stopExpecting?.();
    formCheck?.dispose();
  }
}

/**
 * Asks the browser to cancel an invocation whose result will not be waited for, and
 * says what came of the request (acknowledged or not) for the 504's details. The
 * outcome stays unknown either way: the tool may have had effects before it stopped.
 */
async function requestCancel(attachment: BrowserAttachment, sessionId: string, invocationId: string, log: RegistryLog): Promise<ErrorDetail> {
  try {
    await attachment.connection.send("WebMCP.cancelInvocation", { invocationId }, sessionId, CANCEL_ACK_MS);
    return {
      code: "cancellation_requested",
      message:
        "The service asked the browser to cancel the invocation (WebMCP.cancelInvocation) and the browser accepted; the page may still have acted before it stopped.",
    };
  } catch (error) {
    log.warn({ invocationId, err: error }, "the browser did not accept a WebMCP cancellation");
    return {
      code: "cancellation_failed",
      message: `The service asked the browser to cancel the invocation, but it did not accept: ${(error as Error).message}`,
    };
  }
}

/** The form of a declarative tool without autosubmit, whose invocation ends once it is filled. */
function awaitingForm(registration: Registration, sessionId: string): FormLocation | undefined {
  const { backendNodeId, annotations } = registration.tool;
  if (backendNodeId === undefined || annotations?.autosubmit === true) return undefined;
  return { sessionId, frameId: registration.frameId, backendNodeId };
}

/** Looks at the form until it shows the input, the invocation ends otherwise, or the form cannot be reached. */
function watchFormFill(check: FormFillCheck, isSettled: () => boolean, filled: () => void, log: RegistryLog): void {
  const look = async (): Promise<void> => {
    while (!isSettled()) {
      if (await check.reflects()) {
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
    attachment.registry.forget(registration);
    throw new ToolRefStaleError(`The tool registration is gone in the browser (${error.message}); discover tools again.`);
  }
  // Other commands (other invocations' inputs) fill the browser's pipe faster than it reads
  // them: this one was not sent, so the caller may send it again shortly.
  if (error instanceof CdpProtocolError && error.message === BACKLOG_REFUSAL)
    throw new RateLimitedError("The browser is receiving commands faster than it reads them, so the invocation was not sent", 1);
  if (error instanceof CdpNotConnectedError)
    throw new ToolRefStaleError("The connection to the browser was replaced; its tool registrations are gone. Discover tools again.");
  if (error instanceof CdpSessionClosedError || error instanceof CdpDisconnectedError || error instanceof CdpTimeoutError) {
    // The command was sent; whether the browser started the tool is unknown.
    throw new OutcomeUnknownError(
      "The tool's tab or frame closed, the browser did not answer, or the browser connection was lost while the invocation was being started; the tool may have run.",
      undefined,
      { code: error.code, message: error.message },
    );
  }
  throw new InternalError("The browser refused to invoke the tool.", error);
}

function outcomeUnknown(ending: Unobserved, invocationId: string | undefined, timeoutSec: number, cancellation: ErrorDetail | undefined): OutcomeUnknownError {
  let inner: ErrorDetail;
  let message: string;
  if (ending.kind === "timeout") {
    message = `No result within timeout_sec=${timeoutSec}; the tool may still have run.`;
    inner = { code: "timeout", message: `No result from the browser within ${timeoutSec} s.` };
  } else if (ending.kind === "vanished") {
    message = "The tool's tab or frame closed before its result arrived; the tool may have run.";
    inner = { code: "target_closed", message: "The tab or frame that registered the tool is gone." };
  } else if (ending.kind === "abandoned") {
    message = "The caller disconnected before the tool's result arrived; the tool may have run.";
    inner = { code: "caller_gone", message: "The HTTP client closed its connection while the invocation ran." };
  } else {
    message = "The connection to the browser was lost before the tool's result arrived; the tool may have run.";
    inner = { code: "browser_disconnected", message: "The browser's DevTools connection closed (the browser may have crashed)." };
  }
  if (cancellation?.code === "cancellation_requested") message += " The service asked the browser to cancel it.";
  else if (cancellation?.code === "cancellation_pending") message += " The service asks the browser to cancel it once the browser acknowledges it.";
  return new OutcomeUnknownError(message, invocationId, inner, cancellation === undefined ? undefined : [cancellation]);
}
