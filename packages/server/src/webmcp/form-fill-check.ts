import type { CdpConnection } from "./cdp-connection.js";

/** A declarative tool's form: where it lives and its DOM node. */
export interface FormLocation {
  sessionId: string;
  frameId: string;
  backendNodeId: number;
}

/**
 * The service's own check, run in an isolated world of the form's frame (so nothing the
 * page defined can answer for it): every input value that names a control of the form
 * shows in that control. Values that are not strings, numbers or booleans, and names
 * without a control, are not compared, since the browser has no one way to show them.
 */
const FORM_REFLECTS_INPUT = `function (input) {
  if (!(this instanceof HTMLFormElement) || !this.isConnected) return false;
  for (const [name, value] of Object.entries(input)) {
    if (!["string", "number", "boolean"].includes(typeof value)) continue;
    const named = this.elements.namedItem(name);
    if (named === null) continue;
    const controls = named instanceof RadioNodeList ? Array.from(named) : [named];
    const shown = controls.some((control) => {
      if (control.type === "checkbox") return control.checked === Boolean(value);
      if (control.type === "radio") return control.checked && control.value === String(value);
      return control.value === String(value);
    });
    if (!shown) return false;
  }
  return true;
}`;

const WORLD_NAME = "browser-service-webmcp";

/** The service's form check threw inside the page. */
export class FormCheckError extends Error {
  /** Stable code of the failure. */
  readonly code = "form_check_failed";

  constructor(message: string) {
    super(message);
    this.name = "FormCheckError";
  }
}

/**
 * Checks whether the browser has filled a declarative tool's form with an invocation's
 * input, through DevTools: `Page.createIsolatedWorld`, `DOM.resolveNode` and
 * `Runtime.callFunctionOn` with the service's fixed function; nothing the page provides
 * is evaluated. One instance serves one invocation (and creates its world once).
 */
export class FormFillCheck {
  readonly #connection: CdpConnection;
  readonly #form: FormLocation;
  #contextId: number | undefined;

  constructor(connection: CdpConnection, form: FormLocation) {
    this.#connection = connection;
    this.#form = form;
  }

  /** Whether the form shows `input` now; rejects if the form or its frame cannot be reached. */
  async reflects(input: Record<string, unknown>): Promise<boolean> {
    const { sessionId, frameId, backendNodeId } = this.#form;
    this.#contextId ??= (await this.#connection.send<{ executionContextId: number }>("Page.createIsolatedWorld", { frameId, worldName: WORLD_NAME }, sessionId)).executionContextId;
    const { object } = await this.#connection.send<{ object: { objectId?: string } }>("DOM.resolveNode", { backendNodeId, executionContextId: this.#contextId }, sessionId);
    if (object.objectId === undefined) return false;
    try {
      const { result, exceptionDetails } = await this.#connection.send<{ result: { value?: unknown }; exceptionDetails?: { text?: string } }>(
        "Runtime.callFunctionOn",
        { objectId: object.objectId, functionDeclaration: FORM_REFLECTS_INPUT, arguments: [{ value: input }], returnByValue: true },
        sessionId,
      );
      if (exceptionDetails) throw new FormCheckError(`The form check failed in the page: ${exceptionDetails.text ?? "exception"}`);
      return result.value === true;
    } finally {
      await this.#connection.send("Runtime.releaseObject", { objectId: object.objectId }, sessionId);
    }
  }
}
