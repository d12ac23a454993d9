import type { MouseButton, ViewerMessage } from "./viewer-messages.js";

/** A DevTools command the live view sends to the watched tab for a viewer's input. */
export interface InputCommand {
  method: "Input.dispatchMouseEvent" | "Input.dispatchKeyEvent" | "Input.insertText";
  params: Record<string, unknown>;
}

type InputMessage = Extract<ViewerMessage, { type: "mouse" | "wheel" | "key" | "text" }>;

const MOUSE_TYPES = { move: "mouseMoved", down: "mousePressed", up: "mouseReleased" } as const;
// `buttons` of a move: which button is held, so that a drag selects and drags.
const BUTTON_BITS: Record<MouseButton, number> = { none: 0, left: 1, right: 2, middle: 4 };

/**
 * The one DevTools command for an input message: built from its checked fields only, so a
 * viewer chooses among mouse, wheel, key and text events and nothing else.
 */
export function inputCommand(message: InputMessage): InputCommand {
  switch (message.type) {
    case "mouse":
      return {
        method: "Input.dispatchMouseEvent",
        params: {
          type: MOUSE_TYPES[message.event],
          x: message.x,
          y: message.y,
          button: message.button,
          buttons: message.event === "up" ? 0 : BUTTON_BITS[message.button],
          clickCount: message.clicks,
          modifiers: message.modifiers,
        },
      };
    case "wheel":
      return {
        method: "Input.dispatchMouseEvent",
        params: { type: "mouseWheel", x: message.x, y: message.y, deltaX: message.dx, deltaY: message.dy, modifiers: message.modifiers },
      };
    case "key": {
      // A key that types (a letter, Enter) is a keyDown with its text; one that does not
      // (an arrow, Backspace) a rawKeyDown, as Chromium's own input makes them.
      const type = message.event === "up" ? "keyUp" : message.text === undefined ? "rawKeyDown" : "keyDown";
      const params: Record<string, unknown> = {
        type,
        key: message.key,
        code: message.code,
        windowsVirtualKeyCode: message.keyCode,
        modifiers: message.modifiers,
      };
      if (type === "keyDown" && message.text !== undefined) {
        params.text = message.text;
        params.unmodifiedText = message.text;
      }
      return { method: "Input.dispatchKeyEvent", params };
    }
    case "text":
      return { method: "Input.insertText", params: { text: message.text } };
  }
}
