import type { CdpConnection } from "../cdp/cdp-connection.js";

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

/** Every object the check creates in the page belongs to this group, released at the end. */
const OBJECT_GROUP = "browser-service-form-check";
// Creates the input once in the isolated world; each later look passes only its handle.
const KEEP_INPUT = "function (input) { return input; }";

/**
 * Checks whether the browser has filled a declarative tool's form with an invocation's
 * input, through DevTools: `Page.createIsolatedWorld`, `DOM.resolveNode` and
 * `Runtime.callFunctionOn` with the service's fixed function; nothing the page provides
 * is evaluated. The input crosses to the page once, on the first look; later looks send
 * only object handles. One instance serves one invocation; {@link dispose} releases
 * what it created.
 */
export class FormFillCheck {
  readonly #connection: CdpConnection;
  readonly #form: FormLocation;
  readonly #input: Record<string, unknown>;
  #world: Promise<{ contextId: number; inputObjectId: string }> | undefined;

  constructor(connection: CdpConnection, form: FormLocation, input: Record<string, unknown>) {
    this.#connection = connection;
    this.#form = form;
    this.#input = input;
  }

  /** Whether the form shows the input now; rejects if the form or its frame cannot be reached. */
  async reflects(): Promise<boolean> {
    const { sessionId, backendNodeId } = this.#form;
    const { contextId, inputObjectId } = await (this.#world ??= this.#prepare());
    const { object } = await this.#connection.send<{ object: { objectId?: string } }>(
      "DOM.resolveNode",
      { backendNodeId, executionContextId: contextId, objectGroup: OBJECT_GROUP },
      sessionId,
    );
    if (object.objectId === undefined) return false;
    try {
      const { result, exceptionDetails } = await this.#connection.send<{ result: { value?: unknown }; exceptionDetails?: { text?: string } }>(
        "Runtime.callFunctionOn",
        { objectId: object.objectId, functionDeclaration: FORM_REFLECTS_INPUT, arguments: [{ objectId: inputObjectId }], returnByValue: true },
        sessionId,
      );
      if (exceptionDetails) throw new FormCheckError(`The form check failed in the page: ${exceptionDetails.text ?? "exception"}`);
      return result.value === true;
    } finally {
      await this.#connection.send("Runtime.releaseObject", { objectId: object.objectId }, sessionId);
    }
  }

  /** Releases the objects the check made in the page; safe to call when it never ran. */
  dispose(): void {
    if (this.#world === undefined) return;
    this.#world
      .then(
        () => this.#connection.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP }, this.#form.sessionId),
        () => undefined,
      )
      .catch(() => {
        // The frame is gone, and its objects with it.
      });
  }

  async #prepare(): Promise<{ contextId: number; inputObjectId: string }> {
    const { sessionId, frameId } = this.#form;
    const { executionContextId } = await this.#connection.send<{ executionContextId: number }>(
      "Page.createIsolatedWorld",
      { frameId, worldName: WORLD_NAME },
      sessionId,
    );
    const { result, exceptionDetails } = await this.#connection.send<{ result: { objectId?: string }; exceptionDetails?: { text?: string } }>(
      "Runtime.callFunctionOn",
      { executionContextId, functionDeclaration: KEEP_INPUT, arguments: [{ value: this.#input }], objectGroup: OBJECT_GROUP },
      sessionId,
    );
    if (exceptionDetails || result.objectId === undefined) throw new FormCheckError("The form check could not place the input in the page.");
    return { contextId: executionContextId, inputObjectId: result.objectId };
  }
}
