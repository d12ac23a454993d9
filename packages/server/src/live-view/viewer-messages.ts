import type { WebMcpInvokeRequest } from "@browser-service/types";
import { validateWebMcpInvokeRequest } from "@browser-service/validators";
import { ApiError } from "../http/api-errors.js";
import { parseJsonBody } from "../http/json-body.js";

/** A mouse button as the DevTools protocol names it. */
export type MouseButton = "none" | "left" | "middle" | "right";

/** What a viewer may ask of the live view, checked field by field: the server never forwards a viewer's text as a DevTools command. */
export type ViewerMessage =
  | { type: "select"; tab: string }
  | { type: "tools" }
  | { type: "mouse"; event: "move" | "down" | "up"; x: number; y: number; button: MouseButton; clicks: number; modifiers: number }
  | { type: "wheel"; x: number; y: number; dx: number; dy: number; modifiers: number }
  | { type: "key"; event: "down" | "up"; key: string; code: string; text: string | undefined; keyCode: number; modifiers: number }
  | { type: "text"; text: string }
  | { type: "invoke"; id: number; request: WebMcpInvokeRequest };

/** The messages that act on the browser; a watch-only viewer may send none of them. */
export const INPUT_MESSAGES: ReadonlySet<ViewerMessage["type"]> = new Set(["mouse", "wheel", "key", "text", "invoke"]);

/** The most characters of text one `text` message (typing, a paste) carries. */
export const MAX_TEXT_CHARS = 65_536;

// A page is at most this many CSS pixels wide or tall as far as input goes; wheel deltas alike.
const MAX_COORDINATE = 100_000;
const MAX_KEY_CHARS = 64;
const MAX_TAB_ID_CHARS = 128;
const BUTTONS: readonly MouseButton[] = ["none", "left", "middle", "right"];

/** A viewer's message could not be used; `message` says why, for the viewer. */
export class ViewerMessageError extends Error {
  /** Stable code of the failure. */
  readonly code = "invalid_message";

  constructor(message: string) {
    super(message);
    this.name = "ViewerMessageError";
  }
}

/** Parses one message of a viewer (JSON text); throws {@link ViewerMessageError} for anything else. */
export function parseViewerMessage(text: string): ViewerMessage {
  let value: unknown;
  try {
    // The API's own JSON rules: no `__proto__` or `constructor.prototype` anywhere.
    value = parseJsonBody(text);
  } catch (error) {
    throw new ViewerMessageError(error instanceof ApiError ? (error.details?.[0]?.message ?? error.message) : "A message must be JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ViewerMessageError("A message must be a JSON object.");
  const m = value as Record<string, unknown>;
  switch (m.type) {
    case "select":
      return { type: "select", tab: string(m, "tab", MAX_TAB_ID_CHARS) };
    case "tools":
      return { type: "tools" };
    case "mouse":
      return {
        type: "mouse",
        event: oneOf(m, "event", ["move", "down", "up"] as const),
        x: number(m, "x", 0, MAX_COORDINATE),
        y: number(m, "y", 0, MAX_COORDINATE),
        button: m.button === undefined ? "none" : oneOf(m, "button", BUTTONS),
        clicks: m.clicks === undefined ? 0 : integer(m, "clicks", 0, 3),
        modifiers: modifiers(m),
      };
    case "wheel":
      return {
        type: "wheel",
        x: number(m, "x", 0, MAX_COORDINATE),
        y: number(m, "y", 0, MAX_COORDINATE),
        dx: number(m, "dx", -MAX_COORDINATE, MAX_COORDINATE),
        dy: number(m, "dy", -MAX_COORDINATE, MAX_COORDINATE),
        modifiers: modifiers(m),
      };
    case "key":
      return {
        type: "key",
        event: oneOf(m, "event", ["down", "up"] as const),
        key: string(m, "key", MAX_KEY_CHARS),
        code: m.code === undefined ? "" : string(m, "code", MAX_KEY_CHARS, 0),
        text: m.text === undefined ? undefined : string(m, "text", 4),
        keyCode: m.keyCode === undefined ? 0 : integer(m, "keyCode", 0, 255),
        modifiers: modifiers(m),
      };
    case "text":
      return { type: "text", text: string(m, "text", MAX_TEXT_CHARS) };
    case "invoke": {
      const id = integer(m, "id", 0, Number.MAX_SAFE_INTEGER);
      const checked = validateWebMcpInvokeRequest(m.request);
      if (!checked.ok) {
        const first = checked.errors[0];
        throw new ViewerMessageError(`"request" is not a WebMcpInvokeRequest: ${first?.pointer || "/"} ${first?.message ?? ""}`.trim());
      }
      return { type: "invoke", id, request: checked.value };
    }
    default:
      throw new ViewerMessageError(`Unknown message type ${JSON.stringify(String(m.type).slice(0, 40))}.`);
  }
}

function string(m: Record<string, unknown>, field: string, maxChars: number, minChars = 1): string {
  const value = m[field];
  if (typeof value !== "string" || value.length < minChars || value.length > maxChars)
    throw new ViewerMessageError(`"${field}" must be a string of ${minChars} to ${maxChars} characters.`);
  return value;
}

function number(m: Record<string, unknown>, field: string, min: number, max: number): number {
  const value = m[field];
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max)
    throw new ViewerMessageError(`"${field}" must be a number from ${min} to ${max}.`);
  return value;
}

function integer(m: Record<string, unknown>, field: string, min: number, max: number): number {
  const value = number(m, field, min, max);
  if (!Number.isInteger(value)) throw new ViewerMessageError(`"${field}" must be an integer.`);
  return value;
}

// The DevTools protocol's bit field: Alt 1, Ctrl 2, Meta 4, Shift 8.
function modifiers(m: Record<string, unknown>): number {
  return m.modifiers === undefined ? 0 : integer(m, "modifiers", 0, 15);
}

function oneOf<T extends string>(m: Record<string, unknown>, field: string, values: readonly T[]): T {
  const value = m[field];
  if (typeof value !== "string" || !(values as readonly string[]).includes(value))
    throw new ViewerMessageError(`"${field}" must be one of ${values.join(", ")}.`);
  return value as T;
}
